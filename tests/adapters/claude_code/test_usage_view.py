"""The usage view (ADR 0043) gives what the full parse gives ``usage``: every response's
usage as counted, the session's facts and span — on every real capture, and on the
shapes a capture does not hold (a response restated, the other side's response, lines
the decode refuses, a last line without its newline, a block boundary)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentspool.adapters.claude_code import _usage_view
from agentspool.adapters.claude_code._adapter import ClaudeCode
from agentspool.core.usage_first import full_usage_view

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "claude-code"
TRANSCRIPTS = sorted(CAPTURES.glob("*/transcript/**/*.jsonl"))


def _read_by_usage(path: Path, *, view: bool) -> tuple[Any, ...]:
    """What ``usage`` reads of the file: its rows without ``seq``, facts and span."""
    history = ClaudeCode()
    got = (
        history.usage_view(str(path))
        if view
        else full_usage_view(history.resume_transcript(str(path), 0, b""))
    )
    return [row[1:] for row in got.rows], got.facts, got.first, got.last


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.relative_to(CAPTURES).parts[0])
def test_the_view_of_a_capture_is_its_full_parse(path: Path) -> None:
    assert _read_by_usage(path, view=True) == _read_by_usage(path, view=False)


def _line(**fields: Any) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def _assistant(at: str, msg_id: str, tokens: int, out: int = 1, **extra: Any) -> bytes:
    usage = {"input_tokens": tokens, "output_tokens": out, "cache_read_input_tokens": 2 * out}
    message = {"id": msg_id, "model": "claude-x", "usage": usage, "content": []}
    return _line(type="assistant", timestamp=at, sessionId="s1", message=message, **extra)


@pytest.mark.parametrize("block", [300, 16], ids=["lines-across-reads", "lines-longer-than-a-read"])
def test_the_shapes_a_capture_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    text = {"role": "user", "content": "hello"}
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        _line(type="queue-operation", timestamp="2026-01-01T00:00:00Z")
        + _line(type="user", timestamp="2026-01-01T00:00:01Z", sessionId="s1", message=text)
        + _assistant("2026-01-01T00:00:02Z", "m1", 10)
        + _assistant("2026-01-01T00:00:03Z", "m1", 30)  # the response restated: 30 counts
        + _assistant("2026-01-01T00:00:04Z", "m1", 0, 0)  # no tokens: 30 stands
        + b"{not json\n"
        + _line(type="user", timestamp="2026-01-01T00:00:05Z", cwd="/w", message={})
        + _assistant("2026-01-01T00:00:06Z", "m2", 5, isSidechain=True)  # inline subagent
        + _line(type="system", subtype="turn_duration", timestamp="2026-01-01T00:00:09Z")
        + _line(type="ai-title", aiTitle="a title", timestamp="2026-01-01T00:00:10Z")
        + _assistant("2026-01-01T00:00:07Z", "m3", 7).rstrip(b"\n")  # no newline at the end
    )
    # The view reads into one buffer of at most BLOCK bytes: a line cut by a read waits
    # for the next; one longer than the buffer grows it.
    monkeypatch.setattr(_usage_view, "BLOCK", block)
    view = _read_by_usage(path, view=True)
    assert view == _read_by_usage(path, view=False)
    rows, facts, first, last = view
    assert [(r[2], r[3].input_tokens) for r in rows] == [("m1", 32), ("m2", 7), ("m3", 9)]
    assert (facts.cwd, facts.title, first, last) == (
        "/w",
        "a title",
        "2026-01-01T00:00:01Z",
        "2026-01-01T00:00:07Z",
    )


def test_a_subagent_file_counts_the_main_agents_response_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    side = {"isSidechain": True, "agentId": "a1"}
    path.write_bytes(
        _assistant("2026-01-01T00:00:01Z", "m1", 10, **side)
        + _assistant("2026-01-01T00:00:02Z", "m0", 99)  # the main agent's, seen from here
        + _assistant("2026-01-01T00:00:03Z", "m2", 20, **side)
    )
    view = _read_by_usage(path, view=True)
    assert view == _read_by_usage(path, view=False)
    assert [r[2] for r in view[0]] == ["m1", "m0", "m2"]
    assert (view[1].agent_id, view[1].parent_session_id) == ("a1", "s1")
