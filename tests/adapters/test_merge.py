"""``EventMerger``: a channel's file order is its truth; clocks only interleave channels
(docs/adr/0011-file-order-within-a-source.md).

The events are real: each capture's hooks and transcript (or rollout) translated by the
adapters' own code into the ``spool`` and ``transcript`` channels. Clock steps are made
by shifting their times.
"""

from __future__ import annotations

import functools
import json
import os

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from replay import CAPTURES, claude_captures, claude_hook_records, claude_transcripts

from agentspool.adapters.claude_code import _signals as claude_signals
from agentspool.adapters.claude_code._transcript import TranscriptParser
from agentspool.adapters.codex import _signals as codex_signals
from agentspool.adapters.codex._rollout import RolloutParser, thread_id_from_path
from agentspool.core import reducer
from agentspool.core.events import Event
from agentspool.core.merge import SETTLE, TOLERANCE, ChannelClock, EventMerger
from agentspool.spool.read import SpoolRecord

Channels = dict[str, list[Event]]


@functools.cache
def _claude(name: str) -> Channels:
    translator = claude_signals.HookTranslator()
    spool: list[Event] = []
    for record in claude_hook_records(name):
        spool += translator.translate(record)
    parser = TranscriptParser()
    with open(claude_transcripts(name)[-1], "rb") as fh:
        for raw in fh:
            parser.feed_line(raw.rstrip(b"\n"))
    return {"transcript": parser.events, "spool": spool}


@functools.cache
def _codex(name: str) -> Channels:
    folder = CAPTURES / "codex" / name
    rollout = sorted(folder.glob("rollout-*.jsonl"))[0]
    parser = RolloutParser(thread_id_from_path(str(rollout)))
    for raw in rollout.read_bytes().splitlines():
        if raw.strip():
            parser.feed_line(raw)
    translator = codex_signals.HookTranslator()
    spool: list[Event] = []
    for offset, line in enumerate((folder / "hooks.jsonl").read_text().splitlines()):
        entry = json.loads(line)
        payload = json.dumps(entry["payload"]).encode()
        wall = int(entry["time"] * 1e9)
        record = SpoolRecord(entry["event"], wall, wall, 0, 0, -1, len(payload), payload, offset)
        spool += [event for agent, event in translator.translate(record) if not agent]
    return {"transcript": parser.events, "spool": spool}


def _codex_captures() -> list[str]:
    return sorted(
        p.name
        for p in (CAPTURES / "codex").iterdir()
        if (p / "hooks.jsonl").exists() and list(p.glob("rollout-*.jsonl"))
    )


CAPTURED = [("claude-code", n) for n in claude_captures()] + [
    ("codex", n) for n in _codex_captures()
]


def _channels(provider: str, name: str) -> Channels:
    return _claude(name) if provider == "claude-code" else _codex(name)


def _shift(events: list[Event], after: float, by: float) -> list[Event]:
    """The clock read ``by`` seconds earlier for everything stamped after ``after``."""
    return [msgspec.structs.replace(e, at=e.at - by) if e.at > after else e for e in events]


def _merged(channels: Channels) -> list[Event]:
    merger = EventMerger()
    for name, events in channels.items():
        merger.add(name, events)
    return merger.pending()


def _timeless(state: reducer.RunState) -> tuple[object, ...]:
    return (
        reducer.chat_state(state),
        state.activity,
        state.turn_id,
        state.finished,
        state.open_tools,
        state.background,
        state.pending and msgspec.structs.replace(state.pending, at=0.0),
        state.evidence and (state.evidence.source, state.evidence.detail),
    )


def _times(channels: Channels) -> list[float]:
    return sorted({e.at for events in channels.values() for e in events if e.at > 0})


def _inside(channels: Channels) -> list[float]:
    """Moments with evidence of every channel on both sides: a channel whose whole
    history lies after a step cannot tell it from the others' clocks (see the ADR)."""
    timed = [[e.at for e in events if e.at > 0] for events in channels.values()]
    if not all(timed):
        return []
    start, end = max(t[0] for t in timed), min(max(t) for t in timed)
    return [t for t in _times(channels) if start <= t < end]


captured = st.sampled_from(CAPTURED)


@settings(max_examples=60, deadline=None)
@given(capture=captured, data=st.data())
def test_any_step_back_of_any_channel_keeps_each_channel_in_file_order(
    capture: tuple[str, str], data: st.DataObject
) -> None:
    channels = dict(_channels(*capture))
    for name, events in channels.items():
        if not events or not data.draw(st.booleans(), label=f"{name} steps"):
            continue
        where = data.draw(st.integers(0, len(events) - 1), label=f"{name} after event")
        by = data.draw(st.floats(0.001, 86400.0), label=f"{name} step")
        channels[name] = _shift(events, events[where].at, by)
    merged = _merged(channels)
    for events in channels.values():
        own = {id(e) for e in events}
        assert [id(e) for e in merged if id(e) in own] == [id(e) for e in events]


@settings(max_examples=60, deadline=None)
@given(capture=captured, data=st.data())
def test_one_machine_stepping_back_folds_like_a_monotonic_clock(
    capture: tuple[str, str], data: st.DataObject
) -> None:
    channels = _channels(*capture)
    inside = _inside(channels)
    assume(inside)
    at = data.draw(st.sampled_from(inside), label="step after")
    by = data.draw(st.floats(60.0, 30 * 86400.0), label="step")
    stepped = {name: _shift(events, at, by) for name, events in channels.items()}
    assert _timeless(reducer.fold(_merged(stepped))) == _timeless(reducer.fold(_merged(channels)))


@settings(max_examples=60, deadline=None)
@given(capture=captured, data=st.data())
def test_reading_in_any_batches_folds_like_one_cold_read(
    capture: tuple[str, str], data: st.DataObject
) -> None:
    """Settling (the checkpoint) never changes the fold, clock step or not."""
    channels = _channels(*capture)
    times = _times(channels)
    inside = _inside(channels)
    assume(inside)
    if data.draw(st.booleans(), label="clock steps"):
        at = data.draw(st.sampled_from(inside), label="step after")
        channels = {name: _shift(events, at, 600.0) for name, events in channels.items()}
    # Stretch the capture so that settling has something to do.
    stretch = data.draw(st.floats(1.0, 30.0), label="stretch")
    first = times[0]
    channels = {
        name: [
            msgspec.structs.replace(e, at=first + (e.at - first) * stretch) if e.at > 0 else e
            for e in events
        ]
        for name, events in channels.items()
    }
    merger = EventMerger()
    cuts: dict[str, list[int]] = {}
    for name, events in channels.items():
        # Both channels are known from the first read (see the ADR's limits).
        first_timed = next(i for i, e in enumerate(events) if e.at > 0)
        drawn = data.draw(st.lists(st.integers(first_timed + 1, len(events)), max_size=8))
        cuts[name] = [*sorted(set(drawn) | {first_timed + 1}), len(events)]
    for batch in range(max(len(c) for c in cuts.values())):
        for name, events in channels.items():
            points = cuts[name]
            if batch < len(points):
                merger.add(name, events[points[batch - 1] if batch else 0 : points[batch]])
        merger.state()
    cold = EventMerger()
    for name, events in channels.items():
        cold.add(name, events)
    assert merger.state() == cold.state()


@pytest.mark.parametrize(("provider", "name"), [CAPTURED[0], CAPTURED[-1]])
def test_after_a_step_back_reads_keep_settling(provider: str, name: str) -> None:
    """A re-read folds what is recent, not the whole time since the step: the capture
    replayed as a long session (one copy every 30 s), the clock 10 min back halfway."""
    channels = _channels(provider, name)
    first = _times(channels)[0]
    merger = EventMerger()
    copies = 40
    for copy in range(copies):
        shift = copy * 30.0 - (600.0 if copy >= copies // 2 else 0.0)
        for channel, events in channels.items():
            merger.add(
                channel, [msgspec.structs.replace(e, at=e.at - first + 1e9 + shift) for e in events]
            )
        merger.state()
        per_copy = sum(len(events) for events in channels.values())
        assert len(merger.pending()) <= per_copy * (1 + SETTLE / 30.0 + 1)


def _retimed(times: list[float]) -> list[Event]:
    """Real events of one channel, stamped ``times``."""
    events = _claude("tui-permission-approve")["transcript"]
    return [msgspec.structs.replace(events[i % len(events)], at=t) for i, t in enumerate(times)]


def test_records_written_late_with_early_stamps_are_not_a_clock_step() -> None:
    """Claude Code stamps a ``/compact`` command when it is typed and writes it when the
    summary is done: a minute behind, then the channel carries on where it was."""
    base = 1.8e9
    clock = ChannelClock()
    keys: list[float] = []
    clock.place(_retimed([base, base + 1, base + 60, base + 0.5, base + 0.5, base + 60.2]), keys)
    assert clock.era == 0
    assert keys == [base, base + 1, base + 60, base + 60, base + 60, base + 60.2]


def test_a_step_back_starts_a_clock_era_after_everything_before_it() -> None:
    base = 1.8e9
    clock = ChannelClock()
    keys: list[float] = []
    clock.place(_retimed([base, base + 5, base - 600, base - 599.5]), keys)
    assert clock.era == 0  # not yet known to be a step: placed after what came before
    assert keys[2] > keys[1] and keys[3] >= keys[2]
    clock.place(_retimed([base - 597]), keys)
    assert clock.era == 1
    assert keys == sorted(keys)
    # Jitter within the tolerance is clamped, not a step.
    clock.place(_retimed([base - 597 - TOLERANCE / 2]), keys)
    assert clock.era == 1 and keys[-1] == keys[-2]


def test_a_snapshot_is_placed_in_the_era_its_stamp_belongs_to() -> None:
    """The native status file: written before the step (stale) or after it (fresh)."""
    base = 1.8e9
    clock = ChannelClock()
    keys: list[float] = []
    clock.place(_retimed([base, base + 5, base - 600, base - 590]), keys)
    before, after = clock.now(base + 4), clock.now(base - 589)
    assert before == base + 4 < keys[2]  # stale: among what the channel wrote before
    assert after > keys[-1]  # fresh: after everything
    assert clock.now(0.0) == 0.0


def test_a_snapshot_stamped_before_all_a_channel_wrote_is_after_a_step() -> None:
    """The clock stepped back, the status file was rewritten, no hook has fired since."""
    base = 1.8e9
    clock = ChannelClock()
    keys: list[float] = []
    clock.place(_retimed([base, base + 5]), keys)
    assert clock.now(base - 595) > keys[-1]
    assert clock.now(base - TOLERANCE / 2) == base - TOLERANCE / 2  # written just before


def test_untimed_events_stay_where_the_channel_is() -> None:
    clock = ChannelClock()
    keys: list[float] = []
    clock.place(_retimed([0.0, 1.8e9, 0.0, 1.8e9 + 1]), keys)
    assert keys == [0.0, 1.8e9, 1.8e9, 1.8e9 + 1]


def test_the_captures_are_there() -> None:
    assert len(CAPTURED) > 20
    assert all(os.path.isdir(CAPTURES / p / n) for p, n in CAPTURED)
