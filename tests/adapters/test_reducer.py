"""The one reducer, table-driven from real event sequences (replayed captures of the
real Claude Code CLI), plus its algebraic properties."""

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay import claude_captures, claude_events

from agentspool.core import events as ev
from agentspool.core import reducer

# capture → (state, activity) after all of its evidence. Each row is what the real CLI
# showed at the end of the capture (see its notes.md).
FINAL = {
    "print-api-error": ("needs_input", "idle"),
    "print-bash-denied": ("needs_input", "idle"),
    "print-text": ("needs_input", "idle"),
    "tui-api-error": ("needs_input", "idle"),
    "tui-clear": ("needs_input", "idle"),
    "tui-compact": ("needs_input", "idle"),
    "tui-esc-streaming": ("needs_input", "idle"),
    "tui-esc-tool-running": ("needs_input", "idle"),
    "tui-permission-approve": ("needs_input", "idle"),
    "tui-permission-deny": ("needs_input", "idle"),
    "tui-plan-approve": ("needs_input", "idle"),
    "tui-question-answer": ("needs_input", "idle"),
    "tui-question-esc": ("needs_input", "idle"),
    "tui-queued-prompt": ("needs_input", "idle"),
}


def _project(state: reducer.RunState) -> tuple[object, ...]:
    """Everything but evidence times."""
    return (
        reducer.chat_state(state),
        state.activity,
        state.turn_id,
        state.pending,
        state.finished,
        state.background,
        state.task_state,
    )


@pytest.mark.parametrize("name", sorted(FINAL))
def test_real_sequences_end_where_the_cli_ended(name: str) -> None:
    state = reducer.fold(claude_events(name))
    assert (reducer.chat_state(state), state.activity) == FINAL[name]
    assert state.pending is None


def test_every_capture_is_in_the_table_or_checked_live() -> None:
    live_only = {
        "tui-sigkill-idle",
        "tui-subagent-permission",
        "tui-subagent-foreground",
        "tui-exit-command",
        "tui-idle-notification",
        "tui-multi-block",
        "tui-permission-no",
    }
    assert set(claude_captures()) <= set(FINAL) | live_only


def test_permission_prompt_opens_and_approval_closes_it() -> None:
    events = claude_events("tui-permission-approve")
    opened = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, ev.InputRequested) and e.source == "hook:PermissionRequest"
    )
    state = reducer.fold(events[: opened + 1])
    assert reducer.chat_state(state) == "needs_input"
    assert state.pending is not None and state.pending.tool_name == "Bash"
    assert state.pending.tool_use_id.startswith("toolu_")
    resolved = next(
        i
        for i, e in enumerate(events)
        if i > opened
        and isinstance(e, ev.ToolFinished)
        and e.tool_use_id == state.pending.tool_use_id
    )
    after = reducer.fold(events[: resolved + 1])
    assert (reducer.chat_state(after), after.pending) == ("working", None)


def test_question_dialog_carries_its_options() -> None:
    events = claude_events("tui-question-answer")
    first = next(i for i, e in enumerate(events) if isinstance(e, ev.InputRequested))
    state = reducer.fold(events[: first + 1])
    assert reducer.chat_state(state) == "question"
    assert state.pending is not None and state.pending.dialog is not None
    assert len(state.pending.dialog.options) >= 2


SEQUENCES = {name: claude_events(name) for name in FINAL}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(SEQUENCES)), data=st.data())
def test_folding_all_equals_resuming_from_any_prefix(name: str, data: st.DataObject) -> None:
    events = SEQUENCES[name]
    cut = data.draw(st.integers(0, len(events)))
    resumed = reducer.fold(events[cut:], reducer.fold(events[:cut]))
    assert resumed == reducer.fold(events)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(SEQUENCES)), data=st.data())
def test_stale_turn_evidence_in_any_order_changes_nothing(name: str, data: st.DataObject) -> None:
    events = SEQUENCES[name]
    final = reducer.fold(events)
    stale = [
        e
        for e in events
        if isinstance(e, ev.TurnStarted | ev.ToolStarted | ev.TurnStopped)
        and e.turn_id in final.finished
    ]
    replayed = data.draw(st.permutations(stale))
    after = reducer.fold(replayed, final)
    assert _project(after) == _project(final)


@pytest.mark.parametrize("name", sorted(FINAL))
def test_time_passing_changes_nothing(name: str) -> None:
    """No event means "time passed": shifting every evidence time moves nothing else."""
    events = SEQUENCES[name]
    later = [msgspec.structs.replace(e, at=e.at + 86_400) for e in events]
    assert _project(reducer.fold(later)) == _project(reducer.fold(events))


def test_a_new_transcript_identity_is_a_fresh_chat_and_old_evidence_is_stale() -> None:
    state = reducer.fold([ev.SessionStarted(epoch="a"), ev.TurnStarted(turn_id="t1", epoch="a")])
    state = reducer.step(state, ev.SessionStarted(epoch="b", how="clear"))
    assert (reducer.chat_state(state), state.turns) == ("idle", 0)
    stale = reducer.step(state, ev.TurnStarted(turn_id="t2", epoch="a"))
    assert stale == state


def test_each_turn_ends_exactly_once() -> None:
    state = reducer.fold([ev.TurnStarted(turn_id="t1"), ev.TurnStopped(turn_id="t1")])
    again = reducer.fold(
        [ev.TurnStopped(turn_id="t1"), ev.TurnStopped(turn_id=""), ev.TurnStarted(turn_id="t1")],
        state,
    )
    assert again == state


def test_a_pending_approval_is_not_the_end_of_a_turn() -> None:
    state = reducer.fold(
        [
            ev.TurnStarted(turn_id="t1"),
            ev.InputRequested(turn_id="t1", kind="approval", tool_use_id="x", tool_name="Bash"),
            ev.ToolFinished(turn_id="t1", tool_use_id="x"),
        ]
    )
    assert (reducer.chat_state(state), state.turn_id) == ("working", "t1")


def test_unspecific_wait_never_replaces_a_known_dialog() -> None:
    dialog = ev.InputRequested(
        turn_id="t1", kind="question", tool_use_id="q", tool_name="AskUserQuestion"
    )
    state = reducer.fold([ev.TurnStarted(turn_id="t1"), dialog, ev.InputRequested(kind="approval")])
    assert state.pending == dialog


def test_a_subagent_prompt_outlives_the_main_turn() -> None:
    state = reducer.fold(
        [
            ev.TurnStarted(turn_id="t1"),
            ev.TurnStopped(turn_id="t1", background=("agent-1",)),
            ev.InputRequested(
                kind="approval", tool_use_id="s", tool_name="Bash", agent_id="agent-1"
            ),
        ]
    )
    assert reducer.chat_state(state) == "needs_input"
    state = reducer.fold(
        [ev.ToolFinished(tool_use_id="s"), ev.BackgroundFinished(task_id="agent-1")], state
    )
    assert (reducer.chat_state(state), state.activity) == ("needs_input", "idle")


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ([("blocked", "")], ("active", "")),
        ([("blocked", "waiting for review")], ("blocked", "waiting for review")),
        ([("done", ""), ("done", "")], ("done", "")),
    ],
)
def test_task_state_moves_only_on_valid_declarations(
    declared: list[tuple[str, str]], expected: tuple[str, str]
) -> None:
    state = reducer.fold(
        [
            ev.TaskStateDeclared(task_state=s, reason=r)  # type: ignore[arg-type]
            for s, r in declared
        ]
    )
    assert (state.task_state, state.task_reason) == expected


def test_process_exit_never_means_done() -> None:
    state = reducer.fold([ev.TurnStarted(turn_id="t1"), ev.SessionEnded(reason="other")])
    assert state.task_state == "active"
