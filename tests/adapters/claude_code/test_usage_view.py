"""The usage view (ADR 0043) gives what the full parse gives ``usage``: every response's
usage as counted, the session's facts and span — on every real capture, and on the
shapes a capture does not hold (a response restated, the other side's response, lines
the decode refuses, a last line without its newline, a block boundary) — read whole, or
scanned (ADR 0057): the head, the lines with usage or a title, the tail; a scan that
cannot prove its answer reads the file whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentspool.adapters.claude_code import _usage_view
from agentspool.adapters.claude_code._adapter import ClaudeCode
from agentspool.core.usage_first import full_usage_view

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "claude-code"
TRANSCRIPTS = sorted(CAPTURES.glob("*/transcript/**/*.jsonl"))


def _read_by_usage(path: Path, *, view: bool) -> tuple[Any, ...]:
    """What ``usage`` reads of the file: its rows without ``seq``, facts and span. The
    view reads no title (ADR 0063): the full parse's is left out."""
    history = ClaudeCode()
    got = (
        history.usage_view(str(path))
        if view
        else full_usage_view(history.resume_transcript(str(path), 0, b""))
    )
    facts = msgspec.structs.replace(got.facts, title="")
    return [msgspec.structs.astuple(row)[1:] for row in got.rows], facts, got.first, got.last


def _titles(path: Path) -> tuple[str, str]:
    """The CLI's title as the view says it and as the full parse does."""
    history = ClaudeCode()
    full = full_usage_view(history.resume_transcript(str(path), 0, b""))
    return history.usage_view(str(path)).facts.title, full.facts.title


@pytest.fixture(params=["whole", "scanned"])
def scan(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether files of every size are scanned; the list says, per file read, whether a
    scan proved its answer (``False``: it gave up, the file was read whole)."""
    proved: list[bool] = []
    if request.param == "scanned":
        monkeypatch.setattr(_usage_view, "SCAN_FROM", 0)
        scanned = _usage_view._scanned

        def spied(fh: Any, size: int) -> Any:
            reader = scanned(fh, size)
            proved.append(reader is not None)
            return reader

        monkeypatch.setattr(_usage_view, "_scanned", spied)
    return proved


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.relative_to(CAPTURES).parts[0])
def test_the_view_of_a_capture_is_its_full_parse(path: Path, scan: list[bool]) -> None:
    assert _read_by_usage(path, view=True) == _read_by_usage(path, view=False)


def test_most_captures_scan(scan: list[bool]) -> None:
    """The scan proves itself on the CLI's own files (those too short to say a cwd, a
    session and a record in their first lines read whole)."""
    for path in TRANSCRIPTS:
        _read_by_usage(path, view=True)
    assert not scan or sum(scan) >= len(scan) // 2


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
    assert (facts.cwd, first, last) == ("/w", "2026-01-01T00:00:01Z", "2026-01-01T00:00:07Z")
    assert _titles(path) == ("", "a title")  # written with the records (ADR 0063)


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


def _scanned_session(middle: bytes, tail_version: bool = True) -> bytes:
    """A head that settles, ``middle``, and a tail of records longer than a scan's
    (with a version or not)."""
    head = _line(
        type="user",
        timestamp="2026-01-01T00:00:01Z",
        sessionId="s1",
        cwd="/w",
        message={"role": "user", "content": "hello"},
    )
    version = {"version": "2.1.9"} if tail_version else {}
    tail = b"".join(
        _assistant(f"2026-01-01T00:01:{n:02}Z", f"t{n}", 1, **version)
        for n in range(_usage_view.TAIL_LINES * 20)
    )
    return _line(type="queue-operation", timestamp="2026-01-01T00:00:00Z") + head + middle + tail


def _middle_shapes() -> bytes:
    text = {"role": "user", "content": 'a "usage": quoted in text is no key'}
    progress = {"type": "progress", "data": {"message": {"message": {"usage": {"x": 1}}}}}
    return (
        _assistant("2026-01-01T00:00:02Z", "m1", 10)
        + _line(type="user", timestamp="2026-01-01T00:00:03Z", sessionId="s1", message=text)
        + _assistant("2026-01-01T00:00:04Z", "m1", 10)  # the response's usage, repeated
        + _assistant("2026-01-01T00:00:05Z", "m1", 30)  # restated: 30 counts
        + _line(**progress, timestamp="2026-01-01T00:00:06Z")  # nested usage: nothing
        + _assistant("2026-01-01T00:00:07Z", "m2", 5, isSidechain=True)  # inline subagent
        + _assistant("2025-12-31T23:00:00Z", "m3", 7)  # a clock stepped back: no end
        + _line(type="custom-title", customTitle="mine", timestamp="2026-01-01T00:00:09Z")
        + _line(type="ai-title", aiTitle="theirs", timestamp="2026-01-01T00:00:10Z")
    )


def test_a_scan_reads_the_middle_by_its_usage_alone(tmp_path: Path, scan: list[bool]) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_scanned_session(_middle_shapes()))
    view = _read_by_usage(path, view=True)
    assert view == _read_by_usage(path, view=False)
    assert scan in ([], [True])
    rows, facts, first, last = view
    assert [(r[2], r[3].input_tokens) for r in rows[:3]] == [("m1", 32), ("m2", 7), ("m3", 9)]
    assert len(rows) == 3 + _usage_view.TAIL_LINES * 20
    assert (facts.cwd, facts.cli_version) == ("/w", "2.1.9")
    assert _titles(path) == ("", "mine")  # no second pass over the bytes for it (ADR 0063)
    assert (first, last) == ("2026-01-01T00:00:01Z", rows[-1][0])


@pytest.mark.parametrize(
    "case",
    ["a tail without a version", "a usage line the view refuses", "a head that never settles"],
)
def test_a_scan_that_cannot_prove_its_answer_reads_the_file_whole(
    tmp_path: Path, scan: list[bool], case: str
) -> None:
    path = tmp_path / "s1.jsonl"
    if case == "a tail without a version":
        data = _scanned_session(_middle_shapes(), tail_version=False)
    elif case == "a usage line the view refuses":  # whole, it is salvaged
        refused = _line(type="assistant", timestamp="2026-01-01T00:00:08Z", message={"usage": 1})
        data = _scanned_session(_middle_shapes() + refused)
    else:  # no cwd anywhere
        data = b"".join(_assistant(f"2026-01-01T00:00:0{n}Z", f"m{n}", 1) for n in range(9))
    path.write_bytes(data)
    assert _read_by_usage(path, view=True) == _read_by_usage(path, view=False)
    assert scan in ([], [False])
