"""Tier 2: the real ``copilot`` 1.0.102 armed by ``agentspool.setup("copilot", …)``.

Every test starts the real TUI under tmux with ``spawn.args`` (``--plugin-dir`` of the
run's own hooks) against the scripted chat-completions server (``harness/copilot.py``:
private ``COPILOT_HOME``, offline, no login), waits until the CLI *shows* a state on its
screen, then requires ``read_chat`` to compose that state within 1 s: the permission
dialog, approved, denied with Esc (no hook fires), the question form, ``/clear`` (the
new session, ``seq`` from 1), ``/exit`` (ended), and ``-p`` (asked and denied by itself:
never a wait). Then runs a person starts by hand (no ``setup``): found by ``list_runs``
through the hooks ``agentspool install`` put in the private ``COPILOT_HOME``, and with no
hook at all through the session files the CLI keeps.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import chat_server as cs
from harness import copilot, tmux
from harness.checkpoints import is_idle_after_turn
from harness.expect import SHOWN, within

import agentspool
from agentspool import Chat, RunSummary, read_chat

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not copilot.available() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

BASH = {"command": "echo hi > out.txt", "description": "Run a mock command"}
ASK = {
    "message": "Which color do you prefer?",
    "requestedSchema": {"properties": {"color": {"type": "string", "enum": ["Red", "Blue"]}}},
}


class Run:
    """One copilot TUI against the scripted server. Armed: ``setup``'s ``spawn.args``
    and environment, read as run ``run-1``. Not armed: as a person starts it, nothing of
    ours on its command line — read through ``list_runs``, whose runtime dir is the one
    installed hooks fall back to under the CLI's ``TMPDIR``, and whose discovery looks
    in this process's ``COPILOT_HOME``, the CLI's."""

    def __init__(
        self, root: Path, replies: list[cs.Reply], monkeypatch: pytest.MonkeyPatch, *, armed: bool
    ) -> None:
        self.srv = cs.ChatServer(replies).start()
        self.home = copilot.make_home(self.srv.base_url, root / "c")
        monkeypatch.setenv("COPILOT_HOME", str(self.home.copilot_dir))
        if armed:
            self.runtime = root / "rt"
            self.runtime.mkdir(mode=0o700)
            self.spawn = agentspool.setup("copilot", "run-1", str(self.runtime))
        else:
            self.runtime = self.home.root / "tmp" / f"agentspool-{os.getuid()}"
            self.spawn = agentspool.Spawn(args=[])
        self.pane: tmux.Pane | None = None

    def start(self) -> tmux.Pane:
        self.pane = copilot.start_tui(
            self.home, extra_args=self.spawn.args, extra_env=self.spawn.env
        )
        return self.pane

    def read(self, *, ended: bool = False) -> Chat:
        return read_chat("copilot", "run-1", str(self.runtime), ended=ended)

    def shown(self, predicate: Callable[[str], bool]) -> None:
        assert self.pane is not None
        self.pane.wait_until(predicate, SHOWN)

    def composes(self, predicate: Callable[[Chat], bool], what: str) -> Chat:
        assert self.pane is not None
        return within(self.read, predicate, what, self.pane)

    def listed_copilot(self, *, include_ended: bool = True) -> list[RunSummary]:
        runs = agentspool.list_runs(str(self.runtime), include_ended=include_ended)
        return [r for r in runs if r.provider == "copilot"]

    def listed(self, predicate: Callable[[RunSummary], bool], what: str) -> RunSummary:
        """The one copilot run ``list_runs`` lists, once it satisfies ``predicate``."""
        assert self.pane is not None
        runs = within(
            self.listed_copilot, lambda rs: len(rs) == 1 and predicate(rs[0]), what, self.pane
        )
        return runs[0]

    def close(self) -> None:
        self.home.cleanup()
        self.srv.stop()


@pytest.fixture
def make_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Run]]:
    runs: list[Run] = []

    def make(replies: list[cs.Reply], *, armed: bool = True) -> Run:
        runs.append(Run(tmp_path / str(len(runs)), replies, monkeypatch, armed=armed))
        return runs[-1]

    yield make
    for run in runs:
        run.close()


def _approval_open(found: Chat | RunSummary) -> bool:
    approval = found.pending_approval
    return found.state == "needs_input" and approval is not None and approval.tool_name == "bash"


def _dialog_gone(screen: str) -> bool:
    return copilot.PERMISSION_MARKER not in screen and copilot.BUSY_MARKER not in screen


def test_approve_then_exit(make_run: Callable[..., Run]) -> None:
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


def test_esc_denies_and_no_hook_fires(make_run: Callable[..., Run]) -> None:
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


def test_question_then_clear(make_run: Callable[..., Run]) -> None:
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
    make_run: Callable[..., Run],
) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Could not run it.")])
    done = copilot.run_print(
        run.home, "please write out.txt", extra_args=run.spawn.args, extra_env=run.spawn.env
    )
    assert done.returncode == 0, done.stderr
    chat = run.read()
    assert chat.state == "ended" and chat.pending_approval is None
    assert chat.messages[-1].text == "Could not run it."


# -- started by hand ---------------------------------------------------------------------


def _native_copilot(pane: tmux.Pane) -> int:
    """The native copilot the npm loader (the pane's process) starts: it runs the hooks."""
    loader = copilot.pid(pane)
    children = Path(f"/proc/{loader}/task/{loader}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_started_by_hand_after_install_is_listed_with_its_approval(
    make_run: Callable[..., Run],
) -> None:
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")], armed=False)
    hooks_dir = run.home.copilot_dir / "hooks"
    assert not hooks_dir.exists()
    agentspool.install("copilot", "user", directory=str(run.home.copilot_dir))
    pane = run.start()
    copilot.submit(pane, "please write out.txt")
    run.shown(lambda s: copilot.PERMISSION_MARKER in s)
    waiting = run.listed(_approval_open, "the permission dialog")
    pid = _native_copilot(pane)
    assert (waiting.pid, waiting.cwd) == (pid, str(run.home.cwd))
    assert waiting.run_id.startswith(f"copilot-{pid}-")
    assert waiting.pending_approval is not None
    assert waiting.pending_approval.tool_input.get("command") == "echo hi > out.txt"
    time.sleep(0.5)  # a confirm key the moment the dialog draws can be dropped
    pane.send_keys("Enter")
    run.shown(lambda s: "Done: wrote out.txt." in s and _dialog_gone(s))
    idle = run.listed(
        lambda r: r.state == "needs_input" and r.pending_approval is None, "idle after the turn"
    )
    assert idle.run_id == waiting.run_id and Path(idle.transcript_path).is_file()
    # The title is the transcript's prompt: once on a loaded machine the dialog (a hook)
    # was listed before the transcript was read with it, so it is checked here.
    assert idle.title == "please write out.txt"
    copilot.submit(pane, "/exit")
    copilot.wait_exited(pane)
    gone = run.listed(lambda r: r.state == "ended", "ended after /exit")
    assert gone.run_id == waiting.run_id
    agentspool.uninstall("copilot", "user", directory=str(run.home.copilot_dir))
    assert not hooks_dir.exists()  # made by install, so taken out with our file


def test_started_by_hand_with_no_hook_is_discovered_from_its_session_files(
    make_run: Callable[..., Run],
) -> None:
    """Nothing armed: the session's ``events.jsonl`` and its ``inuse.<pid>.lock``."""
    run = make_run([cs.tool_call("bash", BASH), cs.text("Done: wrote out.txt.")], armed=False)
    pane = run.start()
    copilot.submit(pane, "please write out.txt")
    run.shown(lambda s: copilot.PERMISSION_MARKER in s)
    waiting = run.listed(_approval_open, "the permission dialog")
    assert (waiting.run_id, waiting.pid) == ("", _native_copilot(pane))
    assert waiting.session_id and waiting.cwd == str(run.home.cwd)
    time.sleep(0.5)
    pane.send_keys("Enter")
    run.shown(lambda s: "Done: wrote out.txt." in s and _dialog_gone(s))
    idle = run.listed(
        lambda r: r.state == "needs_input" and r.pending_approval is None, "idle after the turn"
    )
    assert idle.session_id == waiting.session_id
    copilot.submit(pane, "/exit")
    copilot.wait_exited(pane)
    # The lock left with the process: no live process holds the session, so the live
    # listing drops it (a session no hook saw is never read as ended from its file).
    within(lambda: run.listed_copilot(include_ended=False), lambda rs: rs == [], "not live", pane)
    (after,) = run.listed_copilot()
    assert (after.session_id, after.pid) == (waiting.session_id, 0)
