"""Tier 2: the real ``claude`` 2.1.328 armed with agentspool's own hooks.

Every test starts the real CLI with ``agentspool.setup("claude-code", …).args`` against the
scripted Anthropic server and asserts what ``read_chat`` composes — ``state``,
``activity``, ``pending_dialog`` / ``pending_approval`` — at every checkpoint.

Checkpoints wait on observable conditions (screen text, the native session file, a hook
record in the spool) and then poll ``read_chat`` until the expected state lands (the
transcript trails the hooks by ~100-200 ms). A checkpoint then re-reads after a short
pause (the state must be stable, not a passing frame) and cross-checks the composed state
against independent oracles — the screen and ``~/.claude/sessions/<pid>.json``: no open
dialog may be reported while neither shows one, and no ``working`` while the CLI is idle.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sysconfig
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from harness import anthropic_server as api
from harness import claude
from harness.checkpoints import (
    ScenarioRun,
    describe_chat,
    event_fields,
    is_ended_after_turn,
    is_idle_after_turn,
)

import agentspool
from agentspool import Chat, locate_transcript
from agentspool.core.seam import PendingDialog

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not claude.available(), reason="claude binary not installed"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
]

PROVIDER = "claude-code"
BASH_WRITE = {"command": "echo hi > out.txt", "description": "Write hi to out.txt"}
QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm color"},
                {"label": "Blue", "description": "A cool color"},
            ],
            "multiSelect": False,
        }
    ]
}
PLAN = "# Plan\n\n1. Write `hi` to out.txt with echo.\n2. Report back."
SUMMARY = (
    "<analysis>The user asked one question.</analysis>\n"
    "<summary>1. Primary Request: the user said hello.\n2. The assistant answered."
    "</summary>"
)
SUB_MARK = "SUBAGENT-TASK-7f3a"

# What the TUI shows while a dialog is open (captures/claude-code/*/notes.md).
DIALOG_MARKERS = ("Do you want to proceed?", "Enter to select", "Exit plan mode?", "Esc to cancel")
BUSY_MARKER = "esc to interrupt"


# ------------------------------------------------------------------ helpers ---


@dataclass
class Oracle:
    """What the CLI itself shows at one instant: its native status file and its screen."""

    status: str | None
    waiting_for: str | None
    screen: str

    @property
    def dialog_shown(self) -> bool:
        return self.status == "waiting" or any(m in self.screen for m in DIALOG_MARKERS)

    @property
    def cli_idle(self) -> bool:
        return self.status == "idle" and BUSY_MARKER not in self.screen


@dataclass
class Run(ScenarioRun):
    """One armed run: private HOME, private runtime dir, scripted server, maybe a TUI."""

    h: claude.ClaudeHome
    srv: api.AnthropicServer
    runtime_dir: str
    run_id: str
    spawn_args: list[str]
    run_dir: str
    spawn_env: dict[str, str] = field(default_factory=dict)
    tui: claude.ClaudeTui | None = None
    last: Chat | None = None
    log: list[str] = field(default_factory=list)
    provider: ClassVar[str] = PROVIDER

    # -- starting
    def start_tui(
        self,
        *,
        permission_mode: str = "default",
        extra_args: tuple[str, ...] = (),
        extra_env: dict[str, str] | None = None,
    ) -> claude.ClaudeTui:
        self.tui = claude.start_tui(
            self.h,
            self.srv.url,
            permission_mode=permission_mode,
            extra_args=[*self.spawn_args, *extra_args],
            extra_env=extra_env,
        )
        self.tui.wait_ready()
        self.wait_hook("SessionStart")
        self.tui.wait_status("idle")
        return self.tui

    def close(self) -> None:
        if self.tui is not None:
            self.tui.close()

    def native(self) -> dict[str, Any] | None:
        if self.tui is None:
            return None
        return self.tui.session()

    def oracle(self) -> Oracle:
        native = self.native() or {}
        screen = self.tui.screen() if self.tui is not None else ""
        return Oracle(native.get("status"), native.get("waitingFor"), screen)

    def screen_oracle(self) -> Oracle | None:
        return self.oracle() if self.tui is not None else None

    def wait_screen(self, needle: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        assert self.tui is not None
        try:
            if callable(needle):
                return self.tui.pane.wait_until(needle, timeout)
            return self.tui.wait_for(needle, timeout)
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def wait_native(self, status: str, timeout: float = 30.0) -> dict[str, Any]:
        assert self.tui is not None
        try:
            return self.tui.wait_status(status, timeout)
        except TimeoutError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def _events(self, path: str) -> list[str]:
        """Diagnostics only: the adapter's canonical events for this run, by time."""
        from agentspool.adapters.claude_code._signals import HookTranslator
        from agentspool.adapters.claude_code._transcript import TranscriptParser

        translator = HookTranslator()
        events = [e for r in self.records() for e in translator.translate(r)]
        if path:
            parser = TranscriptParser()
            with open(path, "rb") as fh:
                for raw in fh:
                    parser.feed_line(raw)
            events += parser.events
        t0 = min((e.at for e in events if e.at), default=0.0)
        out = []
        for e in sorted(events, key=lambda e: e.at):
            fields = event_fields(e)
            if "epoch" in fields:
                fields["epoch"] = str(fields["epoch"])[:8]
            for k in ("turn_id",):
                if k in fields:
                    fields[k] = str(fields[k])[:8]
            out.append(f"{e.at - t0:7.3f} {type(e).__name__} {e.source} {fields}")
        return out

    def spool_keys(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        keys = {
            k: payload[k]
            for k in (
                "source",
                "reason",
                "tool_name",
                "tool_use_id",
                "agent_id",
                "notification_type",
                "error",
            )
            if payload.get(k)
        }
        if "prompt_id" in payload:
            keys["prompt"] = str(payload["prompt_id"])[:8]
        if event == "Stop":
            keys["background"] = [t.get("id") for t in payload.get("background_tasks") or []]
        keys["sid"] = str(payload.get("session_id", ""))[:8]
        return keys

    def dump(self) -> str:
        out = self.dump_head()
        path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        out.append(f"transcript {path or '<not located>'}:")
        if path:
            for rec in claude.read_jsonl(path)[-25:]:
                msg = rec.get("message") or {}
                content = msg.get("content")
                if isinstance(content, list):
                    desc = [
                        c.get("type") + (f"({c.get('name')})" if c.get("name") else "")
                        for c in content
                        if isinstance(c, dict)
                    ]
                else:
                    desc = str(content)[:40] if content else ""
                out.append(
                    f"  {rec.get('type')}/{rec.get('subtype', '')} "
                    f"{rec.get('promptId', '')[:8]} {desc} {msg.get('stop_reason', '')}"
                )
        with contextlib.suppress(Exception):
            out.append("canonical events (evidence-time order):")
            out += ["  " + line for line in self._events(path)]
        if self.tui is not None:
            with contextlib.suppress(Exception):
                out.append(f"native: {self.native()}")
            with contextlib.suppress(Exception):
                out.append("screen:\n" + self.tui.screen().rstrip())
        return "\n".join(out)


@pytest.fixture
def make_run(tmp_path: Path, runtime_dir: str) -> Iterator[Callable[..., Run]]:
    """``make_run(scenario, **server_kw)``: one server and one armed run per test."""
    runs: list[Run] = []
    servers: list[api.AnthropicServer] = []

    def make(scenario: list[api.Reply], **server_kw: Any) -> Run:
        assert not runs, "one run per test"
        srv = api.AnthropicServer(scenario, **server_kw).start()
        servers.append(srv)
        h = claude.make_home(tmp_path / "claude")
        run_id = "live-" + os.urandom(4).hex()
        spawn = agentspool.setup(PROVIDER, run_id, runtime_dir)
        run = Run(
            h=h,
            srv=srv,
            runtime_dir=runtime_dir,
            run_id=run_id,
            spawn_args=list(spawn.args),
            run_dir=spawn.run_dir,
            spawn_env=dict(spawn.env),
        )
        runs.append(run)
        return run

    try:
        yield make
    finally:
        for run in runs:
            run.close()
        for srv in servers:
            srv.stop()


def no_wait_not_working(chat: Chat) -> bool:
    return (
        chat.state not in ("working", "question")
        and chat.activity == "idle"
        and chat.pending_approval is None
        and chat.pending_dialog is None
    )


def before_any_prompt(run: Run) -> None:
    chat = run.checkpoint("before any prompt", lambda c: c.state == "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert chat.activity in ("idle", "unknown")


def open_permission_prompt(run: Run) -> Chat:
    """Prompt for ``echo hi > out.txt``; the permission dialog is open."""
    assert run.tui is not None
    run.tui.submit("write hi to out.txt")
    run.wait_screen("Do you want to proceed?")
    run.wait_hook("PermissionRequest")
    chat = run.checkpoint(
        "permission prompt open",
        lambda c: c.state == "needs_input" and c.pending_approval is not None,
    )
    assert chat.activity == "needs_input"
    assert chat.pending_dialog is None
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_name == "Bash"
    assert chat.pending_approval.tool_input.get("command") == BASH_WRITE["command"]
    assert chat.pending_approval.agent_id == ""
    return chat


def checkpoint_open_dialog(run: Run, name: str, kind: str) -> PendingDialog:
    """Checkpoint ``name``: the dialog's PermissionRequest has fired and ``read_chat``
    reports an open ``kind`` dialog (a question or a plan approval), no permission prompt."""
    run.wait_hook("PermissionRequest")
    chat = run.checkpoint(name, lambda c: c.state == "question")
    assert chat.activity == "needs_input"
    assert chat.pending_approval is None
    dialog = chat.pending_dialog
    assert dialog is not None and dialog.kind == kind
    return dialog


def open_question(run: Run) -> PendingDialog:
    assert run.tui is not None
    run.tui.submit("ask me a color")
    run.wait_screen("Which color do you prefer?")
    dialog = checkpoint_open_dialog(run, "question open", "question")
    assert dialog.prompt == "Which color do you prefer?"
    assert [o.label for o in dialog.options] == ["Red", "Blue"]
    assert [o.description for o in dialog.options] == ["A warm color", "A cool color"]
    return dialog


def sigkill(tui: claude.ClaudeTui) -> None:
    """SIGKILL claude (no hook fires) and wait until its pid is gone."""
    pid = tui.pid()
    claude.kill_pid(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while claude.pid_alive(pid):
        assert time.monotonic() < deadline, "claude survived SIGKILL"
        time.sleep(0.05)


# -------------------------------------------------------------------- tests ---


def test_permission_prompt_then_approve(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("Bash", BASH_WRITE), api.text("Done after tool.")])
    tui = run.start_tui()
    before_any_prompt(run)
    open_permission_prompt(run)

    tui.press("Enter")  # "1. Yes" is preselected
    run.wait_hook("PostToolUse")
    run.checkpoint(
        "approved",
        lambda c: c.pending_approval is None and c.state in ("working", "needs_input"),
        stable=False,
    )
    run.wait_hook("Stop")
    run.wait_screen("Done after tool.")
    run.wait_native("idle")
    chat = run.checkpoint("idle after the turn", is_idle_after_turn)
    assert (run.h.cwd / "out.txt").read_text() == "hi\n"
    assert [m.kind for m in chat.messages if m.role != "system"][-3:] == [
        "tool_call",
        "tool_result",
        "text",
    ]


# Writes a file, so it asks (echo and sleep alone run unasked).
LONG_COMMAND = {"command": "sleep 8 && echo done > out.txt", "description": "Wait, then write"}


def test_approved_command_reads_working_while_it_runs(make_run: Callable[..., Run]) -> None:
    """No hook fires between the approval and the command's end: the native file turning
    ``busy`` at the approval is what proves the prompt gone, within a second."""
    run = make_run([api.tool_use("Bash", LONG_COMMAND), api.text("The command finished.")])
    tui = run.start_tui()
    tui.submit("run the long command")
    run.wait_screen("Do you want to proceed?")
    run.wait_hook("PermissionRequest")
    run.wait_native("waiting")
    run.checkpoint("approval open", lambda c: c.pending_approval is not None)

    approved = time.monotonic()
    tui.press("Enter")  # "1. Yes" is preselected
    reads = run.watch(lambda: bool(run.hooks("PostToolUse")), timeout=40)
    ended = time.monotonic()
    # ~8 s of the command running, read every 0.25 s: every read from 1 s after the
    # key until the command's end is working, with no approval pending.
    run.require_working(reads, approved + 1.0, ended, least=20)

    run.wait_hook("Stop")
    run.wait_screen("The command finished.")
    run.wait_native("idle")
    run.checkpoint("idle after the command", is_idle_after_turn)
    assert (run.h.cwd / "out.txt").read_text() == "done\n"


def test_permission_prompt_denied(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("Bash", BASH_WRITE)])
    tui = run.start_tui()
    open_permission_prompt(run)

    tui.press("4")  # "4. No": selects it, or (as captured once) only moves the cursor
    screen = run.wait_screen(lambda s: "❯ 4. No" in s or "Do you want to proceed?" not in s)
    if "Do you want to proceed?" in screen:
        tui.press("Enter")
    run.wait_native("idle")
    run.wait_screen("Interrupted")
    chat = run.checkpoint("denied", no_wait_not_working)
    assert chat.state == "needs_input"  # the turn ended (interrupted), nothing pending
    assert not (run.h.cwd / "out.txt").exists()
    # A denial fires no hook: after the PermissionRequest at most the dialog's
    # Notification (≈6 s after it opened, on a slow machine).
    events = [r.event for r in run.records()]
    after = events[len(events) - events[::-1].index("PermissionRequest") :]
    assert set(after) <= {"Notification"}, events


def _answer_question(run: Run) -> None:
    """Enter on option 1; if a review step ("Submit answers") appears, confirm it."""
    assert run.tui is not None
    run.tui.press("Enter")
    deadline = time.monotonic() + 20
    while not run.hooks("PostToolUse"):
        screen = run.tui.screen()
        if "Submit answers" in screen or "Review your answers" in screen:
            run.tui.press("Enter")
            run.wait_hook("PostToolUse")
            return
        if time.monotonic() > deadline:
            pytest.fail(f"question not answered\n{run.dump()}")
        time.sleep(0.1)


def test_question_answered(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("AskUserQuestion", QUESTION), api.text("You picked a color.")])
    run.start_tui()
    open_question(run)

    _answer_question(run)
    run.wait_hook("Stop")
    run.wait_screen("You picked a color.")
    run.wait_native("idle")
    run.checkpoint("answered, idle", is_idle_after_turn)


def test_question_dismissed_with_esc(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("AskUserQuestion", QUESTION)])
    tui = run.start_tui()
    open_question(run)

    tui.press("Escape")
    run.wait_native("idle")
    run.wait_screen(
        lambda s: "Enter to select" not in s and any(m in s for m in claude.READY_MARKERS)
    )
    chat = run.checkpoint("question dismissed", no_wait_not_working)
    assert chat.state == "needs_input"


def test_plan_approval(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [api.tool_use("ExitPlanMode", {"plan": PLAN}), api.text("Plan approved; starting.")]
    )
    tui = run.start_tui(permission_mode="plan")
    before_any_prompt(run)
    tui.submit("plan writing hi to out.txt")
    run.wait_screen("Exit plan mode?")
    dialog = checkpoint_open_dialog(run, "plan approval open", "plan_approval")
    assert PLAN in dialog.prompt

    tui.press("Enter")  # "1. Yes, and switch to default" is preselected
    run.wait_hook("Stop")
    run.wait_screen("Plan approved; starting.")
    run.wait_native("idle")
    run.checkpoint("plan approved, idle", is_idle_after_turn)


SLOW_LINES = "".join(f"line {i} of a slowly streamed answer\n" for i in range(60))


def test_esc_while_streaming(make_run: Callable[..., Run]) -> None:
    run = make_run([api.slow_text(SLOW_LINES, delay=0.15, chunk_chars=6)])
    tui = run.start_tui()
    tui.submit("stream slowly")
    run.srv.wait_main_requests(1)
    run.wait_screen("line 2 of")
    chat = run.checkpoint("streaming", lambda c: c.state == "working")
    assert chat.activity == "working"
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert BUSY_MARKER in tui.screen(), "the answer finished streaming before the Esc"

    tui.press("Escape")
    run.wait_native("idle")
    run.wait_screen("Interrupted")
    run.checkpoint("after Esc", no_wait_not_working)


def test_esc_while_tool_runs(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [
            api.tool_use(
                "Bash",
                {"command": "echo start && sleep 30 && echo end", "description": "Wait 30 seconds"},
            )
        ]
    )
    tui = run.start_tui(extra_args=("--allowedTools", "Bash"))
    tui.submit("run the slow command")
    run.wait_hook("PreToolUse")
    run.wait_screen("sleep 30")
    run.wait_native("busy")
    chat = run.checkpoint("tool running", lambda c: c.state == "working")
    assert chat.activity == "working"
    assert chat.pending_approval is None and chat.pending_dialog is None

    tui.press("Escape")
    run.wait_native("idle")
    run.wait_screen("Interrupted")
    chat = run.checkpoint("after Esc", no_wait_not_working)
    assert not run.hooks("PostToolUse")


def test_prompt_queued_while_working(make_run: Callable[..., Run]) -> None:
    slow = "".join(f"first answer line {i}\n" for i in range(16))
    run = make_run([api.slow_text(slow, delay=0.25, chunk_chars=10), api.text("Second answer.")])
    tui = run.start_tui()
    tui.submit("first prompt")
    run.srv.wait_main_requests(1)
    run.wait_screen("first answer line 1")
    run.checkpoint("first turn working", lambda c: c.state == "working")

    tui.submit("second prompt")
    run.wait_hook("UserPromptSubmit", count=2)
    run.checkpoint("second prompt queued", lambda c: c.state == "working")
    assert not run.hooks("Stop"), "the first turn ended before the queued checkpoint"

    run.wait_hook("Stop", count=2, timeout=60)
    run.wait_screen("Second answer.")
    run.wait_native("idle")
    chat = run.checkpoint("both turns done", is_idle_after_turn)
    texts = [m.text for m in chat.messages if m.kind == "text" and m.visibility == "visible"]
    assert "first prompt" in texts and "second prompt" in texts
    assert "Second answer." in texts


def test_idle_after_a_turn(make_run: Callable[..., Run]) -> None:
    run = make_run([api.text("First answer.")])
    tui = run.start_tui()
    before_any_prompt(run)
    tui.submit("hello")
    run.wait_hook("Stop")
    run.wait_screen("First answer.")
    run.wait_native("idle")
    chat = run.checkpoint("idle after the turn", is_idle_after_turn)
    visible = [(m.role, m.kind, m.text) for m in chat.messages if m.visibility == "visible"]
    assert visible == [("user", "text", "hello"), ("assistant", "text", "First answer.")]


def test_clear_starts_a_fresh_chat(make_run: Callable[..., Run]) -> None:
    run = make_run([api.text("First answer."), api.text("Answer in new session.")])
    tui = run.start_tui()
    tui.submit("first prompt")
    run.wait_hook("Stop")
    run.wait_screen("First answer.")
    run.wait_native("idle")
    first = run.checkpoint("idle before /clear", is_idle_after_turn)
    first_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert (
        first_path and first.transcript_id and first_path.endswith(f"{first.transcript_id}.jsonl")
    )

    tui.submit("/clear")
    new_sid = run.wait_hook("SessionStart", where=lambda p: p.get("source") == "clear")[0][
        "session_id"
    ]
    assert new_sid != first.transcript_id
    tui.wait_ready()
    run.wait_native("idle")
    chat = run.checkpoint("after /clear", lambda c: c.state == "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert not [m for m in chat.messages if m.text == "first prompt"]

    tui.submit("prompt in the new session")
    run.wait_hook("Stop", count=2)
    run.wait_screen("Answer in new session.")
    run.wait_native("idle")
    chat = run.checkpoint(
        "idle in the new session", lambda c: is_idle_after_turn(c) and c.transcript_id == new_sid
    )
    path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert path != first_path and path.endswith(f"{new_sid}.jsonl")
    assert chat.transcript_path == path
    assert chat.messages[0].seq == 1
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    texts = [m.text for m in chat.messages]
    assert "first prompt" not in texts and "First answer." not in texts
    assert "prompt in the new session" in texts and "Answer in new session." in texts


def test_compact(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [api.text("First answer."), api.text(SUMMARY, label="summary")],
        side_reply=api.text(SUMMARY, label="side-summary"),
    )
    tui = run.start_tui()
    tui.submit("hello")
    run.wait_hook("Stop")
    run.wait_native("idle")
    run.checkpoint("idle before /compact", is_idle_after_turn)

    tui.submit("/compact")
    run.wait_hook("PostCompact", timeout=60)
    run.wait_native("idle")
    tui.wait_ready()
    chat = run.checkpoint("after /compact", no_wait_not_working)
    assert chat.state == "needs_input"


def _sub_router(req: api.RecordedRequest) -> str | None:
    return "sub" if SUB_MARK in req.first_user_text() else None


def test_background_subagent_permission_after_main_stop(make_run: Callable[..., Run]) -> None:
    agent_input = {
        "description": "Write sub.txt",
        "prompt": f"{SUB_MARK}: run `echo sub > sub.txt` with Bash, then report.",
        "subagent_type": "general-purpose",
        "run_in_background": True,
    }
    run = make_run(
        [
            api.tool_use("Agent", agent_input),
            api.text("Agent launched; waiting for it."),
            api.text("The subagent finished."),
        ],
        routes={
            "sub": [
                api.Reply(
                    content=[
                        {
                            "type": "tool_use",
                            "id": "toolu_sub0000000000000000001",
                            "name": "Bash",
                            "input": {
                                "command": "echo sub > sub.txt",
                                "description": "Write sub.txt",
                            },
                        }
                    ],
                    first_delay=3.0,
                ),
                api.text("Wrote sub.txt."),
            ]
        },
        router=_sub_router,
    )
    tui = run.start_tui()
    tui.submit("start a background agent")
    run.wait_hook("SubagentStart")
    stop = run.wait_hook("Stop")[0]
    assert stop["background_tasks"], "the main turn ended with no background task"
    assert not run.hooks("PermissionRequest"), "the subagent asked before the main Stop"
    chat = run.checkpoint("main stopped, subagent running", lambda c: c.state == "working")
    assert chat.activity == "working"
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert not run.hooks("PermissionRequest"), "the subagent asked before the checkpoint"

    run.wait_hook("PermissionRequest", where=lambda p: bool(p.get("agent_id")))
    run.wait_screen("Do you want to proceed?")
    run.wait_native("waiting")
    chat = run.checkpoint(
        "subagent prompt open",
        lambda c: c.state == "needs_input" and c.pending_approval is not None,
    )
    approval = chat.pending_approval
    assert approval is not None
    assert approval.tool_name == "Bash"
    assert approval.tool_input.get("command") == "echo sub > sub.txt"
    assert approval.agent_id
    assert chat.activity == "needs_input"

    tui.press("Enter")
    run.wait_hook("SubagentStop")
    run.wait_hook("Stop", count=2)
    run.wait_native("idle")
    run.checkpoint("all done", is_idle_after_turn)
    assert (run.h.cwd / "sub.txt").read_text() == "sub\n"


# The agent runs `agentspool` from its shell: the venv's bin dir on its PATH, the run in
# its environment (Spawn.env), the command allowed without a prompt.
REPO = Path(__file__).resolve().parents[2]
AGENTSPOOL_PATH = f"{sysconfig.get_path('scripts')}:{os.environ.get('PATH', '/usr/bin:/bin')}"
DECLARE_BLOCKED = 'agentspool lifecycle blocked --reason "needs the API key"'


def _declaring(command: str, call: str) -> api.Reply:
    return api.Reply(
        content=[
            {
                "type": "tool_use",
                "id": call,
                "name": "Bash",
                "input": {"command": command, "description": "Declare the task state"},
            }
        ]
    )


def _declared(run: Run, call: str) -> dict[str, Any]:
    """The end of the declaring Bash call (PostToolUse, or PostToolUseFailure when the
    command exited non-zero): what the command printed."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for event in ("PostToolUse", "PostToolUseFailure"):
            hits = run.hooks(event, where=lambda p: p.get("tool_use_id") == call)
            if hits:
                return hits[0]
        time.sleep(0.1)
    pytest.fail(f"the call {call} never ended\n{run.dump()}")


def test_the_agent_declares_blocked_then_done_and_a_subagent_cannot(
    make_run: Callable[..., Run],
) -> None:
    sub_prompt = f"{SUB_MARK}: declare the task done with `agentspool lifecycle done`."
    run = make_run(
        [
            _declaring(DECLARE_BLOCKED, "toolu_declare_blocked_000001"),
            api.text("I am blocked: I need the API key."),
            api.tool_use(
                "Agent",
                {
                    "description": "Declare done",
                    "prompt": sub_prompt,
                    "subagent_type": "general-purpose",
                    "run_in_background": True,
                },
            ),
            api.text("Agent launched; waiting for it."),
            api.text("The subagent could not declare."),
            _declaring("agentspool lifecycle done", "toolu_declare_done_00000001"),
            api.text("Done."),
        ],
        routes={
            "sub": [
                _declaring("agentspool lifecycle done", "toolu_sub_declare_done_0001"),
                api.text("I was refused."),
            ]
        },
        router=_sub_router,
    )
    tui = run.start_tui(
        extra_args=("--allowedTools", "Bash(agentspool lifecycle:*)"),
        extra_env={**run.spawn_env, "PATH": AGENTSPOOL_PATH},
    )
    tui.submit("declare that you are blocked")
    post = _declared(run, "toolu_declare_blocked_000001")
    assert f"run {run.run_id}: blocked: needs the API key" in str(post.get("tool_response"))
    chat = run.checkpoint("blocked declared", is_idle_after_turn)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")

    tui.submit("let a subagent declare done")
    run.wait_hook("SubagentStart")
    post = _declared(run, "toolu_sub_declare_done_0001")
    assert post.get("agent_id"), "the subagent's call carries its agent_id"
    assert "cannot declare its parent's task state" in str(post), post
    run.wait_hook("SubagentStop")
    run.wait_hook("Stop", count=3)
    chat = run.checkpoint("the subagent was refused", is_idle_after_turn)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")

    tui.submit("declare that you are done")
    post = _declared(run, "toolu_declare_done_00000001")
    assert f"run {run.run_id}: done" in str(post.get("tool_response"))
    chat = run.checkpoint("done declared", is_idle_after_turn)
    assert (chat.task_state, chat.task_reason) == ("done", "")


def test_the_declare_slash_command_runs_the_declaration_without_a_prompt(
    make_run: Callable[..., Run],
) -> None:
    """docs/agent/claude-command-declare.md as the user installs it: Claude Code expands
    it into the prompt, and its allowed-tools lets the declaration run unprompted."""
    run = make_run(
        [_declaring(DECLARE_BLOCKED, "toolu_declare_blocked_000002"), api.text("Blocked.")]
    )
    commands = run.h.claude_dir / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "docs" / "agent" / "claude-command-declare.md", commands / "declare.md")
    tui = run.start_tui(extra_env={**run.spawn_env, "PATH": AGENTSPOOL_PATH})
    tui.submit("/declare blocked needs the API key")
    post = _declared(run, "toolu_declare_blocked_000002")
    assert f"run {run.run_id}: blocked: needs the API key" in str(post.get("tool_response"))
    assert not run.hooks("PermissionRequest"), "the command's allowed-tools was not honoured"
    prompt = run.srv.main_requests[0].first_user_text()
    assert 'Declare the task state "blocked needs the API key"' in prompt, prompt
    chat = run.checkpoint("blocked declared", is_idle_after_turn)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")


def test_api_error_stop_failure(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [api.error(500, message="scripted: internal failure", should_retry=False, times=20)]
    )
    tui = run.start_tui()
    tui.submit("trigger an error")
    run.wait_hook("StopFailure", timeout=60)
    run.wait_native("idle")
    run.wait_screen("API Error")
    chat = run.checkpoint("after the API error", no_wait_not_working)
    assert chat.state == "needs_input"
    assert not run.hooks("Stop")


def test_sigkill_while_working(make_run: Callable[..., Run]) -> None:
    run = make_run([api.slow_text(SLOW_LINES, delay=0.15, chunk_chars=6)])
    tui = run.start_tui()
    tui.submit("stream slowly")
    run.srv.wait_main_requests(1)
    run.wait_screen("line 1 of")
    run.checkpoint("working", lambda c: c.state == "working")

    sigkill(tui)
    # The native file is left behind, still "busy": only the dead pid tells.
    assert (run.native() or {}).get("status") == "busy"
    assert not run.hooks("SessionEnd")
    chat = run.checkpoint("after SIGKILL", no_wait_not_working)
    assert chat.state == "ended"  # core: the agent process is gone
    assert chat.evidence[0].detail == f"the agent process {chat.pid} is gone"


def test_sigkill_with_permission_prompt_open(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("Bash", BASH_WRITE)])
    tui = run.start_tui()
    open_permission_prompt(run)
    run.wait_native("waiting")

    sigkill(tui)
    assert (run.native() or {}).get("status") == "waiting"  # stale, left behind
    chat = run.checkpoint("after SIGKILL", no_wait_not_working)
    assert chat.state == "ended"  # core: the agent process is gone
    assert chat.evidence[0].detail == f"the agent process {chat.pid} is gone"


def test_print_mode_auto_denied_tool(make_run: Callable[..., Run]) -> None:
    run = make_run([api.tool_use("Bash", BASH_WRITE), api.text("Could not write the file.")])
    proc = subprocess.Popen(
        claude.command(
            ["-p", "write hi to out.txt", "--permission-mode", "default", *run.spawn_args]
        ),
        cwd=run.h.cwd,
        env=claude.build_env(run.h, run.srv.url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[Chat] = []
    try:
        # Read while it runs, as a watcher would: a -p PermissionRequest is auto-denied,
        # so no read may ever report a wait.
        deadline = time.monotonic() + 90
        while proc.poll() is None:
            assert time.monotonic() < deadline, "claude -p did not finish"
            seen.append(run.read())
            time.sleep(0.02)
        stdout, stderr = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "Could not write the file." in stdout
    waits = [c for c in seen if c.pending_approval is not None or c.state == "question"]
    assert not waits, "a -p read reported a wait:\n  " + describe_chat(waits[0])

    events = [r.event for r in run.records()]
    assert "PermissionRequest" in events and "PostToolBatch" in events, events
    assert events.index("PermissionRequest") < events.index("PostToolBatch")
    chat = run.checkpoint("after -p", is_ended_after_turn)
    assert "Could not write the file." in [m.text for m in chat.messages]
    assert not (run.h.cwd / "out.txt").exists()
