"""Tier 2: the real ``copilot`` 1.0.102 armed by ``agentspool.setup("copilot", …)``.

Every test starts the real TUI under tmux with ``spawn.args`` (``--plugin-dir`` of the
run's own hooks) against the scripted chat-completions server (``harness/copilot.py``:
private ``COPILOT_HOME``, offline, no login), waits until the CLI *shows* a state on its
screen, then requires ``read_chat`` to compose that state within 1 s: the permission
dialog, approved, denied with Esc (no hook fires), the question form, ``/clear`` (the
new session, ``seq`` from 1), ``/exit`` (ended), and ``-p`` (asked and denied by itself:
never a wait).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import chat_server as cs
from harness import copilot, tmux
from harness.checkpoints import is_idle_after_turn

import agentspool
from agentspool import Chat, read_chat

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not copilot.available() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

SHOWN = 60.0  # how long the CLI may take to show a state on a loaded machine
WITHIN = 1.0  # how soon after that read_chat must compose it
BASH = {"command": "echo hi > out.txt", "description": "Run a mock command"}
ASK = {
    "message": "Which color do you prefer?",
    "requestedSchema": {"properties": {"color": {"type": "string", "enum": ["Red", "Blue"]}}},
}


class Run:
    def __init__(self, root: Path, replies: list[cs.Reply]) -> None:
        self.srv = cs.ChatServer(replies).start()
        self.home = copilot.make_home(self.srv.base_url, root / "c")
        self.runtime = root / "rt"
        self.runtime.mkdir(mode=0o700)
        self.spawn = agentspool.setup("copilot", "run-1", str(self.runtime))
        self.pane: tmux.Pane | None = None
        self.last: Chat | None = None

    def start(self) -> tmux.Pane:
        self.pane = copilot.start_tui(
            self.home, extra_args=self.spawn.args, extra_env=self.spawn.env
        )
        return self.pane

    def read(self, *, ended: bool = False) -> Chat:
        self.last = read_chat("copilot", "run-1", str(self.runtime), ended=ended)
        return self.last

    def shown(self, predicate: Callable[[str], bool]) -> None:
        assert self.pane is not None
        self.pane.wait_until(predicate, SHOWN)

    def composes(self, predicate: Callable[[Chat], bool], what: str) -> Chat:
        """Within ``WITHIN`` s of the screen showing it, the read says so too."""
        deadline = time.monotonic() + WITHIN
        while True:
            chat = self.read()
            if predicate(chat):
                return chat
            if time.monotonic() > deadline:
                screen = self.pane.screen() if self.pane else ""
                raise AssertionError(f"{what}: read {chat.state}/{chat.activity}\n{screen}")
            time.sleep(0.05)

    def close(self) -> None:
        self.home.cleanup()
        self.srv.stop()


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[Callable[[list[cs.Reply]], Run]]:
    runs: list[Run] = []

    def make(replies: list[cs.Reply]) -> Run:
        runs.append(Run(tmp_path / str(len(runs)), replies))
        return runs[-1]

    yield make
    for run in runs:
        run.close()


def _approval_open(chat: Chat) -> bool:
    approval = chat.pending_approval
    return chat.state == "needs_input" and approval is not None and approval.tool_name == "bash"


def _dialog_gone(screen: str) -> bool:
    return copilot.PERMISSION_MARKER not in screen and copilot.BUSY_MARKER not in screen


def test_approve_then_exit(make_run: Callable[[list[cs.Reply]], Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")])
    pane = run.start()
    copilot.submit(pane, "please write out.txt")
    run.shown(lambda s: copilot.PERMISSION_MARKER in s)
    chat = run.composes(_approval_open, "the permission dialog")
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input.get("command") == "echo hi > out.txt"
    time.sleep(0.5)  # a confirm key the moment the dialog draws can be dropped
    pane.send_keys("Enter")
    run.shown(lambda s: "Done: wrote out.txt." in s and _dialog_gone(s))
    chat = run.composes(is_idle_after_turn, "idle after the approved turn")
    assert chat.messages[-1].text == "Done: wrote out.txt."
    assert (run.home.cwd / "out.txt").exists()
    copilot.submit(pane, "/exit")
    copilot.wait_exited(pane)
    run.composes(lambda c: c.state == "ended" and c.process == "gone", "ended after /exit")


def test_esc_denies_and_no_hook_fires(make_run: Callable[[list[cs.Reply]], Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("unused")])
    pane = run.start()
    copilot.submit(pane, "please write out.txt")
    run.shown(lambda s: copilot.PERMISSION_MARKER in s)
    run.composes(_approval_open, "the permission dialog")
    pane.send_keys("Escape")
    run.shown(_dialog_gone)
    chat = run.composes(is_idle_after_turn, "idle after Esc")
    assert chat.messages[-1].kind == "interrupt"
    assert not (run.home.cwd / "out.txt").exists()


def test_question_then_clear(make_run: Callable[[list[cs.Reply]], Run]) -> None:
    replies = [cs.tool_call("ask_user", ASK), cs.text("Red it is."), cs.text("Fresh start.")]
    run = make_run(replies)
    pane = run.start()
    copilot.submit(pane, "ask me a color")
    run.shown(lambda s: "Which color do you prefer?" in s)
    chat = run.composes(lambda c: c.state == "question", "the question form")
    assert chat.pending_dialog is not None
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    time.sleep(0.5)
    pane.send_keys("Enter")
    run.shown(lambda s: "Red it is." in s)
    first = run.composes(is_idle_after_turn, "idle after the answer").transcript_id
    copilot.submit(pane, "/clear")
    run.shown(lambda s: "Started a fresh session" in s)
    copilot.submit(pane, "second prompt")
    run.shown(lambda s: "Fresh start." in s)
    chat = run.composes(
        lambda c: is_idle_after_turn(c) and c.transcript_id != first, "the new session"
    )
    assert [(m.seq, m.text) for m in chat.messages][:1] == [(1, "second prompt")]


def test_print_mode_is_asked_and_denied_by_itself(
    make_run: Callable[[list[cs.Reply]], Run],
) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Could not run it.")])
    done = copilot.run_print(
        run.home, "please write out.txt", extra_args=run.spawn.args, extra_env=run.spawn.env
    )
    assert done.returncode == 0, done.stderr
    chat = run.read()
    assert chat.state == "ended" and chat.pending_approval is None
    assert chat.messages[-1].text == "Could not run it."
