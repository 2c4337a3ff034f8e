"""``state_phrase`` and ``task_phrase``: the one place a state becomes words a person
reads (issue 21). The wire word stays; the phrase tells an approval from a turn's end."""

from __future__ import annotations

import agentspool
from agentspool import Chat, DialogOption, PendingApproval, PendingDialog, RunSummary


def _run(**fields) -> RunSummary:
    base = {"provider": "codex", "run_id": "r", "activity": "idle", "task_state": "active"}
    return RunSummary(**{**base, **fields})


def test_an_open_permission_prompt_says_what_to_approve() -> None:
    approval = PendingApproval(tool_name="Bash", tool_input={"command": "make\n deploy"})
    run = _run(state="needs_input", activity="needs_input", pending_approval=approval)
    assert agentspool.state_phrase(run) == "approve Bash: make deploy"
    edit = PendingApproval(tool_name="Edit", tool_input={"file_path": "a.py", "old": 1})
    assert agentspool.state_phrase(_run(state="needs_input", pending_approval=edit)) == (
        "approve Edit: a.py"
    )
    bare = PendingApproval(tool_name="WebFetch")
    assert agentspool.state_phrase(_run(state="needs_input", pending_approval=bare)) == (
        "approve WebFetch"
    )
    # a prompt is open but no evidence says which call (the activity says it waits)
    assert agentspool.state_phrase(Chat(state="needs_input", activity="needs_input")) == (
        "approve a tool call"
    )


def test_the_end_of_a_turn_is_your_turn_not_an_approval() -> None:
    assert agentspool.state_phrase(_run(state="needs_input")) == "your turn"
    assert agentspool.state_phrase(_run(state="idle", activity="idle")) == "your turn"


def test_a_question_says_what_to_answer() -> None:
    dialog = PendingDialog(
        kind="question", prompt="Which DB?\x1b[2J", options=[DialogOption(label="SQLite")]
    )
    # The escape stays in the phrase (data: JSON and the page escape it their own way);
    # the terminal renderer shows it as ^[ (tests/test_hostile_cli.py).
    assert agentspool.state_phrase(_run(state="question", pending_dialog=dialog)) == (
        "answer: Which DB?\x1b[2J"
    )
    plan = PendingDialog(kind="plan_approval", prompt="1. do it")
    assert agentspool.state_phrase(_run(state="needs_input", pending_dialog=plan)) == (
        "approve the plan"
    )
    assert agentspool.state_phrase(_run(state="question")) == "answer a question"


def test_working_ended_and_no_evidence() -> None:
    assert agentspool.state_phrase(_run(state="working", activity="working")) == "working"
    assert agentspool.state_phrase(_run(state="ended")) == "ended"
    assert agentspool.state_phrase(Chat()) == "unknown"  # nothing proves any state


def test_history_never_says_a_live_word() -> None:
    said = {
        agentspool.state_phrase(_run(state=state, activity=activity), history=True)
        for state, activity in (
            ("needs_input", "idle"),
            ("working", "working"),
            ("idle", "idle"),
            ("ended", "idle"),
        )
    }
    assert said == {"last turn ended", "last turn has no recorded end", "no turn recorded", "ended"}
    approval = PendingApproval(tool_name="Bash", tool_input={"command": "ls"})
    run = _run(state="needs_input", activity="needs_input", pending_approval=approval)
    assert agentspool.state_phrase(run, history=True) == "stopped at: approve Bash: ls"


def test_task_phrase() -> None:
    assert agentspool.task_phrase("active", declared=False) == "never declared"
    assert agentspool.task_phrase("blocked", "needs\nthe key") == "blocked: needs the key"
    assert agentspool.task_phrase("done") == "done"
