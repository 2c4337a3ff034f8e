"""A wall clock that steps back 10 minutes inside the last turn changes nothing a reader
sees (docs/adr/0011-file-order-within-a-source.md).

Real captures of both CLIs are replayed twice: once as recorded, once with every stamp
written after a moment inside the last turn 600 s earlier — in the transcript, the hook
spool and Claude Code's native status alike, since one machine has one clock. At every
moment after the step, while the turn is open and once it is closed, both worlds must
read the same, incrementally and cold; transcript-only and spool-only reads too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from stepped import SteppedWorld, observed, scenarios, world_factory

OPEN = ("working", "question")

CASES = [("claude-code", s) for s in scenarios("claude-code")] + [
    ("codex", s) for s in scenarios("codex")
]


def _step_points(world: SteppedWorld) -> list[float]:
    """Moments inside the last turn, between two pieces of evidence: after its first
    third and after its second."""
    inside = [t for t in world.times() if t > world.last_turn()]
    picks = {len(inside) // 3, (2 * len(inside)) // 3}
    return [(inside[i - 1] + inside[i]) / 2 for i in sorted(picks) if 0 < i < len(inside)]


@pytest.mark.parametrize(("provider", "scenario"), CASES)
def test_a_clock_step_inside_the_last_turn_reads_like_a_monotonic_clock(
    tmp_path: Path, provider: str, scenario: str
) -> None:
    make = world_factory(tmp_path)
    probe = make(provider, scenario)
    points = _step_points(probe)
    assert points, "the capture's last turn has evidence to step inside"
    seen: set[str] = set()
    for step_at in points:
        plain = make(provider, scenario)
        stepped = make(provider, scenario, step_at=step_at)
        for t in plain.times():
            expected = observed(plain.to(t).chat())
            got = observed(stepped.to(t).chat())
            assert got == expected, (t - step_at, got, expected)
            assert observed(stepped.live_only()) == observed(plain.live_only())
            if t > step_at:
                seen.add(expected[0] if expected[0] not in OPEN else "open")
        cold = type(stepped.adapter)()
        assert observed(stepped.chat(adapter=cold)) == observed(plain.chat())
        assert observed(stepped.chat(live=False)) == observed(plain.chat(live=False))
    assert seen & {"needs_input", "idle"}, "the turn was read closed after the step"


@pytest.mark.parametrize(("provider", "scenario"), CASES)
def test_a_transcript_stepping_back_alone_reads_like_a_monotonic_one(
    tmp_path: Path, provider: str, scenario: str
) -> None:
    make = world_factory(tmp_path)
    for step_at in _step_points(make(provider, scenario)):
        plain = make(provider, scenario)
        stepped = make(provider, scenario, step_at=step_at)
        for t in plain.times():
            assert observed(stepped.to(t).chat(live=False)) == observed(
                plain.to(t).chat(live=False)
            )
