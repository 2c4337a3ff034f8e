"""Tier 2: the real ``qwen`` (Qwen Code 0.24.4) armed by ``agentspool.setup``, or started
by hand after ``agentspool install``.

A wrapped run's hooks are in the settings layer ``setup`` renders (``spawn.env`` names it
in the CLI's environment: docs/adr/0047-qwen-code-arming.md); the TUI runs under tmux
against the scripted chat-completions server. At each checkpoint the screen shows a
state first, then ``read_chat`` must report it within 1 s (and still 0.5 s later).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import chat_server as cs
from harness import qwen
from harness.expect import CheckedRun, after_turn

import agentspool

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not qwen.QWEN_BIN.exists() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

PROVIDER = "qwen-code"


def _shell(command: str) -> cs.Reply:
    return cs.tool_call(qwen.SHELL_TOOL, {"command": command, "description": "Run a command"})


class Run(CheckedRun):
    provider = PROVIDER

    def __init__(
        self, root: Path, runtime_dir: str, replies: list[cs.Reply], *, wrapped: bool = True
    ) -> None:
        self.runtime_dir = runtime_dir
        self.srv = cs.ChatServer(replies, side=qwen.is_side_query).start()
        self.home = qwen.make_home(root, self.srv.base_url)
        env = {"AGENTSPOOL_RUNTIME_DIR": runtime_dir}
        if wrapped:
            env |= agentspool.setup(PROVIDER, self.run_id, runtime_dir).env
        else:  # by hand, after `agentspool install qwen-code` into its own settings
            agentspool.install(PROVIDER, directory=str(self.home.qwen_dir))
        self.pane = qwen.start_tui(self.home, extra_env=env)


@pytest.fixture
def make_run(tmp_path: Path, runtime_dir: str) -> Iterator[Callable[..., Run]]:
    runs: list[Run] = []

    def make(replies: list[cs.Reply], *, wrapped: bool = True) -> Run:
        runs.append(Run(tmp_path, runtime_dir, replies, wrapped=wrapped))
        return runs[-1]

    yield make
    for run in runs:
        run.close()


def _idle(screen: str) -> bool:
    return qwen.composer_text(screen) == "" and qwen.BUSY_MARKER not in screen


def test_approve_deny_question_esc_clear_quit(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [
            _shell("echo hi > out.txt"),
            cs.text("The file was written."),
            _shell("echo no > denied.txt"),
            cs.tool_call(qwen.QUESTION_TOOL, qwen.QUESTION, preface="Let me ask."),
            cs.text("Red it is."),
            cs.slow_text("line one\nline two\nline three\n" * 4, seconds=30, chunks=60),
            cs.text("After the clear."),
        ]
    )
    assert run.read().state == "idle"

    qwen.submit(run.pane, "please run echo hi")
    chat = run.expect(
        "approval", lambda c: c.pending_approval is not None, lambda s: qwen.APPROVAL_MARKER in s
    )
    assert chat.state == "needs_input"
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input["command"] == "echo hi > out.txt"
    qwen.answer(run.pane, ["Enter"], qwen.APPROVAL_MARKER)
    run.expect(
        "approved, turn over", after_turn, lambda s: "The file was written." in s and _idle(s)
    )
    assert (run.home.cwd / "out.txt").exists()

    qwen.submit(run.pane, "please run echo no")
    run.expect(
        "deny dialog", lambda c: c.pending_approval is not None, lambda s: qwen.APPROVAL_MARKER in s
    )
    qwen.answer(run.pane, ["Escape"], qwen.APPROVAL_MARKER)
    run.expect("denied", after_turn, _idle)
    assert not (run.home.cwd / "denied.txt").exists()

    qwen.submit(run.pane, "ask me a question")
    chat = run.expect(
        "question", lambda c: c.state == "question", lambda s: qwen.QUESTION_MARKER in s
    )
    assert chat.pending_dialog is not None
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    qwen.answer(run.pane, ["Enter"], "Enter: Select")
    run.expect("answered", after_turn, lambda s: "Red it is." in s and _idle(s))

    qwen.submit(run.pane, "stream slowly")
    run.expect("streaming", lambda c: c.state == "working", lambda s: "line two" in s)
    run.pane.send_keys("Escape")
    run.expect("interrupted", after_turn, lambda s: "Request cancelled." in s)

    run.pane.send_keys("C-u")
    run.pane.wait_until(lambda s: qwen.composer_text(s) == "", timeout=30)
    qwen.submit(run.pane, "/clear")
    run.expect("cleared", lambda c: c.state == "idle" and not c.messages, _idle)
    qwen.submit(run.pane, "after clear")
    chat = run.expect("after clear", after_turn, lambda s: "After the clear." in s)
    assert [(m.seq, m.text) for m in chat.messages] == [(1, "after clear"), (2, "After the clear.")]

    qwen.submit(run.pane, "/quit")
    qwen.wait_exited(run.pane)
    run.expect("quit", lambda c: c.state == "ended", lambda s: True)


def test_lifecycle_from_inside_the_agent(make_run: Callable[..., Run]) -> None:
    """The agent's own shell call declares the task blocked: the run reads it."""
    agentspool_bin = Path(sys.executable).with_name("agentspool")
    command = f"{agentspool_bin} lifecycle blocked --reason 'needs an API key'"
    run = make_run([_shell(command), cs.text("Declared.")])
    qwen.submit(run.pane, "declare it")
    run.expect(
        "approval", lambda c: c.pending_approval is not None, lambda s: qwen.APPROVAL_MARKER in s
    )
    qwen.answer(run.pane, ["Enter"], qwen.APPROVAL_MARKER)
    chat = run.expect("declared", after_turn, lambda s: "Declared." in s)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs an API key")


def test_a_hand_started_run_after_install(make_run: Callable[..., Run]) -> None:
    run = make_run([_shell("echo hi > out.txt"), cs.text("Done.")], wrapped=False)
    qwen.submit(run.pane, "please run echo hi")
    run.pane.wait_for(qwen.APPROVAL_MARKER, 60)
    [listed] = [r for r in agentspool.list_runs(run.runtime_dir) if r.provider == PROVIDER]
    run.run_id = listed.run_id
    chat = run.expect(
        "approval", lambda c: c.pending_approval is not None, lambda s: qwen.APPROVAL_MARKER in s
    )
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input["command"] == "echo hi > out.txt"
    qwen.answer(run.pane, ["Enter"], qwen.APPROVAL_MARKER)
    run.expect("approved", after_turn, lambda s: "Done." in s and _idle(s))
