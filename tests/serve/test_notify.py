"""Notifications through apprise's real ``json://`` notifier to a receiver on 127.0.0.1:
one message per wait, what to do in it, a failing receiver retried and never holding
the next message back."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentspool import PendingApproval, PendingDialog, RunChange, RunEvent, RunSummary
from agentspool.serve.notify import Notifier, what_to_do

NOW = 1_800_000_000.0


class Receiver:
    """A webhook on 127.0.0.1 that records what it is sent; the first ``fail`` posts get
    a 500."""

    def __init__(self, fail: int = 0) -> None:
        self.bodies: list[dict] = []
        self.fail = fail
        self.posts = 0
        self.got = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.got:
                    receiver.posts += 1
                    refuse = receiver.posts <= receiver.fail
                    if not refuse:
                        receiver.bodies.append(json.loads(body))
                    receiver.got.notify_all()
                self.send_response(500 if refuse else 200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 30.0) -> list[dict]:
        with self.got:
            self.got.wait_for(lambda: len(self.bodies) >= count, timeout)
        return list(self.bodies)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.stop()


def run(state: str, *, since: float = NOW, **kw) -> RunSummary:
    return RunSummary(
        provider="claude-code",
        run_id="r1",
        state=state,  # type: ignore[arg-type]
        activity="unknown",
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
    notifier = Notifier([receiver.url], retries=())
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
    bodies = receiver.wait_for(2)
    assert len(bodies) == 2
    first, second = bodies
    assert "approve Bash: rm -rf build" in first["title"]
    assert "project: /src/shop" in first["message"]
    assert "run: r1 (claude-code)" in first["message"]
    assert "answer: Which database?" in second["message"]


def test_a_wait_open_before_the_notifier_started_is_not_news(receiver: Receiver) -> None:
    notifier = Notifier([receiver.url], retries=(), clock=lambda: NOW + 100)
    waiting = run("needs_input", since=NOW, pending_approval=APPROVAL)
    notifier.observe(RunChange("claude-code:r1", None, waiting).event(NOW + 100))
    notifier.observe(ev(waiting))  # the next poll
    fresh = run(
        "question", since=NOW + 101, pending_dialog=PendingDialog(kind="question", prompt="Go?")
    )
    notifier.observe(RunChange("claude-code:r1", waiting, fresh).event(NOW + 102))
    notifier.close()
    assert [b["message"].splitlines()[0] for b in receiver.wait_for(1)] == ["answer: Go?"]


def test_only_the_kinds_asked_for(receiver: Receiver) -> None:
    notifier = Notifier([receiver.url], kinds=("approval",), retries=())
    notifier.observe(ev(run("needs_input")))  # turn ended: not asked for
    notifier.observe(ev(run("working", since=NOW + 1)))
    notifier.observe(ev(run("needs_input", since=NOW + 2, pending_approval=APPROVAL)))
    notifier.close()
    bodies = receiver.wait_for(1)
    assert [b["title"] for b in bodies] == ["claude-code waits on you: approve Bash: rm -rf build"]


def test_a_reminder_once_after_the_delay(receiver: Receiver) -> None:
    clock = [NOW]
    notifier = Notifier(
        [receiver.url], remind_after=600, clock=lambda: clock[0], retries=(), check_every=3600
    )
    waiting = run("needs_input", pending_approval=APPROVAL)
    notifier.observe(ev(waiting))
    notifier.remind()
    clock[0] += 601
    notifier.remind()
    notifier.remind()
    notifier.close()
    titles = [b["title"] for b in receiver.wait_for(2)]
    assert titles == [
        "claude-code waits on you: approve Bash: rm -rf build",
        "claude-code still waits on you: approve Bash: rm -rf build",
    ]


def test_a_failing_receiver_is_retried_and_does_not_stop_the_next_message() -> None:
    flaky = Receiver(fail=1)
    try:
        notifier = Notifier([flaky.url], retries=(0.05,))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.observe(ev(run("working", since=NOW + 1)))
        notifier.observe(ev(run("needs_input", since=NOW + 2)))
        notifier.close()
        bodies = flaky.wait_for(2)
        assert flaky.posts == 3, "the refused message was not sent again"
        assert [b["message"].splitlines()[0] for b in bodies] == [
            "approve Bash: rm -rf build",
            "your turn",
        ]
        assert (notifier.sent, notifier.failed) == (2, 0)
    finally:
        flaky.stop()


def test_a_receiver_that_is_down_holds_back_no_other_url(receiver: Receiver) -> None:
    down = Receiver(fail=100)
    try:
        notifier = Notifier([down.url, receiver.url], retries=(0.5, 0.5))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.observe(ev(run("working", since=NOW + 1)))
        notifier.observe(ev(run("needs_input", since=NOW + 2)))
        bodies = receiver.wait_for(2, timeout=0.9)  # before the first retry's pause is over
        assert [b["message"].splitlines()[0] for b in bodies] == [
            "approve Bash: rm -rf build",
            "your turn",
        ]
        notifier.close()
        assert len(receiver.bodies) == 2, "a retry went to the URL that had taken it"
        assert down.posts == 6
    finally:
        down.stop()


def test_a_receiver_that_never_answers_is_given_up_on() -> None:
    down = Receiver(fail=100)
    try:
        notifier = Notifier([down.url], retries=(0.01, 0.01))
        notifier.observe(ev(run("needs_input", pending_approval=APPROVAL)))
        notifier.close()
        assert down.posts == 3
        assert (notifier.sent, notifier.failed) == (0, 1)
    finally:
        down.stop()


def test_what_to_do_in_words() -> None:
    assert what_to_do(run("needs_input")) == "your turn"
    plan = PendingDialog(kind="plan_approval", prompt="1. write\n2. test")
    assert what_to_do(run("question", pending_dialog=plan)) == "review the plan: 1. write 2. test"
    options = PendingDialog(kind="question", prompt="Pick", options=[])
    assert what_to_do(run("question", pending_dialog=options)) == "answer: Pick"
