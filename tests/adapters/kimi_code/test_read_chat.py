"""Kimi Code's composed state at every checkpoint of one real TUI session
(tests/live/captures/kimi-code/tui-session/: plain, approve, Esc-deny, question form, Esc
mid-stream, /clear, /exit), replayed hook by hook and wire line by wire line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentspool.core.seam import Usage

EPS = 0.001
SCENARIO = "tui-session"
Make = Callable[[str], Any]


def test_the_first_prompt_is_working_and_its_turn_end_needs_input(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.wire_time("turn.prompt") + EPS)
    assert r.chat(r.wire(0)).state == "working"
    r.to(r.wire_time("turn.ended") + EPS)
    chat = r.chat(r.wire(0))
    assert chat.state == "needs_input"
    assert [m.text for m in chat.messages if m.visibility == "visible"] == [
        "hello there",
        "Hello back.",
    ]


def test_the_hooks_locate_the_wire_by_the_session_id_once_it_exists(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("SessionStart") + EPS)  # fired before the wire's first line
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == ""
    assert r.chat().state == "idle"
    r.to(r.wire_time("metadata") + EPS)
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == r.wire(0)


def test_an_approval_is_open_from_the_wire_until_it_is_resolved(replay: Make) -> None:
    r = replay(SCENARIO)
    asked = r.wire_time("interaction.request", kind="approval")
    r.to(asked + EPS)  # before the PermissionRequest hook ran: the wire alone
    chat = r.chat(r.wire(0))
    assert chat.state == "needs_input"
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_use_id == "call_2_0"
    assert chat.pending_approval.tool_name == "Bash"
    assert chat.pending_approval.tool_input == {"command": "echo hi > out.txt"}
    r.to(r.wire_time("interaction.resolved") + EPS)
    chat = r.chat(r.wire(0))
    assert (chat.state, chat.pending_approval) == ("working", None)


def test_a_rejection_closes_the_approval_and_the_turn_goes_on(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.wire_time("interaction.request", 1, kind="approval") + EPS)
    assert r.chat().pending_approval is not None
    r.to(r.wire_time("interaction.resolved", 1) + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("working", None)
    r.to(r.wire_time("turn.ended", 2) + EPS)
    chat = r.chat()
    assert chat.state == "needs_input"
    assert chat.messages[-1].text == "Not run, then."


def test_a_question_no_hook_reports_is_read_from_the_wire(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.wire_time("interaction.request", kind="question") + EPS)
    chat = r.chat()
    assert chat.state == "question"
    assert chat.pending_dialog is not None
    assert chat.pending_dialog.prompt == "Which color do you prefer?"
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    assert chat.pending_dialog.tool_use_id == "call_6_0"
    r.to(r.wire_time("interaction.resolved", 2) + EPS)
    assert r.chat().state == "working"


def test_esc_mid_stream_ends_the_turn_interrupted(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.wire_time("turn.prompt", 4) + EPS)
    assert r.chat().state == "working"
    r.to(r.wire_time("turn.ended", 4) + EPS)
    chat = r.chat()
    assert chat.state == "needs_input"
    assert "transcript:turn.ended" in [e.source for e in chat.evidence]


def test_clear_moves_to_the_new_session_with_seq_restarted(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("SessionEnd") + EPS)  # the old session ends after the new one began
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == r.wire(1)
    assert r.chat().state == "idle"
    r.to(r.hook_time("Stop", 4) + EPS)
    chat = r.chat()
    visible = [(m.seq, m.text) for m in chat.messages if m.visibility == "visible"]
    assert visible[0] == (1, "after clear") and visible[-1][1] == "After the clear."


def test_exit_ends_the_session(replay: Make) -> None:
    r = replay(SCENARIO).full()
    chat = r.chat()
    assert chat.state != "working" and chat.pending_approval is None
    assert "hook:SessionEnd" in [e.source for e in chat.evidence]


def test_usage_is_the_wires_usage_records_with_the_cache_folded_in(replay: Make) -> None:
    """Seven model calls of 56 fresh + 64 cached input and 12 output tokens, as the
    scripted server sent them and ``usage.record`` holds them (the call Esc cut short is
    recorded with zeros)."""
    r = replay(SCENARIO).full()
    first = r.chat(r.wire(0), live=False)
    assert first.usage == Usage(input_tokens=840, output_tokens=84, cached_input_tokens=448)
    assert sum((m.usage.input_tokens if m.usage else 0) for m in first.messages) == 840
    second = r.chat(r.wire(1), live=False)
    assert second.usage == Usage(input_tokens=120, output_tokens=12, cached_input_tokens=64)


def test_nothing_in_the_wire_or_the_hooks_is_unknown(replay: Make) -> None:
    r = replay(SCENARIO).full()
    chat = r.chat(r.wire(0))
    assert not chat.drift.transcript and not chat.drift.spool
