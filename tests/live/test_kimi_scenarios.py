"""Tier 2: the real ``kimi`` (Kimi Code 2.1.0) with agentspool's hooks installed.

Kimi Code cannot be armed per run (docs/adr/0048-kimi-code.md): each test installs the
hooks into the private home's ``config.toml`` (``agentspool install kimi-code``), then
either arms a run with ``agentspool.setup`` (``spawn.env`` in the CLI's environment) or
starts the CLI by hand (the run is the agent process: ``agentspool ls`` finds it). The
TUI runs under tmux against the scripted chat-completions server; once the screen shows
a state, ``read_chat`` reports it within 1 s (``harness/expect.py``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import chat_server as cs
from harness import kimi
from harness.expect import CheckedRun, after_turn

import agentspool

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not kimi.KIMI_BIN.exists() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

PROVIDER = "kimi-code"


def _idle(screen: str) -> bool:
    return kimi.is_ready(screen) and kimi.APPROVAL_MARKER not in screen


class Run(CheckedRun):
    provider = PROVIDER

    def __init__(
        self,
        root: Path,
        runtime_dir: str,
        replies: list[cs.Reply],
        monkeypatch: pytest.MonkeyPatch,
        *,
        wrapped: bool,
    ) -> None:
        self.runtime_dir = runtime_dir
        self.srv = cs.ChatServer(replies).start()
        self.home = kimi.make_home(root, self.srv.base_url)
        monkeypatch.setenv("KIMI_CODE_HOME", str(self.home.kimi_dir))
        monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)
        agentspool.install(PROVIDER)
        env = {"AGENTSPOOL_RUNTIME_DIR": runtime_dir}
        if wrapped:
            env |= agentspool.setup(PROVIDER, self.run_id, runtime_dir).env
        self.pane = kimi.start_tui(self.home, extra_env=env)


@pytest.fixture
def make_run(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Run]]:
    runs: list[Run] = []

    def make(replies: list[cs.Reply], *, wrapped: bool = True) -> Run:
        runs.append(Run(tmp_path, runtime_dir, replies, monkeypatch, wrapped=wrapped))
        return runs[-1]

    yield make
    for run in runs:
        run.close()


def test_approve_deny_question_esc_clear_exit(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [
            cs.tool_call(kimi.SHELL_TOOL, {"command": "echo hi > out.txt"}),
            cs.text("The file was written."),
            cs.tool_call(kimi.SHELL_TOOL, {"command": "echo no > denied.txt"}),
            cs.text("Not run, then."),
            cs.tool_call(kimi.QUESTION_TOOL, kimi.QUESTION, preface="Let me ask."),
            cs.text("Red it is."),
            cs.slow_text("line one\nline two\nline three\n" * 4, seconds=30, chunks=60),
            cs.text("After the clear."),
        ]
    )
    assert run.read().state == "idle"

    kimi.submit(run.pane, "please run echo hi")
    approval = run.expect(
        "approval", lambda c: c.pending_approval is not None, lambda s: kimi.APPROVAL_MARKER in s
    )
    assert approval.state == "needs_input"
    assert approval.pending_approval is not None
    assert approval.pending_approval.tool_input == {"command": "echo hi > out.txt"}
    kimi.answer(run.pane, ["Enter"], kimi.APPROVAL_MARKER)
    run.expect("approved", after_turn, lambda s: "The file was written." in s and _idle(s))
    assert (run.home.cwd / "out.txt").exists()

    kimi.submit(run.pane, "please run echo no")
    run.expect(
        "deny dialog", lambda c: c.pending_approval is not None, lambda s: kimi.APPROVAL_MARKER in s
    )
    kimi.answer(run.pane, ["Escape"], kimi.APPROVAL_MARKER)
    run.expect("denied", after_turn, lambda s: "Not run, then." in s and _idle(s))
    assert not (run.home.cwd / "denied.txt").exists()

    kimi.submit(run.pane, "ask me a question")
    chat = run.expect(
        "question", lambda c: c.state == "question", lambda s: kimi.QUESTION_MARKER in s
    )
    assert chat.pending_dialog is not None
    assert [o.label for o in chat.pending_dialog.options] == ["Red", "Blue"]
    run.pane.send_keys("Enter")
    run.pane.wait_for("Submit", 20)
    kimi.answer(run.pane, ["Enter"], "Ready to submit")
    run.expect("answered", after_turn, lambda s: "Red it is." in s and _idle(s))

    kimi.submit(run.pane, "stream slowly")
    run.expect("streaming", lambda c: c.state == "working", lambda s: "line two" in s)
    run.pane.send_keys("Escape")
    run.expect("interrupted", after_turn, lambda s: "Interrupted by user" in s and _idle(s))

    kimi.submit(run.pane, "/clear")
    run.expect("cleared", lambda c: c.state == "idle" and not c.messages, _idle)
    kimi.submit(run.pane, "after clear")
    chat = run.expect("after clear", after_turn, lambda s: "After the clear." in s)
    visible = [m.text for m in chat.messages if m.visibility == "visible"]
    assert visible == ["after clear", "After the clear."]

    kimi.submit(run.pane, "/exit")
    kimi.wait_exited(run.pane)
    run.expect("exit", lambda c: c.state == "ended", lambda s: True)


def test_a_hand_started_run_after_install(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [cs.tool_call(kimi.SHELL_TOOL, {"command": "echo hi > out.txt"}), cs.text("Done.")],
        wrapped=False,
    )
    kimi.submit(run.pane, "please run echo hi")
    run.pane.wait_for(kimi.APPROVAL_MARKER, 60)
    [listed] = [r for r in agentspool.list_runs(run.runtime_dir) if r.provider == PROVIDER]
    run.run_id = listed.run_id
    chat = run.expect(
        "approval", lambda c: c.pending_approval is not None, lambda s: kimi.APPROVAL_MARKER in s
    )
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_input == {"command": "echo hi > out.txt"}
    kimi.answer(run.pane, ["Enter"], kimi.APPROVAL_MARKER)
    run.expect("approved", after_turn, lambda s: "Done." in s and _idle(s))


@pytest.mark.parametrize("wrapped", [True, False], ids=["wrapped", "by-hand"])
def test_lifecycle_from_inside_the_agent(make_run: Callable[..., Run], wrapped: bool) -> None:
    """The agent's own shell call declares the task blocked: the run reads it."""
    agentspool_bin = Path(sys.executable).with_name("agentspool")
    command = f"{agentspool_bin} lifecycle blocked --reason 'needs an API key'"
    run = make_run(
        [cs.tool_call(kimi.SHELL_TOOL, {"command": command}), cs.text("Declared.")],
        wrapped=wrapped,
    )
    kimi.submit(run.pane, "declare it")
    run.pane.wait_for(kimi.APPROVAL_MARKER, 60)
    if not wrapped:
        [listed] = [r for r in agentspool.list_runs(run.runtime_dir) if r.provider == PROVIDER]
        run.run_id = listed.run_id
    kimi.answer(run.pane, ["Enter"], kimi.APPROVAL_MARKER)
    chat = run.expect("declared", after_turn, lambda s: "Declared." in s and _idle(s))
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs an API key")
