"""Notifications through apprise's real ``json://`` notifier to a receiver on 127.0.0.1:
one message per wait, what to do in it, a failing receiver retried and never holding
the next message back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from receivers import Receiver

from agentspool import (
    DialogOption,
    PendingApproval,
    PendingDialog,
    RunChange,
    RunEvent,
    RunSummary,
)
from agentspool.serve.notify import Notifier, message_for

NOW = 1_800_000_000.0


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.stop()


def run(state: str, *, since: float = NOW, activity: str = "unknown", **kw) -> RunSummary:
    return RunSummary(
        provider="claude-code",
        run_id="r1",
        state=state,  # type: ignore[arg-type]
        activity=activity,  # type: ignore[arg-type]
        task_state="active",
        since=since,
        cwd="/src/shop",
        title="fix the flaky test",
        **kw,
    )


def ev(after: RunSummary) -> RunEvent:
    """The event the hub publishes when a poll sees the run so (``changed``)."""
    return RunChange("claude-code:r1", after, after).event(NOW)


APPROVAL = PendingApproval(
    tool_name="Bash", tool_input={"command": "rm -rf build"}, tool_use_id="t1"
)


def test_one_message_per_wait_with_what_to_do(receiver: Receiver) -> None:
    notifier = Notifier([receiver.json_url], retries=())
    waiting = run("needs_input", pending_approval=APPROVAL)
    notifier.observe(ev(run("working")))
    notifier.observe(ev(waiting))
    notifier.observe(ev(waiting))  # the next poll: the same wait
    # A later hook about the same prompt moves its evidence time: still the same wait.
    notifier.observe(ev(run("needs_input", since=NOW + 3, pending_approval=APPROVAL)))
    notifier.observe(ev(run("working", since=NOW + 9)))
    question = PendingDialog(kind="question", prompt="Which database?", tool_use_id="q1")
    notifier.observe(ev(run("question", since=NOW + 20, pending_dialog=question)))
    notifier.close()
    bodies = receiver.wait_for_json(2)
    assert len(bodies) == 2
    first, second = bodies
    assert "approve Bash: rm -rf build" in first["title"]
    assert "project: /src/shop" in first["message"]
    assert "run: r1 (claude-code)" in first["message"]
    assert "answer: Which database?" in second["message"]


def test_a_wait_open_before_the_notifier_started_is_not_news(receiver: Receiver) -> None:
    notifier = Notifier([receiver.json_url], retries=(), clock=lambda: NOW + 100)
    waiting = run("needs_input", since=NOW, pending_approval=APPROVAL)
    notifier.observe(RunChange("claude-code:r1", None, waiting).event(NOW + 100))
    notifier.observe(ev(waiting))  # the next poll
    fresh = run(
        "question", since=NOW + 101, pending_dialog=PendingDialog(kind="question", prompt="Go?")
    )
    notifier.observe(RunChange("claude-code:r1", waiting, fresh).event(NOW + 102))
    notifier.close()
    assert [b["message"].splitlines()[0] for b in receiver.wait_for_json(1)] == ["answer: Go?"]


def test_only_the_kinds_asked_for(receiver: Receiver) -> None:
    notifier = Notifier([receiver.json_url], kinds=("approval",), retries=())
    notifier.observe(ev(run("needs_input")))  # turn ended: not asked for
    notifier.observe(ev(run("working", since=NOW + 1)))
    notifier.observe(ev(run("needs_input", since=NOW + 2, pending_approval=APPROVAL)))
    notifier.close()
    bodies = receiver.wait_for_json(1)
    assert [b["title"] for b in bodies] == ["claude-code waits on you: approve Bash: rm -rf build"]


def test_a_reminder_once_after_the_delay(receiver: Receiver) -> None:
    clock = [NOW]
    notifier = Notifier(
        [receiver.json_url], remind_after=600, clock=lambda: clock[0], retries=(), check_every=3600
    )
    waiting = run("needs_input", pending_approval=APPROVAL)
    notifier.observe(ev(waiting))
    notifier.remind()
    clock[0] += 601
    notifier.remind()
    notifier.remind()
    notifier.close()
    titles = [b["title"] for b in receiver.wait_for_json(2)]
    assert titles == [
        "claude-code waits on you: approve Bash: rm -rf build",
        "claude-code still waits on you: approve Bash: rm -rf build",
    ]


QUESTION = PendingDialog(kind="question", prompt="Which color?", tool_use_id="q1")


def test_a_wait_that_does_not_say_what_it_is_waits_for_the_evidence_that_does(
    receiver: Receiver,
) -> None:
    """Claude Code's status file says "waiting" before the hook naming the question is
    read: the notifier holds the wait that names nothing, and the question replaces it —
    one message, naming it (a flake of tests/live/test_notify_live.py under load)."""
    notifier = Notifier([receiver.json_url], retries=(), grace=3600)
    notifier.observe(ev(run("question")))  # the status file alone
    notifier.observe(ev(run("question", pending_dialog=QUESTION)))  # the hook, read next
    # An approval known only as "a prompt is open", then named by its PermissionRequest.
    notifier.observe(ev(run("working", since=NOW + 5)))
    notifier.observe(ev(run("needs_input", since=NOW + 6, activity="needs_input")))
    notifier.observe(ev(run("needs_input", since=NOW + 6, pending_approval=APPROVAL)))
    # A wait that names nothing and ends before anything names it: not news.
    notifier.observe(ev(run("question", since=NOW + 9)))
    notifier.observe(ev(run("working", since=NOW + 10)))
    notifier.close()
    assert [b["message"].splitlines()[0] for b in receiver.wait_for_json(2)] == [
        "answer: Which color?",
        "approve Bash: rm -rf build",
    ]
    assert len(receiver.posts) == 2


def test_a_wait_that_never_says_what_it_is_is_sent_after_the_grace(receiver: Receiver) -> None:
    notifier = Notifier([receiver.json_url], retries=(), grace=0.05)
    notifier.observe(ev(run("question")))
    assert [b["message"].splitlines()[0] for b in receiver.wait_for_json(1)] == [
        "answer a question"
    ]
    held = Notifier([receiver.json_url], retries=(), grace=3600)
    held.observe(ev(run("question", since=NOW + 1)))
    held.close()  # what is held is sent when the notifier stops
    assert len(receiver.wait_for_json(2)) == 2


def test_a_failing_receiver_is_retried_and_does_not_stop_the_next_message() -> None:
    flaky = Receiver(refuse=["500"])
    try:
        notifier = Notifier([flaky.json_url], retries=(0.05,))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.observe(ev(run("working", since=NOW + 1)))
        notifier.observe(ev(run("needs_input", since=NOW + 2)))
        notifier.close()
        bodies = flaky.wait_for_json(2)
        assert flaky.seen == 3, "the refused message was not sent again"
        assert [b["message"].splitlines()[0] for b in bodies] == [
            "approve Bash: rm -rf build",
            "your turn",
        ]
        assert (notifier.sent, notifier.failed) == (2, 0)
    finally:
        flaky.stop()


def test_a_receiver_that_is_down_holds_back_no_other_url(receiver: Receiver) -> None:
    down = Receiver(refuse=["500"] * 100)
    try:
        notifier = Notifier([down.json_url, receiver.json_url], retries=(0.5, 0.5))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.observe(ev(run("working", since=NOW + 1)))
        notifier.observe(ev(run("needs_input", since=NOW + 2)))
        bodies = receiver.wait_for_json(2, timeout=0.9)  # before the first retry's pause is over
        assert [b["message"].splitlines()[0] for b in bodies] == [
            "approve Bash: rm -rf build",
            "your turn",
        ]
        notifier.close()
        assert len(receiver.posts) == 2, "a retry went to the URL that had taken it"
        assert down.seen == 6
    finally:
        down.stop()


def test_a_receiver_that_never_answers_is_given_up_on() -> None:
    down = Receiver(refuse=["500"] * 100)
    try:
        notifier = Notifier([down.json_url], retries=(0.01, 0.01))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.close()
        assert down.seen == 3
        assert (notifier.sent, notifier.failed) == (0, 1)
    finally:
        down.stop()


def test_the_message_says_what_to_do_in_the_words_every_view_uses() -> None:
    """The phrase is ``state_phrase``'s (``ls``, ``watch`` and the page say the same);
    the body adds what a phone's reader needs to decide: the options, or the plan."""
    turn = message_for(run("needs_input"))
    assert turn.title == "claude-code waits on you: your turn"
    assert turn.body.splitlines()[0] == "your turn"
    plan = PendingDialog(kind="plan_approval", prompt="1. write\n2. test")
    planned = message_for(run("question", pending_dialog=plan))
    assert planned.body.splitlines()[:2] == ["approve the plan", "plan: 1. write 2. test"]
    options = [DialogOption(label="Red"), DialogOption(label="Blue")]
    asked = message_for(
        run(
            "question",
            pending_dialog=PendingDialog(kind="question", prompt="Pick", options=options),
        )
    )
    assert asked.body.splitlines()[:2] == ["answer: Pick", "options: Red, Blue"]
    bare = message_for(
        run("question", pending_dialog=PendingDialog(kind="question", prompt="Pick"))
    )
    assert bare.body.splitlines()[:2] == ["answer: Pick", "project: /src/shop"]
    long = PendingApproval(tool_name="Bash", tool_input={"command": "x" * 1000}, tool_use_id="t")
    assert len(message_for(run("needs_input", pending_approval=long)).body.splitlines()[0]) == 300
