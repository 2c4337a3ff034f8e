"""``read_chat("copilot", …)`` against real Copilot CLI 1.0.102 captures, replayed at the
moments the TUI showed each state (each capture's ``screen-*.txt`` and ``notes.md``)."""

from __future__ import annotations

import json

from agentspool.adapters.copilot import Copilot
from agentspool.core.detail import assemble_session_detail
from tests.adapters.copilot.conftest import CAPTURES, ReplayFactory

EPS = 0.0005


def test_approval_opens_at_the_hook_and_closes_when_approved(replay: ReplayFactory) -> None:
    r = replay("tui-approve")
    # The prompt's hook names no turn; the transcript's user.message, ~50 ms later, opens it.
    r.to(r.event_time("user.message") + EPS)
    assert r.chat().state == "working"
    # The hook comes first: the transcript's permission.requested is written after it returns.
    r.to(r.hook_time("permissionRequest") + EPS)
    chat = r.chat()
    assert (chat.state, chat.pending_approval and chat.pending_approval.tool_name) == (
        "needs_input",
        "bash",
    )
    assert chat.pending_approval.tool_input == {"command": "echo hi > out.txt"}
    r.to(r.event_time("permission.requested") + EPS)
    chat = r.chat()
    assert chat.pending_approval is not None and chat.pending_approval.tool_use_id == "call_1_0"
    r.to(r.event_time("permission.completed") + EPS)
    assert (r.chat().state, r.chat().pending_approval) == ("working", None)
    r.to(r.hook_time("agentStop") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert [(m.kind, m.role) for m in chat.messages] == [
        ("text", "user"),
        ("tool_call", "assistant"),
        ("tool_result", "tool"),
        ("text", "assistant"),
    ]
    assert chat.messages[-1].text == "Done: wrote out.txt."


def test_esc_on_the_prompt_fires_no_hook_and_the_transcript_ends_the_turn(
    replay: ReplayFactory,
) -> None:
    r = replay("tui-deny-esc")
    r.to(r.event_time("permission.requested") + EPS)
    assert r.chat().state == "needs_input" and r.chat().pending_approval is not None
    r.to(r.event_time("abort") + EPS)
    chat = r.chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)
    assert chat.messages[-1].kind == "interrupt"


def test_a_question_is_the_form_until_answered(replay: ReplayFactory) -> None:
    r = replay("tui-question")
    r.to(r.event_time("tool.execution_start") + EPS)
    chat = r.chat()
    assert chat.state == "question" and chat.pending_dialog is not None
    assert chat.pending_dialog.prompt == "Which color do you prefer?"
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    r.to(r.hook_time("postToolUse") + EPS)
    assert (r.chat().state, r.chat().pending_dialog) == ("working", None)
    r.to(r.end())
    assert (r.chat().state, r.chat().activity) == ("needs_input", "idle")


def test_an_interrupt_fires_no_hook_and_abort_ends_the_turn(replay: ReplayFactory) -> None:
    r = replay("tui-interrupt")
    r.to(r.event_time("user.message") + 0.5)
    assert r.chat().state == "working"
    r.to(r.event_time("abort") + EPS)
    assert (r.chat().state, r.chat().activity) == ("needs_input", "idle")
    r.to(r.event_time("user.message", 1) + EPS)
    assert r.chat().state == "working"


def test_clear_moves_to_the_new_session_and_restarts_seq(replay: ReplayFactory) -> None:
    r = replay("tui-clear")
    first, second = r.sessions()
    r.to(r.hook_time("agentStop") + EPS)
    assert r.chat().transcript_id == first
    r.to(r.hook_time("userPromptSubmitted", 1) + 0.2)
    chat = r.chat()
    assert chat.transcript_id == second and chat.transcript_path == r.transcript(second)
    assert [m.seq for m in chat.messages][:1] == [1]
    assert chat.messages[0].text == "second prompt"


def test_print_mode_asks_and_is_denied_by_itself_no_wait_remains(replay: ReplayFactory) -> None:
    r = replay("print-denied")
    r.to(r.event_time("permission.completed") + EPS)
    chat = r.chat()
    assert chat.pending_approval is None and chat.state == "working"
    r.to(r.end())
    assert (r.chat().state, r.chat().activity) == ("needs_input", "idle")


def test_usage_per_session_equals_the_cli_own_sums() -> None:
    """``session.shutdown`` holds the CLI's own per-model sums of every model call."""
    adapter = Copilot()
    for path in sorted(CAPTURES.glob("*/session-state/*/events.jsonl")):
        shutdown = [
            json.loads(line)["data"]
            for line in path.read_text().splitlines()
            if '"session.shutdown"' in line
        ]
        own = shutdown[-1]["modelMetrics"]["mock-model"]["usage"]
        usage = adapter.read_chat("r", "", str(path)).usage
        assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (
            own["inputTokens"],
            own["cacheReadTokens"],
            own["outputTokens"],
        ), path


def test_every_capture_reads_without_drift_and_assembles() -> None:
    adapter = Copilot()
    for path in sorted(CAPTURES.glob("*/session-state/*/events.jsonl")):
        chat = adapter.read_chat("r", "", str(path))
        assert not chat.drift, (path, chat.drift.describe())
        assert chat.drift.cli_version == "1.0.102"
        assemble_session_detail(chat.messages)
