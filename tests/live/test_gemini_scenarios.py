"""Tier 2: the real ``gemini`` (Gemini CLI 0.61.0) with agentspool's hooks installed.

Every test installs the hooks into the run's private user settings (``agentspool install
gemini-cli``: Gemini CLI cannot be armed per run, docs/adr/0028-gemini-cli-arming.md),
arms a run with ``agentspool.setup("gemini-cli", …)`` — ``spawn.env`` in the CLI's
environment — starts the TUI under tmux against the scripted Gemini server, and asserts
what ``read_chat`` composes — ``state``, ``activity``, ``pending_approval`` /
``pending_dialog`` — at every checkpoint.

Checkpoints wait on observable conditions (screen text, a hook record in the spool, a
chat-file record, a request at the server) and then poll ``read_chat`` until the
expected state lands; the state must then hold 0.5 s later and agree with the screen
(no dialog reported while the CLI shows none; no ``working`` while it is idle).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from harness import gemini, tmux
from harness import gemini_server as gs
from harness.checkpoints import (
    ScenarioRun,
    event_fields,
    is_ended_after_turn,
    is_idle_after_turn,
    is_working,
)

import agentspool
from agentspool import Chat, locate_transcript, read_chat
from agentspool.core.seam import Spawn

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not gemini.GEMINI_BIN.exists() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

PROVIDER = "gemini-cli"
QUESTION_MARKER = "Answer Questions"
QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "type": "choice",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
        }
    ]
}


def _short(value: object) -> str:
    return str(value or "")[-8:]


@dataclass
class Oracle:
    """What the CLI itself shows at one instant."""

    screen: str

    @property
    def dialog_shown(self) -> bool:
        return gemini.APPROVAL_MARKER in self.screen or QUESTION_MARKER in self.screen

    @property
    def cli_idle(self) -> bool:
        return gemini.is_idle_screen(self.screen)


@dataclass
class Run(ScenarioRun):
    """One armed run: private GEMINI_CLI_HOME and runtime dir, scripted server, a TUI."""

    home: gemini.GeminiHome
    srv: gs.GeminiServer
    runtime_dir: str
    run_id: str
    spawn: Spawn
    pane: tmux.Pane | None = None
    last: Chat | None = None
    log: list[str] = field(default_factory=list)
    gates: list[threading.Event] = field(default_factory=list)
    provider: ClassVar[str] = PROVIDER

    @property
    def run_dir(self) -> str:
        return self.spawn.run_dir

    def start_tui(self) -> tmux.Pane:
        self.pane = gemini.start_tui(self.home, extra_env=self.spawn.env)
        return self.pane

    def gate(self, reply: gs.Reply) -> threading.Event:
        """Hold ``reply``'s stream after its first delta until the returned event is set."""
        reply.gate = threading.Event()
        reply.gate_timeout = 90.0
        self.gates.append(reply.gate)
        return reply.gate

    def close(self) -> None:
        for gate in self.gates:
            gate.set()
        self.home.cleanup()

    # -- driving
    def submit(self, text: str) -> None:
        assert self.pane is not None
        gemini.submit(self.pane, text)

    def press(self, *keys: str) -> None:
        assert self.pane is not None
        self.pane.send_keys(*keys)

    def answer(self, keys: list[str], marker: str) -> None:
        assert self.pane is not None
        try:
            gemini.answer(self.pane, keys, marker)
        except tmux.TmuxTimeoutError:
            pytest.fail(f"{keys} never answered {marker!r}\n{self.dump()}")

    def wait_screen(self, needle: str | Callable[[str], bool], timeout: float = 60.0) -> str:
        assert self.pane is not None
        try:
            if callable(needle):
                return self.pane.wait_until(needle, timeout)
            return self.pane.wait_for(needle, timeout)
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def wait_idle_screen(self, timeout: float = 60.0) -> str:
        return self.wait_screen(gemini.is_idle_screen, timeout)

    def wait_chat_record(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> None:
        deadline = time.monotonic() + timeout
        while not any(predicate(r) for f in self.home.chat_files() for r in gemini.read_jsonl(f)):
            if time.monotonic() > deadline:
                pytest.fail(f"no such chat record after {timeout}s\n{self.dump()}")
            time.sleep(0.1)

    def quit(self) -> None:
        assert self.pane is not None
        self.submit("/quit")
        try:
            gemini.wait_exited(self.pane)
        except TimeoutError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def screen_oracle(self) -> Oracle | None:
        return Oracle(self.pane.screen()) if self.pane is not None else None

    # -- diagnostics
    def spool_keys(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        keys = {
            k: payload[k]
            for k in ("source", "reason", "tool_name", "notification_type")
            if payload.get(k)
        }
        if payload.get("session_id"):
            keys["session_id"] = _short(payload["session_id"])
        for key in ("tool_input", "details"):
            value = payload.get(key)
            if isinstance(value, dict) and value.get("command"):
                keys["command"] = value["command"]
        return keys

    def _events(self, path: str) -> list[str]:
        from agentspool.adapters.gemini_cli._chat import ChatParser
        from agentspool.adapters.gemini_cli._signals import HookTranslator

        translator = HookTranslator()
        events = [e for r in self.records() for e in translator.translate(r)]
        if path:
            parser = ChatParser(lifecycle=False)
            with open(path, "rb") as fh:
                for raw in fh:
                    parser.feed_line(raw.rstrip(b"\n"))
            events += parser.events
        t0 = min((e.at for e in events if e.at), default=0.0)
        out = []
        for e in sorted(events, key=lambda e: e.at):
            fields = event_fields(e)
            if "epoch" in fields:
                fields["epoch"] = _short(fields["epoch"])
            out.append(f"{e.at - t0:7.3f} {type(e).__name__} {e.source} {fields}")
        return out

    def dump(self) -> str:
        out = self.dump_head()
        path = ""
        with contextlib.suppress(Exception):
            path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        out.append(f"located transcript: {path or '<not located>'}")
        for chat in self.home.chat_files():
            out.append(f"chat file {chat.name}:")
            for rec in gemini.read_jsonl(chat)[-20:]:
                if "$set" in rec:
                    out.append(f"  $set {sorted(rec['$set'])}")
                    continue
                calls = [(c.get("name"), c.get("status")) for c in rec.get("toolCalls") or ()]
                content = json.dumps(rec.get("content"))[:60]
                out.append(
                    f"  {rec.get('timestamp', '')[11:23]} {rec.get('type')} {content} {calls}"
                )
        with contextlib.suppress(Exception):
            out.append("canonical events (evidence-time order):")
            out += ["  " + line for line in self._events(path)]
        out.append("server: " + "; ".join(self.srv.summary()))
        if self.pane is not None:
            with contextlib.suppress(Exception):
                out.append("screen:\n" + gemini.clean_screen(self.pane.screen()))
        return "\n".join(out)


@pytest.fixture
def make_run(
    tmp_path: Path, runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Run]]:
    """``make_run(replies)``: one server, the hooks installed, one armed run."""
    runs: list[Run] = []
    servers: list[gs.GeminiServer] = []

    def make(replies: list[gs.Reply]) -> Run:
        assert not runs, "one run per test"
        srv = gs.GeminiServer(replies).start()
        servers.append(srv)
        home = gemini.make_home(tmp_path / "gemini", srv.base_url)
        monkeypatch.setenv("GEMINI_CLI_HOME", str(home.gemini_home))
        report = agentspool.install(PROVIDER)
        assert [f.action for f in report.files] == ["updated"]
        run_id = "live-" + os.urandom(4).hex()
        spawn = agentspool.setup(PROVIDER, run_id, runtime_dir)
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


def visible(chat: Chat, role: str) -> list[str]:
    return [
        m.text
        for m in chat.messages
        if m.role == role and m.kind == "text" and m.visibility == "visible" and not m.is_meta
    ]


def is_approval_open(chat: Chat) -> bool:
    return chat.state == "needs_input" and chat.pending_approval is not None


def before_any_prompt(run: Run) -> None:
    run.wait_hook("SessionStart")
    chat = run.checkpoint("before any prompt", lambda c: c.state == "idle")
    assert chat.pending_approval is None and chat.pending_dialog is None
    assert chat.activity == "idle"
    assert [m for m in chat.messages if m.visibility == "visible"] == []
    assert chat.pid == run.records()[0].agent_pid > 1
    assert chat.process == "alive"


def open_approval(run: Run, command: str) -> Chat:
    run.wait_screen(gemini.APPROVAL_MARKER)
    run.wait_hook("Notification")
    chat = run.checkpoint("approval open", is_approval_open)
    assert chat.activity == "needs_input"
    assert chat.pending_dialog is None
    approval = chat.pending_approval
    assert approval is not None
    assert approval.tool_name == "run_shell_command"
    assert approval.tool_input == {"command": command}
    return chat


# -------------------------------------------------------------------- tests ---


def test_tui_prompt_working_approval_approved_idle(make_run: Callable[..., Run]) -> None:
    call = gs.shell("touch approved.txt")
    answer = gs.text("The file was created.")
    answer.parts.insert(0, {"text": "**Checking the result**\nThe touch ran.", "thought": True})
    run = make_run([call, answer])
    call_gate, answer_gate = run.gate(call), run.gate(answer)
    run.start_tui()
    before_any_prompt(run)

    run.submit("please touch approved.txt")
    run.srv.wait_streaming()
    run.wait_hook("BeforeAgent")
    chat = run.checkpoint("model streaming", is_working)
    assert visible(chat, "user") == ["please touch approved.txt"]

    call_gate.set()
    open_approval(run, "touch approved.txt")

    run.answer(["Enter"], gemini.APPROVAL_MARKER)
    run.wait_hook("AfterTool")
    run.srv.wait_for_requests(2)
    run.srv.wait_streaming()
    chat = run.checkpoint("approved, the model answers", is_working)
    assert (run.home.cwd / "approved.txt").exists()

    answer_gate.set()
    (done,) = run.wait_hook("AfterAgent")
    run.wait_screen("The file was created.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the turn", is_idle_after_turn)
    assert chat.transcript_id == done["session_id"]
    assert chat.transcript_path == done["transcript_path"]
    assert visible(chat, "assistant") == ["The file was created."]
    shown = [m for m in chat.messages if m.visibility == "visible" and not m.is_meta]
    assert [m.kind for m in shown] == ["text", "tool_call", "tool_result", "thinking", "text"]
    assert shown[3].text == "Checking the result\nThe touch ran."
    assert shown[1].tool_use_id == shown[2].tool_use_id != ""
    assert shown[1].tool_input == {"command": "touch approved.txt"}
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    # Two answers, each 120 prompt tokens (64 of them cached), 12 output + 3 thoughts.
    assert (chat.usage.input_tokens, chat.usage.cached_input_tokens) == (240, 128)
    assert (chat.usage.output_tokens, chat.usage.reasoning_tokens) == (30, 6)
    assert {m.model for m in chat.messages if m.usage is not None} == {"gemini-3.8-flash"}


def test_tui_approved_command_reads_working_while_it_runs(make_run: Callable[..., Run]) -> None:
    """Between the key and ``AfterTool`` Gemini CLI writes nothing and fires nothing: the
    approved command running under the gemini process is the evidence."""
    command = "sleep 8 && echo done > done.txt"
    run = make_run([gs.shell(command), gs.text("The command finished.")])
    run.start_tui()
    run.submit("run the long command")
    open_approval(run, command)

    approved = time.monotonic()
    run.answer(["Enter"], gemini.APPROVAL_MARKER)
    reads = run.watch(lambda: bool(run.hooks("AfterTool")), timeout=60)
    ended = time.monotonic()
    # ~8 s of the command running, read every 0.25 s: from 1 s after the key until its
    # end, every read is working with nothing pending.
    run.require_working(reads, approved + 1.0, ended, least=16)
    events = [r.event for r in run.records()]
    assert events[events.index("Notification") + 1] == "AfterTool", events

    run.wait_hook("AfterAgent")
    run.wait_idle_screen()
    run.checkpoint("idle after the command", is_idle_after_turn)
    assert (run.home.cwd / "done.txt").read_text() == "done\n"


def test_tui_denied_then_a_question_dismissed(make_run: Callable[..., Run]) -> None:
    """ "No" on a confirmation and Esc on a question form fire no hook at all: the chat
    file's cancelled call and its "Request cancelled." record end the wait and the turn."""
    run = make_run(
        [
            gs.shell("touch denied.txt"),
            gs.function_call("ask_user", QUESTION),
            gs.text("should not be used"),
        ]
    )
    run.start_tui()

    run.submit("please touch denied.txt")
    open_approval(run, "touch denied.txt")
    run.press("Down", "Down")
    run.wait_screen(lambda s: "● 3. No, suggest changes" in s)
    run.answer(["Enter"], gemini.APPROVAL_MARKER)
    run.wait_chat_record(lambda r: r.get("content") == "Request cancelled.")
    run.wait_idle_screen()
    chat = run.checkpoint("denied", is_idle_after_turn)
    assert not (run.home.cwd / "denied.txt").exists()
    assert not run.hooks("AfterTool") and not run.hooks("AfterAgent")
    assert chat.evidence[0].source == "transcript:info(Request cancelled.)"

    run.submit("ask me a color")
    run.wait_screen(QUESTION_MARKER)
    (asked,) = run.wait_hook("BeforeTool", where=lambda p: p["tool_name"] == "ask_user")
    run.wait_hook("Notification", count=2)
    chat = run.checkpoint("question open", lambda c: c.state == "question")
    assert chat.activity == "needs_input"
    assert chat.pending_approval is None
    dialog = chat.pending_dialog
    assert dialog is not None and dialog.kind == "question"
    assert dialog.prompt == "Which color do you prefer?"
    assert [(o.label, o.description) for o in dialog.options] == [("Red", "warm"), ("Blue", "cool")]
    assert [q.header for q in dialog.questions] == ["Color"]
    assert asked["tool_input"] == QUESTION

    run.press("Escape")
    run.wait_chat_record(
        lambda r: any(
            c.get("name") == "ask_user" and c.get("status") == "cancelled"
            for c in r.get("toolCalls") or ()
        )
    )
    run.wait_idle_screen()
    chat = run.checkpoint("question dismissed", is_idle_after_turn)
    assert not run.hooks("AfterAgent")
    assert run.srv.remaining == 1  # "should not be used" was not


def test_tui_esc_while_streaming(make_run: Callable[..., Run]) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    run = make_run([gs.slow_text(words, seconds=60, chunks=200)])
    run.start_tui()

    run.submit("write a long answer")
    run.srv.wait_streaming()
    run.wait_screen("word3")
    run.checkpoint("model streaming", is_working)

    run.press("Escape")
    (stopped,) = run.wait_hook("AfterAgent")
    run.wait_idle_screen()
    chat = run.checkpoint("Esc while streaming", is_idle_after_turn)
    assert stopped["prompt_response"].startswith("word0")
    assert visible(chat, "assistant") == []  # the partial answer is not written


def test_tui_clear_then_exit(make_run: Callable[..., Run]) -> None:
    run = make_run([gs.text("First answer."), gs.text("Second answer.")])
    run.start_tui()

    run.submit("first prompt")
    run.wait_hook("AfterAgent")
    run.wait_idle_screen()
    first = run.checkpoint("first session idle", is_idle_after_turn)
    first_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert first_path and visible(first, "user") == ["first prompt"]

    run.submit("/clear")
    (cleared,) = run.wait_hook("SessionStart", where=lambda p: p["source"] == "clear")
    run.wait_screen(lambda s: "First answer." not in s)
    run.wait_idle_screen()
    chat = run.checkpoint("after /clear", lambda c: c.state == "idle")
    second_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert second_path == cleared["transcript_path"] != first_path
    assert chat.transcript_id == cleared["session_id"] != first.transcript_id
    assert [m for m in chat.messages if m.visibility == "visible"] == []

    run.submit("second prompt")
    run.wait_hook("AfterAgent", count=2)
    run.wait_screen("Second answer.")
    run.wait_idle_screen()
    chat = run.checkpoint("second session idle", is_idle_after_turn)
    assert chat.transcript_path == second_path
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    assert visible(chat, "user") == ["second prompt"]
    assert visible(chat, "assistant") == ["Second answer."]

    # A third session, left empty: the CLI deletes its file at exit.
    run.submit("/clear")
    (empty,) = run.wait_hook("SessionStart", count=2, where=lambda p: p["source"] == "clear")[1:]
    run.wait_idle_screen()
    run.checkpoint("after the second /clear", lambda c: c.state == "idle")
    pid = run.last.pid if run.last is not None else 0

    run.quit()
    run.wait_hook("SessionEnd", where=lambda p: p["reason"] == "exit")
    chat = run.checkpoint("exited", is_ended_after_turn, stable=False)
    assert chat.pid == pid
    assert not os.path.exists(empty["transcript_path"])
    # Named explicitly, the deleted file is the end of a session, not gone evidence.
    named = read_chat(PROVIDER, run.run_id, run.runtime_dir, empty["transcript_path"])
    assert (named.state, named.process) == ("ended", "gone")
    assert os.path.exists(second_path)
    [listed] = agentspool.list_runs(run.runtime_dir, include_ended=True, sessions=False)
    assert (listed.provider, listed.run_id, listed.state) == (PROVIDER, run.run_id, "ended")


def test_tui_subagent(make_run: Callable[..., Run], tmp_path: Path) -> None:
    """``invoke_agent``: the subagent writes a chat file of its own under
    ``chats/<session id>/``. The run works while its subagent does; ``show`` nests the
    subagent's records under the call that ran it (named once the call completed);
    ``usage`` counts the subagent's tokens with the session's, as the files record them."""
    finish = gs.function_call(
        "complete_task", {"result": {"response": "SUBDONE from the subagent"}}
    )
    run = make_run(
        [
            gs.function_call("invoke_agent", {"agent_name": "generalist", "prompt": "Say SUBDONE"}),
            finish,
            gs.text("Parent finished after the subagent."),
        ]
    )
    gate = run.gate(finish)
    run.start_tui()
    before_any_prompt(run)

    run.submit("delegate to a subagent")
    run.srv.wait_for(lambda s: len(s.main_requests()) >= 2 and bool(s.streaming), 60.0)
    chat = run.checkpoint("subagent streaming", is_working)
    session = chat.transcript_id
    view = agentspool.show_session(chat.transcript_path)
    (group,) = view.detail.subagents
    assert group.spawned_by == "", "the call is recorded once it completed"
    child = group.agent_id

    gate.set()
    run.wait_hook("AfterAgent")
    run.wait_screen("Parent finished after the subagent.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the subagent's turn", is_idle_after_turn)
    assert visible(chat, "assistant") == ["Parent finished after the subagent."]
    assert not [m for m in chat.messages if m.agent_id], "the run's own records only"
    (call,) = [m for m in chat.messages if m.kind == "tool_call"]
    assert call.tool_name == "invoke_agent"

    view = agentspool.show_session(chat.transcript_path)
    (group,) = view.detail.subagents
    assert (group.agent_id, group.spawned_by) == (child, call.tool_use_id)
    assert [m.tool_name for m in group.messages if m.kind == "tool_call"] == ["complete_task"]

    # Three answers (the session's two, the subagent's one), each 120 prompt tokens of
    # which 64 cached, 12 output and 3 of thoughts: the scripted server's usage.
    report = agentspool.usage(by="session", providers=[PROVIDER], store=str(tmp_path / "h.db"))
    (row,) = report.rows
    assert row.key == session
    assert (row.input_tokens, row.cache_read_tokens, row.output_tokens) == (3 * 56, 3 * 64, 45)


def test_tui_the_agent_declares_blocked_then_done_and_a_subagent_cannot(
    make_run: Callable[..., Run],
) -> None:
    """A subagent's shell call fires the parent's hooks (its ``session_id``, no call id)
    and runs with the parent's environment; it is told apart by time: it is made after
    the subagent's chat file recorded a model answer (ADR 0019). ``--yolo``: no
    confirmation to answer for the three shell calls."""
    agentspool_bin = os.path.join(sysconfig.get_path("scripts"), "agentspool")
    run = make_run(
        [
            gs.shell(f'{agentspool_bin} lifecycle blocked --reason "needs the API key"'),
            gs.function_call(
                "invoke_agent", {"agent_name": "generalist", "prompt": "Declare the task done"}
            ),
            gs.shell(f"{agentspool_bin} lifecycle done"),
            gs.function_call("complete_task", {"result": {"response": "I was refused."}}),
            gs.shell(f"{agentspool_bin} lifecycle done"),
            gs.text("Declared done."),
        ]
    )
    run.pane = gemini.start_tui(run.home, extra_args=["--yolo"], extra_env=run.spawn.env)
    before_any_prompt(run)

    run.submit("declare blocked, let a subagent declare done, then declare done")
    run.wait_hook("AfterAgent")
    run.wait_screen("Declared done.")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the declarations", is_idle_after_turn)
    (main,) = run.home.chat_files()
    (sub,) = run.home.subagent_files()
    results = [m.text for m in chat.messages if m.kind == "tool_result"]
    shell = [r for r in results if "lifecycle" in r or f"run {run.run_id}" in r]
    assert f"run {run.run_id}: blocked: needs the API key" in shell[0], results
    assert f"run {run.run_id}: done" in shell[-1], results
    assert "cannot declare its parent's task state" in sub.read_text(), sub.read_text()
    assert "cannot declare" not in main.read_text()
    assert (chat.task_state, chat.task_reason) == ("done", "")
