"""Tier 2: the real ``pi`` 0.73.1 armed by ``agentspool.setup("pi", …)``.

Every test starts the real TUI under tmux with ``spawn.args`` (``-e`` of the run's own
extension) against the scripted chat-completions server (``harness/pi.py``: private
``PI_CODING_AGENT_DIR``, offline), waits until the CLI *shows* a state on its screen,
then requires ``read_chat`` to compose that state within 1 s: the extension's confirm
dialog (Pi's one permission prompt), approved, denied, Esc mid-stream, ``/new`` (the new
session, ``seq`` from 1), ``/quit`` (ended), ``-p`` (nothing asked), a declaration from
inside the agent, and a run started by hand after ``install``. Pi has no question tool.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import chat_server as cs
from harness import pi, tmux
from harness.checkpoints import is_ended_after_turn, is_idle_after_turn, is_working
from harness.expect import SHOWN, within

import agentspool
from agentspool import Chat, read_chat

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not pi.available() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

BASH = {"command": "echo hi > out.txt"}
AGENTSPOOL_BIN = sysconfig.get_path("scripts")


class Run:
    def __init__(self, root: Path, replies: list[cs.Reply], *, armed: bool = True) -> None:
        self.srv = cs.ChatServer(replies).start()
        self.home = pi.make_home(self.srv.base_url, root / "p")
        self.runtime = root / "rt"
        self.runtime.mkdir(mode=0o700)
        self.run_id = "run-1"
        self.spawn = agentspool.setup("pi", self.run_id, str(self.runtime)) if armed else None
        self.pane: tmux.Pane | None = None

    def args_env(self) -> tuple[list[str], dict[str, str]]:
        path = f"{AGENTSPOOL_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        if self.spawn is None:  # by hand: the installed copy, the default runtime dir
            return [], {"PATH": path, "AGENTSPOOL_RUNTIME_DIR": str(self.runtime)}
        return list(self.spawn.args), {**self.spawn.env, "PATH": path}

    def start(self) -> tmux.Pane:
        args, env = self.args_env()
        self.pane = pi.start_tui(self.home, extra_args=args, extra_env=env)
        return self.pane

    def read(self) -> Chat:
        return read_chat("pi", self.run_id, str(self.runtime))

    def shown(self, predicate: Callable[[str], bool]) -> None:
        assert self.pane is not None
        self.pane.wait_until(predicate, SHOWN)

    def composes(self, predicate: Callable[[Chat], bool], what: str) -> Chat:
        assert self.pane is not None
        return within(self.read, predicate, what, self.pane)

    def close(self) -> None:
        self.home.cleanup()
        self.srv.stop()


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    runs: list[Run] = []

    def make(replies: list[cs.Reply], **kwargs: bool) -> Run:
        runs.append(Run(tmp_path / str(len(runs)), replies, **kwargs))
        return runs[-1]

    yield make
    for run in runs:
        run.close()


def _approval_open(chat: Chat) -> bool:
    approval = chat.pending_approval
    return chat.state == "needs_input" and approval is not None and approval.tool_name == "bash"


def _answered(text: str) -> Callable[[str], bool]:
    return lambda s: text in s and pi.CONFIRM_MARKER not in s and "Working..." not in s


def _ask(run: Run, prompt: str = "please write out.txt") -> tmux.Pane:
    pane = run.start()
    pi.submit(pane, prompt)
    run.shown(lambda s: pi.CONFIRM_MARKER in s)
    chat = run.composes(_approval_open, "the confirm dialog")
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input == BASH
    time.sleep(0.5)  # a key pressed the moment the dialog draws can be dropped
    return pane


def test_approve_then_quit(make_run: Callable[..., Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")])
    pane = _ask(run)
    pane.send_keys("Enter")
    run.shown(_answered("Done: wrote out.txt."))
    chat = run.composes(is_idle_after_turn, "idle after the approved turn")
    assert chat.messages[-1].text == "Done: wrote out.txt."
    assert (run.home.cwd / "out.txt").exists()
    pi.quit_tui(pane)
    run.composes(is_ended_after_turn, "ended after /quit")


def test_no_blocks_the_call(make_run: Callable[..., Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("It was blocked.")])
    pane = _ask(run)
    pane.send_keys("Escape")
    run.shown(_answered("It was blocked."))
    chat = run.composes(is_idle_after_turn, "idle after the denied call")
    (result,) = [m for m in chat.messages if m.kind == "tool_result"]
    assert (result.text, result.is_error) == ("Blocked by user", True)
    assert not (run.home.cwd / "out.txt").exists()


def test_esc_interrupts_a_stream_then_new_starts_afresh(make_run: Callable[..., Run]) -> None:
    slow = cs.slow_text("line one\nline two\nline three\n" * 10, seconds=30, chunks=60)
    run = make_run([slow, cs.text("Fresh start.")])
    pane = run.start()
    pi.submit(pane, "tell me a long story")
    run.shown(lambda s: "line one" in s)
    run.composes(is_working, "working while it streams")
    pane.send_keys("Escape")
    run.shown(lambda s: pi.ABORTED_MARKER in s)
    chat = run.composes(is_idle_after_turn, "idle after Esc")
    first = chat.transcript_id
    assert chat.messages[-1].kind == "interrupt"
    pi.submit(pane, "/new")
    run.composes(lambda c: c.messages == [] and c.state == "idle", "the new session, empty")
    pi.submit(pane, "second prompt")
    run.shown(_answered("Fresh start."))
    chat = run.composes(
        lambda c: is_idle_after_turn(c) and c.transcript_id not in ("", first), "the new session"
    )
    assert [(m.seq, m.text) for m in chat.messages] == [(1, "second prompt"), (2, "Fresh start.")]


def test_print_mode_asks_nothing(make_run: Callable[..., Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")])
    args, env = run.args_env()
    done = pi.run_print(run.home, "please write out.txt", extra_args=args, extra_env=env)
    assert done.returncode == 0, done.stderr
    chat = run.read()
    assert is_ended_after_turn(chat)
    assert chat.messages[-1].text == "Done: wrote out.txt."
    assert (run.home.cwd / "out.txt").exists()


def test_the_agent_declares_its_task_blocked(make_run: Callable[..., Run]) -> None:
    declare = f'{AGENTSPOOL_BIN}/agentspool lifecycle blocked --reason "needs the API key"'
    run = make_run([cs.tool_call("bash", {"command": declare}), cs.text("Declared.")])
    pane = run.start()
    pi.submit(pane, "declare it")
    run.shown(lambda s: pi.CONFIRM_MARKER in s)
    time.sleep(0.5)
    pane.send_keys("Enter")
    run.shown(_answered("Declared."))
    chat = run.composes(lambda c: c.task_state == "blocked", "the declaration")
    assert chat.task_reason == "needs the API key"


def test_a_run_started_by_hand_after_install(make_run: Callable[..., Run]) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done by hand.")], armed=False)
    agentspool.install("pi", "user", directory=str(run.home.agent_dir))
    pane = run.start()
    pi.submit(pane, "please write out.txt")
    run.shown(lambda s: pi.CONFIRM_MARKER in s)
    (run.run_id,) = [n for n in os.listdir(run.runtime) if n.startswith("pi-")]
    assert run.run_id == f"pi-{pane.pane_pid()}-{_start_ticks(pane.pane_pid())}"
    run.composes(_approval_open, "the confirm dialog of the hand-started run")
    time.sleep(0.5)
    pane.send_keys("Enter")
    run.shown(_answered("Done by hand."))
    run.composes(is_idle_after_turn, "idle after the hand-started turn")
    pi.quit_tui(pane)
    run.composes(is_ended_after_turn, "ended after /quit")


def _start_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[19])
