"""``read_chat("pi", …)`` against real Pi 0.73.1 captures, replayed at the moments the TUI
showed each state (each capture's ``screen-*.txt`` and ``notes.md``)."""

from __future__ import annotations

import json
import re

from agentspool.adapters.pi import Pi
from agentspool.core.detail import assemble_session_detail
from agentspool.core.seam import Usage
from tests.adapters.pi.conftest import CAPTURES, EPS, ReplayFactory


def test_the_confirm_dialog_is_the_approval_until_answered_yes(replay: ReplayFactory) -> None:
    r = replay("tui-approve")
    r.to(r.hook_time("session_start") + EPS)
    chat = r.chat()
    # Pi writes the session file at its first answer: the spool alone, no turn yet.
    assert (chat.state, chat.transcript_path, chat.messages) == ("idle", "", [])
    r.to(r.hook_time("agent_start") + EPS)
    assert r.chat().state == "working"
    r.to(r.hook_time("permission_asked") + EPS)
    chat = r.chat()
    assert chat.state == "needs_input" and chat.pending_approval is not None
    assert (chat.pending_approval.tool_name, chat.pending_approval.tool_input) == (
        "bash",
        {"command": "echo hi > out.txt"},
    )
    assert chat.pending_approval.tool_use_id == "call_1_0"
    # The file, there by now, shows the call as it shows a running one: toolUse, no result.
    assert [m.kind for m in chat.messages] == ["text", "tool_call"]
    r.to(r.hook_time("permission_replied") + EPS)
    assert (r.chat().state, r.chat().pending_approval) == ("working", None)
    r.to(r.hook_time("agent_end") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert [(m.kind, m.role) for m in chat.messages] == [
        ("text", "user"),
        ("tool_call", "assistant"),
        ("tool_result", "tool"),
        ("text", "assistant"),
    ]
    assert chat.messages[-1].text == "Done: wrote out.txt."


def test_no_blocks_the_call_and_the_turn_goes_on(replay: ReplayFactory) -> None:
    r = replay("tui-deny")
    r.to(r.hook_time("permission_asked") + EPS)
    assert r.chat().pending_approval is not None
    r.to(r.hook_time("permission_replied") + EPS)
    assert (r.chat().state, r.chat().pending_approval) == ("working", None)
    r.to(r.hook_time("agent_end") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    (result,) = [m for m in chat.messages if m.kind == "tool_result"]
    assert (result.text, result.is_error) == ("Blocked by user", True)


def test_esc_interrupts_the_turn(replay: ReplayFactory) -> None:
    r = replay("tui-interrupt")
    r.to(r.hook_time("agent_start") + EPS)
    assert r.chat().state == "working"
    r.to(r.hook_time("agent_end") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert [e.detail for e in chat.evidence] == ["interrupted"]
    assert chat.messages[-1].kind == "interrupt" and chat.messages[-1].text == "Operation aborted"
    r.to(r.hook_time("agent_start", 1) + EPS)
    assert r.chat().state == "working"


def test_new_moves_to_the_next_session_file_once_pi_writes_it(replay: ReplayFactory) -> None:
    r = replay("tui-new")
    first, second = r.names()
    r.to(r.hook_time("agent_end") + EPS)
    assert r.chat().transcript_path == r.path(first)
    r.to(r.hook_time("session_start", 1) + EPS)
    chat = r.chat()
    # The next file is named but not written yet: the new session's spool alone.
    assert (chat.state, chat.transcript_path, chat.messages) == ("idle", "", [])
    r.to(r.hook_time("agent_start", 1) + EPS)
    assert r.chat().state == "working"
    r.to(r.hook_time("agent_end", 1) + EPS)
    chat = r.chat()
    assert chat.transcript_path == r.path(second)
    assert [m.seq for m in chat.messages] == [1, 2]
    assert chat.messages[0].text == "second prompt"
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    # The first session, read on its own, is still its own conversation.
    old = r.adapter.read_chat("run-1", r.runtime_dir, r.path(first))
    assert [m.text for m in old.messages] == ["first prompt", "First answer."]


def test_quit_ends_the_session(replay: ReplayFactory) -> None:
    r = replay("tui-approve")
    r.to(r.end())
    chat = r.chat()
    assert (chat.activity, chat.pending_approval) == ("idle", None)
    assert [e.source for e in chat.evidence] == ["spool:session_shutdown"]


def test_print_mode_asks_nothing(replay: ReplayFactory) -> None:
    r = replay("print")
    events = [row["event"] for row in r.spool]
    assert "permission_asked" not in events and "tool_execution_end" in events
    r.to(r.end())
    chat = r.chat()
    assert chat.pending_approval is None
    assert [m.kind for m in chat.messages][-1] == "text"


def test_a_file_alone_derives_the_turn(replay: ReplayFactory) -> None:
    """No spool (an ended run, a session found in Pi's folder): the file's stop reasons."""
    r = replay("tui-interrupt")
    r.to(r.end())
    (name,) = r.names()
    chat = r.adapter.read_chat("run-1", "", r.path(name))
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert [m.kind for m in chat.messages] == ["text", "text", "interrupt", "text", "text"]


def _footer_usage(screen: str) -> Usage:
    """Pi's own session totals, as its footer shows them: ``↑`` input (cache left out),
    ``↓`` output, ``R`` cache read."""
    found = re.search(r"↑(\d+) ↓(\d+) R(\d+)", screen)
    assert found is not None, screen
    plain, output, read = (int(g) for g in found.groups())
    return Usage(input_tokens=plain + read, output_tokens=output, cached_input_tokens=read)


def test_usage_per_session_equals_the_footer_pi_shows() -> None:
    shown = {}
    for scenario in ("tui-approve", "tui-interrupt"):
        (path,) = (CAPTURES / scenario / "sessions").glob("*.jsonl")
        chat = Pi().read_chat("run-1", "", str(path))
        shown[scenario] = _footer_usage((CAPTURES / scenario / "screen-idle.txt").read_text())
        assert chat.usage == shown[scenario], scenario
    # Two model calls of 120 prompt tokens (64 cached) and 12 completion tokens; an
    # aborted one counts nothing (Pi records zero usage for it).
    assert shown["tui-approve"] == Usage(
        input_tokens=240, output_tokens=24, cached_input_tokens=128
    )
    assert shown["tui-interrupt"] == Usage(
        input_tokens=120, output_tokens=12, cached_input_tokens=64
    )


def test_every_capture_reads_without_drift_and_assembles() -> None:
    spooled = set()
    for path in sorted(CAPTURES.glob("*/sessions/*.jsonl")):
        chat = Pi().read_chat("run-1", "", str(path))
        assert chat.drift.transcript.unknown_types == {}, path
        assert chat.drift.transcript.unknown_fields == [], path
        assert chat.drift.transcript.corrupt == 0, path
        assemble_session_detail(chat.messages)
        assert chat.transcript_id and chat.transcript_id in path.name
    for path in CAPTURES.glob("*/spool.jsonl"):
        spooled |= {json.loads(line)["event"] for line in path.read_text().splitlines()}
    assert spooled == {
        "session_start",
        "agent_start",
        "agent_end",
        "tool_execution_start",
        "tool_execution_end",
        "permission_asked",
        "permission_replied",
        "session_shutdown",
    }
