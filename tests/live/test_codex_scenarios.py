"""Tier 2: the real ``codex`` 0.169.0 armed with agentspool's own hooks.

Every test starts the real CLI with ``agentspool.setup("codex", …)`` — ``spawn.args`` on
the command line, ``spawn.env`` (the run id) in its environment — against the scripted
Responses server, and asserts what ``read_chat`` composes — ``state``, ``activity``,
``pending_approval`` / ``pending_dialog`` — at every checkpoint.

Checkpoints wait on observable conditions (screen text, a hook record in the spool, a
rollout record) and then poll ``read_chat`` until the expected state lands. A checkpoint
then re-reads after a short pause (the state must be stable, not a passing frame) and
cross-checks it against independent oracles — the TUI's screen and the rollout's own
turn lifecycle: no open dialog may be reported while the screen shows none, and no
``working`` while the rollout has closed the turn and the screen is idle.

Between an approval and the command's end or 10 s yield Codex writes nothing; the
approved command running under the codex process is the evidence that it was approved,
and the run reads ``working`` within a second of the key.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from harness import codex, tmux
from harness import responses_server as rs
from harness.checkpoints import (
    ScenarioRun,
    event_fields,
    is_ended_after_turn,
    is_idle_after_turn,
    is_working,
)

import agentspool
from agentspool import Chat, locate_transcript, read_chat
from agentspool.adapters.codex import _lifecycle
from agentspool.core.seam import Spawn

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not codex.CODEX_BIN.exists() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

PROVIDER = "codex"
TUI_ARGS = ("-a", "on-request", "-s", "read-only")
QUESTION_MARKERS = ("Question 1/1", "enter to submit answer")
BUSY_MARKER = "esc to interrupt"


# ------------------------------------------------------------------ helpers ---


def _short(value: object) -> str:
    return str(value or "")[-8:]


def _rollout_turn_closed(path: str) -> bool | None:
    """The rollout's own word on the latest turn: closed (``task_complete`` /
    ``turn_aborted`` for the last ``task_started``), open, or ``None`` (no turn yet)."""
    turn = None
    closed = False
    for rec in codex.read_rollout(Path(path)):
        payload = rec.get("payload")
        if rec.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        if payload.get("type") == "task_started":
            turn, closed = payload.get("turn_id"), False
        elif payload.get("type") in ("task_complete", "turn_aborted"):
            closed = closed or payload.get("turn_id") == turn
    return None if turn is None else closed


def _is_function_output(rec: dict[str, Any], call_id: str = "") -> bool:
    payload = rec.get("payload")
    return (
        rec.get("type") == "response_item"
        and isinstance(payload, dict)
        and payload.get("type") == "function_call_output"
        and (not call_id or payload.get("call_id") == call_id)
    )


@dataclass
class Oracle:
    """What the CLI itself shows at one instant: its screen, and its rollout's turn."""

    screen: str
    turn_closed: bool | None

    @property
    def dialog_shown(self) -> bool:
        return codex.APPROVAL_MARKER in self.screen or any(
            m in self.screen for m in QUESTION_MARKERS
        )

    @property
    def cli_idle(self) -> bool:
        # The screen alone looks idle while text streams (CODEX.md §5); the rollout's
        # closed turn makes it sufficient.
        return self.turn_closed is not False and codex.is_idle_screen(self.screen)


@dataclass
class Run(ScenarioRun):
    """One armed run: private CODEX_HOME, private runtime dir, scripted server, maybe a TUI."""

    home: codex.CodexHome
    srv: rs.ResponsesServer
    runtime_dir: str
    run_id: str
    spawn: Spawn
    pane: tmux.Pane | None = None
    last: Chat | None = None
    log: list[str] = field(default_factory=list)
    gates: list[threading.Event] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    provider: ClassVar[str] = PROVIDER

    @property
    def run_dir(self) -> str:
        return self.spawn.run_dir

    # -- starting
    def start_tui(self, *extra: str, check_trust_modal: bool = False) -> tmux.Pane:
        self.pane = codex.start_tui(
            self.home,
            extra_args=[*TUI_ARGS, *self.spawn.args, *extra],
            extra_env=self.spawn.env,
            wait_ready=False,
        )
        screen = self.wait_screen(
            lambda s: (
                codex.HOOKS_REVIEW_MARKER in s or any(m in s for m in codex.TUI_READY_MARKERS)
            ),
            timeout=60,
        )
        if check_trust_modal:
            assert codex.HOOKS_REVIEW_MARKER not in screen, self.dump()
        codex.wait_tui_ready(self.pane)
        return self.pane

    def start_exec(self, prompt: str, *extra: str, extra_env: dict[str, str] | None = None) -> None:
        """``codex exec`` in the background, in its own session (killed at ``close``)."""
        assert self.proc is None
        out = self.home.root / "exec.out"
        with open(out, "w") as stdout, open(out.with_suffix(".err"), "w") as stderr:
            self.proc = subprocess.Popen(
                codex.exec_argv(prompt, extra_args=[*self.spawn.args, *extra]),
                cwd=self.home.cwd,
                env=codex.build_env(self.home, {**self.spawn.env, **(extra_env or {})}),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )

    def finish_exec(self, timeout: float = 60.0) -> tuple[str, str]:
        """Wait for ``codex exec`` to exit 0; its stdout and stderr."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"codex exec still running after {timeout}s\n{self.dump()}")
        out = self.home.root / "exec.out"
        stdout, stderr = out.read_text(), out.with_suffix(".err").read_text()
        assert code == 0, stderr[-3000:]
        return stdout, stderr

    def gate(self, reply: rs.Reply) -> threading.Event:
        """Hold ``reply``'s stream after its first delta until the returned event is set."""
        reply.gate = threading.Event()
        reply.gate_timeout = 60.0
        self.gates.append(reply.gate)
        return reply.gate

    def close(self) -> None:
        for gate in self.gates:
            gate.set()
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # codex and its background terminals
            self.proc.wait()
        self.home.cleanup()  # kills every tmux server and process started in a pane

    # -- driving
    def submit(self, text: str) -> None:
        assert self.pane is not None
        codex.submit(self.pane, text)

    def press(self, *keys: str) -> None:
        assert self.pane is not None
        self.pane.send_keys(*keys)

    def wait_screen(self, needle: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        assert self.pane is not None
        try:
            if callable(needle):
                return self.pane.wait_until(needle, timeout)
            return self.pane.wait_for(needle, timeout)
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def wait_idle_screen(self, timeout: float = 30.0) -> str:
        return self.wait_screen(codex.is_idle_screen, timeout)

    def wait_rollout(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> dict[str, Any]:
        try:
            return codex.wait_rollout_record(self.home, predicate, timeout=timeout)
        except TimeoutError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def oracle(self) -> Oracle:
        screen = self.pane.screen() if self.pane is not None else ""
        path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        return Oracle(screen, _rollout_turn_closed(path) if path else None)

    def screen_oracle(self) -> Oracle | None:
        return self.oracle() if self.pane is not None else None

    # -- diagnostics
    def _events(self, path: str) -> list[str]:
        """The adapter's canonical events for this run, by evidence time."""
        from agentspool.adapters.codex._rollout import RolloutParser, thread_id_from_path
        from agentspool.adapters.codex._signals import HookTranslator

        translator = HookTranslator()
        events = [(a, e) for r in self.records() for a, e in translator.translate(r)]
        if path:
            parser = RolloutParser(thread_id_from_path(path))
            with open(path, "rb") as fh:
                for raw in fh:
                    parser.feed_line(raw)
            events += [("", e) for e in parser.events]
        t0 = min((e.at for _, e in events if e.at), default=0.0)
        out = []
        for agent, e in sorted(events, key=lambda ae: ae[1].at):
            fields = event_fields(e)
            for k in ("epoch", "turn_id"):
                if k in fields:
                    fields[k] = _short(fields[k])
            where = f"[{_short(agent)}] " if agent else ""
            out.append(f"{e.at - t0:7.3f} {where}{type(e).__name__} {e.source} {fields}")
        return out

    def spool_keys(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        keys = {
            k: payload[k]
            for k in ("source", "reason", "trigger", "tool_name", "tool_use_id")
            if payload.get(k)
        }
        for k in ("session_id", "turn_id", "agent_id"):
            if payload.get(k):
                keys[k] = _short(payload[k])
        tool_input = payload.get("tool_input")
        if isinstance(tool_input, dict) and tool_input.get("command"):
            keys["command"] = tool_input["command"]
        return keys

    def dump(self) -> str:
        out = self.dump_head()
        path = ""
        with contextlib.suppress(Exception):
            path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        out.append(f"located transcript: {path or '<not located>'}")
        for rollout in codex.rollouts(self.home):
            out.append(f"rollout {rollout.name}:")
            for rec in codex.read_rollout(rollout)[-30:]:
                payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
                kind = f"{rec.get('type')}/{payload.get('type', '')}"
                extra = {
                    k: payload[k] for k in ("name", "call_id", "reason", "role") if payload.get(k)
                }
                if payload.get("turn_id"):
                    extra["turn"] = _short(payload["turn_id"])
                if payload.get("error"):
                    extra["error"] = payload["error"]
                out.append(f"  {rec.get('timestamp', '')[11:23]} {kind} {extra}")
        with contextlib.suppress(Exception):
            out.append("canonical events (evidence-time order):")
            out += ["  " + line for line in self._events(path)]
        out.append("server: " + "; ".join(self.srv.summary()))
        if self.pane is not None:
            with contextlib.suppress(Exception):
                out.append("screen:\n" + codex.clean_screen(self.pane.screen()))
        return "\n".join(out)


@pytest.fixture
def make_run(tmp_path: Path, runtime_dir: str) -> Iterator[Callable[..., Run]]:
    """``make_run(replies, subagent_replies=[], trust="bypass")``: one server, one armed run."""
    runs: list[Run] = []
    servers: list[rs.ResponsesServer] = []

    def make(
        replies: list[rs.Reply],
        *,
        subagent_replies: list[rs.Reply] | None = None,
        trust: str = "bypass",
    ) -> Run:
        assert not runs, "one run per test"
        srv = rs.ResponsesServer(replies, subagent_replies=subagent_replies or []).start()
        servers.append(srv)
        home = codex.make_home(srv.base_url, root=tmp_path / "codex")
        run_id = "live-" + os.urandom(4).hex()
        if trust == "bypass":
            spawn = agentspool.setup(PROVIDER, run_id, runtime_dir)
        else:
            spawn = _lifecycle.setup(
                run_id, runtime_dir, trust_mode="config", home=str(home.codex_home)
            )
        run = Run(home=home, srv=srv, runtime_dir=runtime_dir, run_id=run_id, spawn=spawn)
        runs.append(run)
        return run

    try:
        yield make
    finally:
        for run in runs:
            run.close()
        for srv in servers:
            srv.stop()


def is_approval_open(chat: Chat) -> bool:
    return chat.state == "needs_input" and chat.pending_approval is not None


def visible(chat: Chat, role: str) -> list[str]:
    return [
        m.text
        for m in chat.messages
        if m.role == role and m.kind == "text" and m.visibility == "visible" and not m.is_meta
    ]


def before_any_prompt(run: Run) -> None:
    assert locate_transcript(PROVIDER, run.run_id, run.runtime_dir) == ""
    chat = run.checkpoint("before any prompt", lambda c: c.state == "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert chat.activity in ("idle", "unknown")
    assert chat.messages == []


def open_approval(run: Run, command: str) -> Chat:
    """Prompt for an escalated ``command``; the approval prompt is open."""
    run.submit(f"run {command}")
    run.wait_screen(codex.APPROVAL_MARKER)
    (asked,) = run.wait_hook("PermissionRequest")
    (pre,) = run.hooks("PreToolUse")
    chat = run.checkpoint("approval open", is_approval_open)
    assert chat.activity == "needs_input"
    assert chat.pending_dialog is None
    approval = chat.pending_approval
    assert approval is not None
    assert approval.tool_name == "Bash"
    assert approval.tool_input.get("command") == command
    assert approval.tool_use_id == pre["tool_use_id"]
    assert approval.agent_id == ""
    assert asked["turn_id"] == pre["turn_id"]
    return chat


# -------------------------------------------------------------------- tests ---


def test_tui_plain_turn_working_then_idle(make_run: Callable[..., Run]) -> None:
    reply = rs.text("Hello from the scripted server.", chunks=4)
    run = make_run([reply])
    gate = run.gate(reply)
    run.start_tui()
    before_any_prompt(run)

    run.submit("say hello")
    run.srv.wait_streaming()
    run.wait_hook("PreModelRequest")
    chat = run.checkpoint("model streaming", is_working)
    assert visible(chat, "user") == ["say hello"]

    gate.set()
    (stop,) = run.wait_hook("Stop")
    run.wait_screen("Hello from the scripted server.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the turn", is_idle_after_turn)
    assert visible(chat, "user") == ["say hello"]
    assert visible(chat, "assistant") == ["Hello from the scripted server."]
    assert chat.transcript_id == stop["session_id"]
    assert chat.transcript_path == stop["transcript_path"]
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    assert chat.usage.output_tokens > 0


def test_tui_approval_then_approved(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [rs.exec_command("touch approved.txt", escalated=True), rs.text("The file was created.")]
    )
    run.start_tui()
    open_approval(run, "touch approved.txt")

    run.press("y")
    run.wait_screen("You approved")
    run.wait_hook("PostToolUse")
    run.checkpoint(
        "approved",
        lambda c: (
            c.pending_approval is None
            and c.pending_dialog is None
            and c.state in ("working", "needs_input")
        ),
        stable=False,
    )
    run.wait_hook("Stop")
    run.wait_screen("The file was created.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the approved turn", is_idle_after_turn)
    assert (run.home.cwd / "approved.txt").exists()
    kinds = [m.kind for m in chat.messages if m.visibility == "visible" and not m.is_meta]
    assert kinds[-3:] == ["tool_call", "tool_result", "text"]


def test_tui_approval_esc(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [rs.exec_command("touch denied.txt", escalated=True), rs.text("should not be used")]
    )
    run.start_tui()
    open_approval(run, "touch denied.txt")

    run.press("Escape")
    run.wait_hook("Interrupt")
    run.wait_rollout(codex.is_event("turn_aborted"))
    run.wait_screen("You canceled the request")
    run.wait_idle_screen()
    chat = run.checkpoint("Esc on the approval", is_idle_after_turn)
    assert not (run.home.cwd / "denied.txt").exists()
    assert chat.messages[-1].kind == "interrupt"
    assert not run.hooks("Stop") and not run.hooks("PostToolUse")


def test_tui_question_answered(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [
            rs.request_user_input(),
            rs.text("You chose a color."),
            rs.request_user_input(),
            rs.text("should not be used"),
        ]
    )
    run.start_tui()
    assert run.pane is not None
    codex.plan_mode(run.pane)

    run.submit("ask me a color")
    run.wait_screen("Which color do you prefer?")
    (pre,) = run.wait_hook("PreToolUse", where=lambda p: p["tool_name"] == "request_user_input")
    chat = run.checkpoint("question open", lambda c: c.state == "question")
    assert chat.activity == "needs_input"
    assert chat.pending_approval is None
    dialog = chat.pending_dialog
    assert dialog is not None and dialog.kind == "question"
    assert dialog.tool_use_id == pre["tool_use_id"]
    assert dialog.prompt == "Which color do you prefer?"
    assert [o.label for o in dialog.options] == ["Red", "Blue"]
    assert [o.description for o in dialog.options] == ["warm", "cool"]
    assert [q.header for q in dialog.questions] == ["Color"]

    # Option 1 (Red) is preselected. A key that lands while the TUI is still redrawing
    # can be dropped (as in Claude Code's TUI): press again only while the question is
    # still unanswered and still on screen.
    answered = lambda p: p["tool_name"] == "request_user_input"  # noqa: E731
    for _ in range(3):
        run.press("Enter")
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not run.hooks("PostToolUse", answered):
            time.sleep(0.1)
        if run.hooks("PostToolUse", answered) or "Question 1/1" not in run.pane.screen():
            break
    run.wait_hook("Stop")
    run.wait_screen("You chose a color.")
    run.wait_idle_screen()
    chat = run.checkpoint("answered, idle", is_idle_after_turn)
    answers = [m for m in chat.messages if m.tool_name == "request_user_input" and m.role == "user"]
    assert [m.text for m in answers] == ["Which color do you prefer?: Red"]

    # Again, and Esc on the question: the turn is interrupted, nothing stays open.
    run.submit("ask me again")
    run.wait_screen("Question 1/1")
    run.wait_hook("PreToolUse", count=2, where=lambda p: p["tool_name"] == "request_user_input")
    chat = run.checkpoint("question open again", lambda c: c.state == "question")
    assert chat.pending_dialog is not None and chat.pending_dialog.tool_use_id != pre["tool_use_id"]
    run.press("Escape")
    run.wait_hook("Interrupt")
    run.wait_rollout(codex.is_event("turn_aborted"))
    run.wait_idle_screen()
    chat = run.checkpoint("Esc on the question", is_idle_after_turn)
    assert chat.messages[-1].kind == "interrupt"
    assert run.srv.remaining == 1  # "should not be used" was not


def test_tui_esc_while_streaming(make_run: Callable[..., Run]) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    run = make_run([rs.slow_text(words, seconds=40, chunks=200)])
    run.start_tui()

    run.submit("write a long answer")
    run.srv.wait_streaming()
    run.wait_screen("word5")
    run.checkpoint("model streaming", is_working)

    run.press("Escape")
    run.wait_hook("Interrupt")
    run.wait_rollout(codex.is_event("turn_aborted"))
    run.wait_idle_screen()
    chat = run.checkpoint("Esc while streaming", is_idle_after_turn)
    assert chat.messages[-1].kind == "interrupt"
    assert visible(chat, "assistant") == []  # the partial text is not persisted


def _poll_running_command(req: rs.Request) -> rs.Reply:
    """``write_stdin`` on the session a yielded ``exec_command`` left running: the model
    waits for the command, so the turn stays open while it runs."""
    for output in req.function_outputs().values():
        found = re.search(r"Process running with session ID (\d+)", output)
        if found:
            args = {"session_id": int(found.group(1)), "chars": "", "yield_time_ms": 30000}
            return rs.function_call("write_stdin", args)
    return rs.text("no running command found")


def test_tui_long_command_after_approval(make_run: Callable[..., Run]) -> None:
    run = make_run(
        [
            rs.exec_command("sleep 18", escalated=True),
            rs.dynamic(_poll_running_command, label="write_stdin"),
            rs.text("The long command finished."),
        ]
    )
    run.start_tui()
    open_approval(run, "sleep 18")

    call_id = run.hooks("PreToolUse")[0]["tool_use_id"]
    run.press("y")
    run.wait_screen("You approved")
    run.wait_screen(BUSY_MARKER)
    # Nothing fires until the command ends or yields at 10 s: the running command is
    # the evidence.
    run.checkpoint("approved, before the yield", is_working)
    rollout = Path(locate_transcript(PROVIDER, run.run_id, run.runtime_dir))
    assert not any(_is_function_output(r, call_id) for r in codex.read_rollout(rollout)), run.dump()

    run.wait_rollout(lambda r: _is_function_output(r, call_id), timeout=20)
    run.wait_hook("PreModelRequest", count=2)
    chat = run.checkpoint("the command runs on after the yield", is_working)
    screen = run.oracle().screen
    assert BUSY_MARKER in screen, screen
    assert not run.hooks("PostToolUse")  # fires when sleep ends (not at the yield)
    assert not run.hooks("Stop")

    run.wait_hook("Stop", timeout=30)
    run.wait_screen("The long command finished.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the long command", is_idle_after_turn)
    assert visible(chat, "assistant")[-1] == "The long command finished."


def test_tui_approved_command_reads_working_while_it_runs(make_run: Callable[..., Run]) -> None:
    command = "sleep 8 && echo done > done.txt"
    run = make_run([rs.exec_command(command, escalated=True), rs.text("The command finished.")])
    run.start_tui()
    open_approval(run, command)

    approved = time.monotonic()
    run.press("y")
    reads = run.watch(lambda: bool(run.hooks("PostToolUse")), timeout=40)
    ended = time.monotonic()
    # ~8 s of the command running, no hook and no rollout record meanwhile, read every
    # 0.25 s: every read from 1 s after the key until the command's end is working.
    run.require_working(reads, approved + 1.0, ended, least=20)
    events = [r.event for r in run.records()]
    assert events[events.index("PermissionRequest") + 1] == "PostToolUse", events

    run.wait_hook("Stop")
    run.wait_screen("The command finished.")
    run.wait_idle_screen()
    run.checkpoint("idle after the command", is_idle_after_turn)
    assert (run.home.cwd / "done.txt").read_text() == "done\n"


def test_tui_sigkill_with_approval_open(make_run: Callable[..., Run]) -> None:
    """SIGKILL fires no hook and writes no rollout record: the dead codex process (the
    hooks' parent) is what says nothing waits any more."""
    run = make_run([rs.exec_command("touch never.txt", escalated=True)])
    run.start_tui()
    open_approval(run, "touch never.txt")
    assert run.pane is not None
    pid = codex.codex_pid(run.pane)
    assert pid is not None
    assert {r.agent_pid for r in run.records()} == {pid}

    os.kill(pid, signal.SIGKILL)
    chat = run.checkpoint(
        "after SIGKILL", lambda c: c.pending_approval is None and c.activity == "idle"
    )
    assert chat.state == "ended"  # core: the agent process is gone
    assert (chat.pid, chat.process) == (pid, "gone")
    assert not run.hooks("Stop") and not run.hooks("Interrupt")


def test_tui_api_error(make_run: Callable[..., Run]) -> None:
    run = make_run([rs.http_error(500), rs.text("Recovered after the error.")])
    run.start_tui()

    run.submit("this turn gets HTTP 500")
    run.wait_rollout(codex.is_event("task_complete"))
    run.wait_idle_screen()
    chat = run.checkpoint("after the HTTP 500", is_idle_after_turn)
    assert chat.messages[-1].kind == "error" and chat.messages[-1].is_error
    assert not run.hooks("Stop")  # an errored turn fires no Stop

    run.submit("try again")
    run.wait_hook("Stop")
    run.wait_screen("Recovered after the error.")
    run.wait_idle_screen()
    chat = run.checkpoint("the next turn works", is_idle_after_turn)
    assert visible(chat, "assistant") == ["Recovered after the error."]


def test_tui_clear_follows_the_new_rollout(make_run: Callable[..., Run]) -> None:
    run = make_run([rs.text("First thread answer."), rs.text("Second thread answer.")])
    run.start_tui()

    run.submit("first prompt")
    run.wait_hook("Stop")
    run.wait_idle_screen()
    first = run.checkpoint("first thread idle", is_idle_after_turn)
    first_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert first_path and visible(first, "user") == ["first prompt"]

    run.submit("/clear")
    run.wait_screen(lambda s: "First thread answer." not in s)
    run.wait_idle_screen()
    # The new thread's rollout is created lazily at its first prompt: until then the
    # run's transcript is still the first one, and nothing is pending or working.
    chat = run.checkpoint("after /clear, before a prompt", is_idle_after_turn)
    assert locate_transcript(PROVIDER, run.run_id, run.runtime_dir) == first_path

    run.submit("second prompt")
    run.wait_hook("SessionStart", where=lambda p: p.get("source") == "clear")
    run.wait_hook("Stop", count=2)
    run.wait_screen("Second thread answer.")
    run.wait_idle_screen()
    chat = run.checkpoint("second thread idle", is_idle_after_turn)
    second_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert second_path and second_path != first_path
    assert chat.transcript_path == second_path
    assert chat.transcript_id and chat.transcript_id != first.transcript_id
    assert chat.messages[0].seq == 1
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    assert visible(chat, "user") == ["second prompt"]
    assert visible(chat, "assistant") == ["Second thread answer."]


def test_exec_plain_run(make_run: Callable[..., Run]) -> None:
    reply = rs.text("Hello from exec.", chunks=4)
    run = make_run([reply])
    gate = run.gate(reply)
    before_any_prompt(run)

    run.start_exec("say hello")
    run.srv.wait_streaming()
    run.wait_hook("PreModelRequest")
    run.checkpoint("exec: model streaming", is_working)

    gate.set()
    stdout, _ = run.finish_exec()
    assert "Hello from exec." in stdout
    run.wait_hook("SessionEnd")
    chat = run.checkpoint("exec finished", is_ended_after_turn)
    assert visible(chat, "user") == ["say hello"]
    assert visible(chat, "assistant") == ["Hello from exec."]
    assert chat.transcript_path == codex.rollouts(run.home)[0].as_posix()


def test_exec_subagent_parent_ends_idle(make_run: Callable[..., Run]) -> None:
    child_reply = rs.text("Hi from the sub-agent.", chunks=4)
    run = make_run(
        [
            rs.spawn_agent("Say hi from the sub-agent."),
            rs.wait_agent(timeout_ms=30000),
            rs.text("The sub-agent finished."),
        ],
        subagent_replies=[child_reply],
    )
    gate = run.gate(child_reply)

    run.start_exec("delegate to a sub-agent")
    run.srv.wait_streaming()
    (start,) = run.wait_hook("SubagentStart")
    chat = run.checkpoint("parent while the sub-agent works", is_working)

    gate.set()
    run.finish_exec()
    run.wait_hook("SubagentStop")
    (stop,) = run.wait_hook("Stop")
    chat = run.checkpoint("parent ends idle", is_ended_after_turn)
    assert chat.transcript_id == stop["session_id"]
    assert visible(chat, "assistant")[-1] == "The sub-agent finished."
    child = start["agent_id"]
    assert [m.agent_id for m in chat.messages if m.kind == "subagent" and m.agent_id] == [child]

    # The child's own rollout, read for the same run: its own conversation, ended.
    child_chat = read_chat(PROVIDER, run.run_id, run.runtime_dir, start["transcript_path"])
    assert child_chat.transcript_id == child
    assert child_chat.activity == "idle" and child_chat.state == "ended"  # exec exited
    assert child_chat.pending_approval is None and child_chat.pending_dialog is None
    assert "Hi from the sub-agent." in visible(child_chat, "assistant")


# The agent runs `agentspool` from its shell: the venv's bin dir on its PATH, the run in
# its environment (Spawn.env). The sandbox lets the command write the run's ledger only
# where it may write: workspace-write includes /tmp, where the test's runtime dir is.
AGENTSPOOL_BIN = sysconfig.get_path("scripts")
AGENTSPOOL_PATH = f"{AGENTSPOOL_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
DECLARE_BLOCKED = 'agentspool lifecycle blocked --reason "needs the API key"'


def _call_output(run: Run, call_id: str) -> dict[str, Any]:
    """The PostToolUse of one shell call: what the command printed."""
    [post] = run.wait_hook("PostToolUse", where=lambda p: p.get("tool_use_id") == call_id)
    return post


def test_exec_the_agent_declares_blocked_then_done_and_a_subagent_cannot(
    make_run: Callable[..., Run],
) -> None:
    spawn = rs.spawn_agent("Declare the task done with `agentspool lifecycle done`.")
    child_after = rs.text("I was refused.", chunks=2)
    run = make_run(
        [
            rs.exec_command(DECLARE_BLOCKED, call_id="call_blocked"),
            spawn,
            rs.wait_agent(timeout_ms=30000),
            rs.exec_command("agentspool lifecycle done", call_id="call_done"),
            rs.text("Done."),
        ],
        subagent_replies=[
            rs.exec_command("agentspool lifecycle done", call_id="call_sub_done"),
            child_after,
        ],
    )
    spawn_gate, child_gate = run.gate(spawn), run.gate(child_after)
    # Codex runs shell commands in a login shell, which takes PATH from /etc/profile:
    # where a user's PATH is set, in ~/.profile (as for a `pip install --user`).
    (run.home.home / ".profile").write_text(f'PATH="{AGENTSPOOL_BIN}:$PATH"\n')
    run.start_exec(
        "declare blocked, let a sub-agent declare done, then declare done",
        "-s",
        "workspace-write",  # read-only: "Read-only file system" on the ledger
        extra_env={"PATH": AGENTSPOOL_PATH},
    )
    post = _call_output(run, "call_blocked")
    assert f"run {run.run_id}: blocked: needs the API key" in str(post), post
    chat = run.checkpoint("blocked declared", is_working)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")

    spawn_gate.set()
    post = _call_output(run, "call_sub_done")
    assert post.get("agent_id"), "the sub-agent's call carries its agent_id"
    assert "cannot declare its parent's task state" in str(post), post
    chat = run.checkpoint("the sub-agent was refused", is_working)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")

    child_gate.set()
    run.finish_exec()
    post = _call_output(run, "call_done")
    assert f"run {run.run_id}: done" in str(post), post
    chat = run.checkpoint("done declared; exec exited", is_ended_after_turn)
    assert (chat.task_state, chat.task_reason) == ("done", "")


def test_exec_read_only_sandbox_refuses_the_declaration_in_one_line(
    make_run: Callable[..., Run],
) -> None:
    run = make_run(
        [rs.exec_command(DECLARE_BLOCKED, call_id="call_blocked"), rs.text("Could not.")]
    )
    (run.home.home / ".profile").write_text(f'PATH="{AGENTSPOOL_BIN}:$PATH"\n')
    run.start_exec("declare blocked", "-s", "read-only", extra_env={"PATH": AGENTSPOOL_PATH})
    run.finish_exec()
    said = str(_call_output(run, "call_blocked").get("tool_response"))
    ledger_path = os.path.join(run.run_dir, "ledger.spool")
    assert f"cannot write {ledger_path}: Read-only file system" in said, said
    assert said.count("\n") == 1 and "Traceback" not in said
    chat = run.checkpoint("nothing declared", is_ended_after_turn)
    assert (chat.task_state, chat.task_reason) == ("active", "")


def test_tui_hooks_trusted_by_config_without_bypass(make_run: Callable[..., Run]) -> None:
    run = make_run([rs.text("Trusted hooks answer.")], trust="config")
    assert _lifecycle.BYPASS_FLAG not in run.spawn.args
    run.start_tui(check_trust_modal=True)
    before_any_prompt(run)

    run.submit("hello")
    run.wait_hook("Stop")
    run.wait_screen("Trusted hooks answer.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the turn (trusted, no bypass)", is_idle_after_turn)
    assert visible(chat, "assistant") == ["Trusted hooks answer."]
    events = [r.event for r in run.records()]
    assert events[:3] == ["SessionStart", "UserPromptSubmit", "PreModelRequest"], events
    assert events[-1] == "Stop", events
    assert _lifecycle.untrust(str(run.home.codex_home)) is True
