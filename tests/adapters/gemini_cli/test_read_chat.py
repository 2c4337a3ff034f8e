"""``read_chat("gemini-cli", …)`` against real Gemini CLI 0.61.0 captures, replayed at
checkpoints (``Replay.to(t)``, conftest.py): the chat lines and hooks that existed at
that moment of the real run. The expected states are what the TUI showed then (each
capture's ``screen-*.txt``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from agentspool.core.detail import assemble_session_detail
from agentspool.core.seam import Chat
from agentspool.errors import TranscriptGoneError

EPS = 0.0005
ReplayFactory = Callable[[str], Any]


def shown(chat: Chat) -> list[tuple[str, str, str]]:
    return [
        (m.kind, m.role, m.text[:30])
        for m in chat.messages
        if m.visibility == "visible" and not m.is_meta
    ]


def idle_after_turn(chat: Chat, source: str) -> None:
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert chat.evidence[0].source == source


def test_before_any_prompt_the_session_is_idle(replay: ReplayFactory) -> None:
    r = replay("tui-approve")
    r.to(r.hook_time("SessionStart") + EPS)
    chat = r.chat()
    assert chat.transcript_path == r.chat_file()
    assert (chat.state, chat.activity) == ("idle", "idle")
    assert shown(chat) == []
    assert [(m.kind, m.visibility) for m in chat.messages] == [("text", "hidden")]


def test_approval_then_approved(replay: ReplayFactory) -> None:
    r = replay("tui-approve")
    r.to(r.hook_time("BeforeAgent") + EPS)
    assert (r.chat().state, r.chat().activity) == ("working", "working")

    r.to(r.hook_time("BeforeTool") + EPS)
    assert r.chat().state == "working"
    r.to(r.hook_time("Notification") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity) == ("needs_input", "needs_input")
    approval = chat.pending_approval
    assert approval is not None
    assert (approval.tool_name, approval.tool_input) == (
        "run_shell_command",
        {"command": "touch approved.txt"},
    )
    assert approval.tool_use_id == "tool-1"  # the hooks name no call: their own count
    assert chat.evidence[0].source == "hook:Notification"
    # The chat file alone cannot tell: its last record is the model's empty answer.
    assert r.chat(live=False).state == "working"

    r.to(r.hook_time("AfterTool") + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("working", None)

    r.before_exit()
    chat = r.chat()
    idle_after_turn(chat, "hook:AfterAgent")
    assert shown(chat) == [
        ("text", "user", "please touch approved.txt"),
        ("tool_call", "assistant", ""),
        ("tool_result", "tool", "<untrusted_context>\nOutput: (e"),
        ("thinking", "assistant", "Checking the result\nThe touch "),
        ("text", "assistant", "The file was created."),
    ]
    detail = assemble_session_detail(chat.messages)
    [tool] = detail.tools
    assert (tool.call.tool_name, tool.result is not None, tool.is_error) == (
        "run_shell_command",
        True,
        False,
    )
    assert tool.presentation == "shell"
    assert detail.orphan_results == []


@pytest.mark.parametrize("scenario", ["tui-deny", "tui-approval-esc"])
def test_no_and_esc_on_a_confirmation_fire_no_hook_the_chat_file_ends_the_wait(
    replay: ReplayFactory, scenario: str
) -> None:
    r = replay(scenario)
    r.to(r.hook_time("Notification") + EPS)
    assert r.chat().pending_approval is not None
    cancelled = r.record_time(lambda rec: rec.get("content") == "Request cancelled.")
    r.to(cancelled - EPS)  # the call is recorded cancelled a moment before
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("working", None)
    assert chat.evidence[0].source == "transcript:toolCalls(cancelled)"

    r.to(cancelled + EPS)
    idle_after_turn(r.chat(), "transcript:info(Request cancelled.)")
    assert r.hook_times("AfterTool") == r.hook_times("AfterAgent") == []

    r.before_exit()
    chat = r.chat()
    idle_after_turn(chat, "transcript:info(Request cancelled.)")
    # The CLI re-recorded its history and dropped the cancelled turn from it.
    dropped = [(m.kind, m.text[:24]) for m in chat.messages if m.visibility == "inactive"]
    assert dropped == [
        ("text", f"please touch {'denied' if scenario == 'tui-deny' else 'never'}.txt"),
        ("tool_call", ""),
        ("tool_result", "[Operation Cancelled] Re"),
        ("interrupt", "Request cancelled."),
    ]
    # The re-recorded prompt (context and prompt in one record) is the conversation now.
    assert [m[2] for m in shown(chat)] == [dropped[0][1]]


def test_a_question_opens_with_its_form_and_closes_answered_or_dismissed(
    replay: ReplayFactory,
) -> None:
    r = replay("tui-question")
    r.to(r.hook_time("BeforeTool") + EPS)  # ask_user's BeforeTool: the form opens
    chat = r.chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("question", "needs_input", None)
    dialog = chat.pending_dialog
    assert dialog is not None
    assert (dialog.kind, dialog.tool_use_id, dialog.prompt) == (
        "question",
        "tool-1",
        "Which color do you prefer?",
    )
    assert [(o.label, o.description) for o in dialog.options] == [("Red", "warm"), ("Blue", "cool")]
    r.to(r.hook_time("Notification") + EPS)
    assert r.chat().pending_dialog == dialog

    r.to(r.hook_time("AfterTool") + EPS)
    assert (r.chat().state, r.chat().pending_dialog) == ("working", None)
    r.to(r.hook_time("AfterAgent") + EPS)
    idle_after_turn(r.chat(), "hook:AfterAgent")

    r.to(r.hook_time("Notification", 1) + EPS)
    assert r.chat().state == "question"
    r.before_exit()
    chat = r.chat()
    idle_after_turn(chat, "transcript:info(Request cancelled.)")
    # The re-sync re-recorded the answered question as raw parts: still one call, one result.
    detail = assemble_session_detail(chat.messages)
    assert [(t.call.tool_name, t.result is not None) for t in detail.tools] == [("ask_user", True)]
    assert detail.tools[0].result is not None
    assert detail.tools[0].result.text == '{"answers":{"0":"Red"}}'
    assert detail.orphan_results == []


def test_esc_while_streaming_ends_the_turn_by_after_agent(replay: ReplayFactory) -> None:
    r = replay("tui-esc-streaming")
    r.to(r.hook_time("AfterAgent") - EPS)
    assert r.chat().state == "working"
    r.before_exit()
    chat = r.chat()
    idle_after_turn(chat, "hook:AfterAgent")
    assert shown(chat) == [("text", "user", "write a long answer")]  # no partial answer
    # The chat file alone never learns of it: nothing is written.
    assert r.chat(live=False).state == "working"


def test_clear_follows_the_new_file_and_an_empty_one_deleted_at_exit_is_not_gone(
    replay: ReplayFactory,
) -> None:
    r = replay("tui-clear")
    r.to(r.hook_time("AfterAgent") + EPS)
    first = r.chat()
    idle_after_turn(first, "hook:AfterAgent")
    r.to(r.hook_time("SessionStart", source="clear") + EPS)
    chat = r.chat()
    assert chat.transcript_path == r.chat_file(1) != first.transcript_path
    assert chat.transcript_id != first.transcript_id
    assert (chat.state, chat.activity, shown(chat)) == ("idle", "idle", [])

    r.to(r.hook_time("AfterAgent", 1) + EPS)
    chat = r.chat()
    idle_after_turn(chat, "hook:AfterAgent")
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    assert shown(chat) == [
        ("text", "user", "second prompt"),
        ("text", "assistant", "Second answer."),
    ]

    r.full()
    last = r.chat_file(2)
    assert r.chat().transcript_path == last
    os.remove(last)  # what the CLI did at exit: the session held no answer
    assert r.adapter.locate_transcript("run-1", r.runtime_dir) == ""
    chat = r.adapter.read_chat("run-1", r.runtime_dir, last)
    assert (chat.state, chat.activity, chat.messages) == ("idle", "idle", [])
    assert chat.evidence[0].source == "hook:SessionEnd"
    with pytest.raises(TranscriptGoneError):
        r.adapter.read_chat("run-1", "", last)  # transcript-only: no spool to say so
    with pytest.raises(TranscriptGoneError):
        r.adapter.read_chat("run-1", r.runtime_dir, r.path("never-written.jsonl"))


def test_an_api_error_ends_the_turn(replay: ReplayFactory) -> None:
    r = replay("tui-api-error")
    r.to(r.hook_time("AfterAgent") + EPS)
    chat = r.chat()
    idle_after_turn(chat, "hook:AfterAgent")
    assert [m.kind for m in chat.messages if m.is_error] == ["error"]
    transcript_only = r.chat(live=False)
    idle_after_turn(transcript_only, "transcript:error")
    assert transcript_only.evidence[0].detail == "failed"


def test_rewind_and_compress_leave_what_they_dropped_inactive(replay: ReplayFactory) -> None:
    r = replay("tui-rewind").before_exit()
    chat = r.chat()
    assert [
        (m.text, m.visibility) for m in chat.messages if m.kind == "text" and m.role != "system"
    ][1:] == [
        ("first prompt", "visible"),
        ("First answer.", "visible"),
        ("second prompt", "inactive"),
        ("Second answer.", "inactive"),
        ("third prompt", "visible"),
        ("Third answer.", "visible"),
    ]
    idle_after_turn(chat, "hook:AfterAgent")

    r = replay("tui-compress").full()
    chat = r.chat()
    summary = [m for m in chat.messages if m.kind == "summary"]
    assert [(m.text, m.visibility, m.is_meta) for m in summary] == [
        ("Summary: the user ran scripted tests.", "visible", True)
    ]
    assert shown(chat)[-2:] == [
        ("text", "user", "third prompt"),
        ("text", "assistant", "Third answer."),
    ]
    assert [m.visibility for m in chat.messages if m.text.startswith("line0")] == ["inactive"] * 2
    # Usage counts what was dropped too: it was paid for.
    assert chat.usage.input_tokens == 200000 * 2 + 120
    detail = assemble_session_detail(chat.messages)
    assert detail.usage == chat.usage
    assert [m.kind for m in detail.summaries] == ["summary"]


def test_print_mode_reads_idle_then_ended_transcript_only(replay: ReplayFactory) -> None:
    r = replay("print-text").full()
    idle_after_turn(r.chat(), "hook:SessionEnd")
    chat = r.chat(live=False)
    idle_after_turn(chat, "transcript:gemini")
    [answer] = [m for m in chat.messages if m.role == "assistant"]
    assert (answer.text, answer.model, answer.message_id) == (
        "Hello from print mode.",
        "gemini-3.8-flash",
        chat.transcript_id and answer.id,
    )
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.cached_input_tokens) == (120, 64)
    assert (answer.usage.output_tokens, answer.usage.reasoning_tokens) == (15, 3)
    assert answer.usage.cache_write_tokens == 0
    assert not chat.drift, chat.drift.describe()
    assert not r.chat().drift, r.chat().drift.describe()
