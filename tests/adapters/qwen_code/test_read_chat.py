"""Qwen Code's composed state at every checkpoint of one real TUI session
(tests/live/captures/qwen-code/tui-session/: plain, approve, Esc-deny, question, Esc
mid-stream, /clear, /quit), replayed hook by hook and line by line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentspool.core.seam import Usage

EPS = 0.001
SCENARIO = "tui-session"
Make = Callable[[str], Any]


def test_before_the_first_prompt_the_run_is_idle_with_no_transcript(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("SessionStart") + EPS)
    chat = r.chat()
    assert (chat.state, chat.transcript_path, chat.messages) == ("idle", "", [])


def test_a_prompt_is_working_and_its_stop_ends_the_turn(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("UserPromptSubmit") + EPS)
    assert r.chat().state == "working"
    r.to(r.hook_time("Stop") + EPS)
    chat = r.chat()
    assert chat.state == "needs_input" and chat.pending_approval is None
    assert [m.text for m in chat.messages] == ["hello there", "Hello back."]


def test_an_approval_is_open_until_the_approved_call_starts(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("Notification", notification_type="permission_prompt") + EPS)
    chat = r.chat()
    assert chat.state == "needs_input"
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_name == "run_shell_command"
    assert chat.pending_approval.tool_input["command"] == "echo hi > out.txt"
    # The hook names no call: the chat file's unanswered call does.
    assert chat.pending_approval.tool_use_id == "call_3_0"
    assert all(m.kind != "tool_result" for m in chat.messages[-1:])
    r.to(r.hook_time("PreToolUse") + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("working", None)
    r.to(r.hook_time("Stop", 1) + EPS)
    assert r.chat().state == "needs_input"


def test_esc_on_an_approval_closes_it_and_ends_the_turn(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("PermissionRequest", 1) + EPS)
    chat = r.chat()
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input["command"] == "echo no > denied.txt"
    batch = r.hook_time("PostToolBatch", 1)
    r.to(batch + EPS)
    assert r.chat().pending_approval is None
    idle = [t for t in r.hook_times("Notification", notification_type="idle_prompt") if t > batch]
    r.to(idle[0] + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("needs_input", None)
    denied = [m for m in chat.messages if m.tool_use_id == "call_7_0" and m.kind == "tool_result"]
    assert denied and denied[0].is_error


def test_a_question_goes_through_the_permission_hook_and_reads_as_a_question(
    replay: Make,
) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("PermissionRequest", 2) + EPS)
    chat = r.chat()
    assert chat.state == "question"
    assert chat.pending_approval is None
    assert chat.pending_dialog is not None
    assert chat.pending_dialog.prompt == "Which color do you prefer?"
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    assert chat.pending_dialog.tool_use_id == "call_10_0"
    r.to(r.hook_time("PreToolUse", 1) + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_dialog) == ("working", None)


def test_esc_mid_stream_fires_only_idle_prompt_and_that_ends_the_turn(replay: Make) -> None:
    r = replay(SCENARIO)
    prompt = r.hook_time("UserPromptSubmit", 6)  # "stream slowly"
    r.to(prompt + EPS)
    assert r.chat().state == "working"
    idle = [t for t in r.hook_times("Notification", notification_type="idle_prompt") if t > prompt]
    r.to(idle[0] - EPS)
    assert r.chat().state == "working"
    r.to(idle[0] + EPS)
    assert r.chat().state == "needs_input"


def test_clear_starts_a_fresh_conversation_with_seq_restarted(replay: Make) -> None:
    r = replay(SCENARIO)
    r.to(r.hook_time("SessionStart", source="clear") + EPS)
    chat = r.chat()
    assert (chat.state, chat.messages) == ("idle", [])
    r.to(r.hook_time("Stop", 3) + EPS)
    chat = r.chat()
    assert chat.transcript_path == r.chat_file(1)
    assert [(m.seq, m.text) for m in chat.messages] == [(1, "after clear"), (2, "After the clear.")]


def test_quit_ends_the_session(replay: Make) -> None:
    r = replay(SCENARIO).full()
    chat = r.chat()
    assert chat.state != "working" and chat.pending_approval is None


def test_the_file_alone_tells_the_turns_and_the_interrupted_answer(replay: Make) -> None:
    r = replay(SCENARIO).full()
    chat = r.chat(r.chat_file(0), live=False)
    kinds = [m.kind for m in chat.messages]
    assert kinds.count("tool_call") == 3 and kinds.count("tool_result") == 3
    assert chat.messages[-1].text == "line one\nline two\nli"
    assert chat.messages[-1].usage is None  # Esc cut it short: no usageMetadata
    assert chat.state == "needs_input"
    assert not chat.drift.transcript


def test_usage_is_the_answers_usage_metadata_with_cache_inside_input(replay: Make) -> None:
    """Six answers of 120 prompt tokens (64 of them cached) and 12 completion tokens, as
    the scripted server sent them and the file's ``usageMetadata`` records them; the
    answer Esc cut short carries none."""
    r = replay(SCENARIO).full()
    first = r.chat(r.chat_file(0), live=False)
    assert first.usage == Usage(input_tokens=720, output_tokens=72, cached_input_tokens=384)
    second = r.chat(r.chat_file(1), live=False)
    assert second.usage == Usage(input_tokens=120, output_tokens=12, cached_input_tokens=64)


def test_every_hook_payload_is_known(replay: Make) -> None:
    r = replay(SCENARIO).full()
    assert not r.chat().drift.spool
