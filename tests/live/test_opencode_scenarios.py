"""Tier 2: the real ``opencode`` 1.18.33 armed by ``agentspool.setup("opencode", …)``.

Every test starts the real TUI under tmux with ``spawn.env`` (the plugin named in
``OPENCODE_CONFIG_CONTENT``, the run, the server password) against the scripted
chat-completions server, and asserts what ``read_chat`` composes — ``state``,
``activity``, ``pending_approval`` — at every checkpoint: prompt → working → permission
wait → approve → idle; a denied permission; exit → ended (started with ``--port``, so the
server's answer is part of the evidence); Esc while streaming and ``/clear`` (no port:
the plugin spool and the store alone).

Checkpoints wait on observable conditions (screen text, a plugin record in the spool, the
scripted server) and then poll ``read_chat`` until the expected state lands. A checkpoint
then re-reads after a short pause (the state must hold, not be a passing frame) and
cross-checks it against what the CLI itself shows — its screen, and its store: no open
dialog while the screen shows none, no ``working`` while the screen and the store show a
finished turn.

OpenCode is slow to start (~10-25 s, more on a loaded machine) and installs a package in
the background at its first start: waits are generous, and the scenarios share TUI starts.
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
from harness import chat_server as cs
from harness import opencode, tmux
from harness import opencode_captures as captures
from harness.checkpoints import (
    ScenarioRun,
    event_fields,
    is_ended_after_turn,
    is_idle_after_turn,
    is_working,
)

import agentspool
from agentspool import Chat, locate_transcript
from agentspool.core.seam import Spawn

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not opencode.available() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]

PROVIDER = "opencode"
START = 180.0  # a TUI start on a loaded machine, its first-start install running beside it
WAIT = 60.0  # a model turn, a permission prompt, a key taking effect


def _short(value: object) -> str:
    return str(value or "")[-10:]


def _turn_open(database: str, session: str) -> bool | None:
    """The store's own word on the session's latest turn: open (its last assistant
    message not completed yet), closed, or ``None`` (no turn yet)."""
    found = opencode.rows(
        database,
        "SELECT json_extract(data, '$.role'), json_extract(data, '$.time.completed')"
        " FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT 1",
        (session,),
    )
    if not found:
        return None
    role, completed = found[0]
    return role == "user" or not completed


@dataclass
class Oracle:
    screen: str
    turn_open: bool | None

    @property
    def dialog_shown(self) -> bool:
        return opencode.PERMISSION_MARKER in self.screen or opencode.QUESTION_MARKER in self.screen

    @property
    def cli_idle(self) -> bool:
        return not self.turn_open and not opencode.is_busy(self.screen)


@dataclass
class Run(ScenarioRun):
    home: opencode.OpenCodeHome
    srv: cs.ChatServer
    runtime_dir: str
    run_id: str
    spawn: Spawn
    pane: tmux.Pane | None = None
    pid: int = 0
    last: Chat | None = None
    log: list[str] = field(default_factory=list)
    gates: list[threading.Event] = field(default_factory=list)
    port: int = 0
    screens: list[tuple[float, str, str, str]] = field(default_factory=list)
    """(time, checkpoint, state, screen) at each checkpoint, for captures."""
    server_log: list[dict[str, Any]] = field(default_factory=list)
    """What the server answered at each checkpoint (a run started with ``--port``)."""
    version: ClassVar[str] = opencode.OPENCODE_VERSION
    provider: ClassVar[str] = PROVIDER

    @property
    def run_dir(self) -> str:
        return self.spawn.run_dir

    def start_tui(self, *extra: str) -> tmux.Pane:
        if "--port" in extra:
            self.port = int(extra[extra.index("--port") + 1])
        try:
            self.pane = opencode.start_tui(
                self.home, extra_args=extra, extra_env=self.spawn.env, timeout=START
            )
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")
        self.pid = opencode.pid(self.pane)
        self.wait_hook("start")
        return self.pane

    def gate(self, reply: cs.Reply) -> threading.Event:
        reply.gate = threading.Event()
        self.gates.append(reply.gate)
        return reply.gate

    def close(self) -> None:
        for gate in self.gates:
            gate.set()
        self.home.cleanup()

    def checkpoint(self, name: str, predicate: Callable[[Chat], bool], **kw: Any) -> Chat:
        chat = super().checkpoint(name, predicate, **kw)
        if self.port and self.pid_alive():
            secret = self.spawn.env.get("OPENCODE_SERVER_PASSWORD", "")
            for path in ("/permission", "/question", "/session/status"):
                status, body = opencode.get(self.port, path, secret)
                self.server_log.append(
                    {"checkpoint": name, "path": path, "status": status, "body": body}
                )
        screen = self.pane.screen() if self.pane is not None and self.pid_alive() else ""
        self.screens.append((time.time(), name, f"{chat.state}/{chat.activity}", screen))
        return chat

    def save(self, directory: Path) -> None:
        """The evidence of this run, as ``captures/opencode/`` keeps it (README there)."""
        captures.save(self, directory)

    # -- driving
    def submit(self, text: str) -> None:
        assert self.pane is not None
        opencode.submit(self.pane, text)

    def press(self, *keys: str) -> None:
        assert self.pane is not None
        self.pane.send_keys(*keys)

    def press_until(self, key: str, done: Callable[[str], bool], *, every: float = 2.0) -> None:
        """Press ``key`` until ``done(screen)``: a key that lands while the TUI redraws
        can be dropped, so it is pressed again — only while the same dialog is shown."""
        assert self.pane is not None
        deadline = time.monotonic() + WAIT
        while True:
            self.press(key)
            pressed = time.monotonic()
            while time.monotonic() - pressed < every:
                screen = self.pane.screen()
                if done(screen):
                    return
                time.sleep(0.1)
            if time.monotonic() > deadline:
                pytest.fail(f"{key} had no effect\n{self.dump()}")

    def wait_screen(self, needle: str | Callable[[str], bool], timeout: float = WAIT) -> str:
        assert self.pane is not None
        try:
            if callable(needle):
                return self.pane.wait_until(needle, timeout)
            return self.pane.wait_for(needle, timeout)
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{self.dump()}")

    def wait_idle_screen(self) -> str:
        return self.wait_screen(
            lambda s: not opencode.is_busy(s) and opencode.PERMISSION_MARKER not in s
        )

    def wait_gone(self, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while os.path.exists(f"/proc/{self.pid}/exe"):
            if time.monotonic() > deadline:
                pytest.fail(f"opencode {self.pid} still runs\n{self.dump()}")
            time.sleep(0.1)

    def session(self) -> str:
        path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        return path.rpartition("#")[2] if path else ""

    # -- oracles
    def oracle(self) -> Oracle:
        screen = self.pane.screen() if self.pane is not None else ""
        session = self.session()
        return Oracle(screen, _turn_open(str(self.home.database), session) if session else None)

    def screen_oracle(self) -> Oracle | None:
        return self.oracle() if self.pane is not None and self.pid_alive() else None

    def pid_alive(self) -> bool:
        return bool(self.pid) and os.path.exists(f"/proc/{self.pid}/exe")

    # -- diagnostics
    def spool_keys(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        keys: dict[str, Any] = {}
        for k in ("sessionID", "requestID", "id"):
            if payload.get(k):
                keys[k] = _short(payload[k])
        for k in ("permission", "reply", "status", "pid"):
            if payload.get(k):
                keys[k] = payload[k]
        tool = payload.get("tool")
        if isinstance(tool, dict) and tool.get("callID"):
            keys["call"] = tool["callID"]
        return keys

    def _events(self, path: str) -> list[str]:
        from agentspool.adapters.opencode import _store
        from agentspool.adapters.opencode._signals import SpoolTranslator
        from agentspool.adapters.opencode._transcript import TranscriptParser

        translator = SpoolTranslator()
        for record in self.records():
            translator.translate(record)
        events = [e for es in translator.events.values() for e in es]
        if path:
            parser = TranscriptParser()
            _store.EventLogFollower(path).read(parser.feed, lambda: None)
            events += parser.events
        t0 = min((e.at for e in events if e.at), default=0.0)
        out = []
        for e in sorted(events, key=lambda e: e.at):
            fields = {
                k: _short(v) if k in ("epoch", "turn_id") else v for k, v in event_fields(e).items()
            }
            out.append(f"{e.at - t0:8.3f} {type(e).__name__} {e.source} {fields}")
        return out

    def dump(self) -> str:
        out = self.dump_head()
        path = ""
        with contextlib.suppress(Exception):
            path = locate_transcript(PROVIDER, self.run_id, self.runtime_dir)
        out.append(f"located transcript: {path or '<not located>'}")
        for mid, data in opencode.rows(
            self.home.database,
            "SELECT id, substr(data, 1, 240) FROM message ORDER BY time_created, id",
        )[-12:]:
            out.append(f"  message {_short(mid)} {data}")
        with contextlib.suppress(Exception):
            out.append("canonical events (evidence-time order):")
            out += ["  " + line for line in self._events(path)]
        out.append("server: " + "; ".join(self.srv.summary()))
        out.append(f"opencode pid {self.pid} alive={self.pid_alive()}")
        if self.pane is not None:
            with contextlib.suppress(Exception):
                out.append("screen:\n" + self.pane.screen().rstrip())
        return "\n".join(out)


@pytest.fixture
def make_run(
    tmp_path: Path, runtime_dir: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Run]]:
    """``make_run(replies)``: one server, one armed run. With ``AGENTSPOOL_OPENCODE_CAPTURES``
    set to a folder, a run that passed leaves its evidence there (``captures/opencode/``
    is made this way)."""
    runs: list[Run] = []
    servers: list[cs.ChatServer] = []

    def make(replies: list[cs.Reply]) -> Run:
        assert not runs, "one run per test"
        srv = cs.ChatServer(replies).start()
        servers.append(srv)
        home = opencode.make_home(srv.base_url, tmp_path / "opencode")
        run_id = "live-" + os.urandom(4).hex()
        spawn = agentspool.setup(PROVIDER, run_id, runtime_dir)
        run = Run(home=home, srv=srv, runtime_dir=runtime_dir, run_id=run_id, spawn=spawn)
        runs.append(run)
        return run

    try:
        yield make
        target = os.environ.get("AGENTSPOOL_OPENCODE_CAPTURES")
        if target:
            for run in runs:
                run.save(Path(target) / request.node.name.removeprefix("test_"))
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
    return (
        chat.state == "needs_input"
        and chat.activity == "needs_input"
        and chat.pending_approval is not None
        and chat.pending_dialog is None
    )


def open_permission(run: Run, prompt: str, command: str) -> Chat:
    """Prompt; the model asks for ``bash`` ``command``; the permission prompt is open."""
    run.submit(prompt)
    run.wait_screen(opencode.PERMISSION_MARKER)
    (asked,) = run.wait_hook(
        "permission_asked", where=lambda p: p.get("metadata", {}).get("command") == command
    )
    chat = run.checkpoint(f"permission open: {command}", is_approval_open)
    approval = chat.pending_approval
    assert approval is not None
    assert approval.tool_name == "bash"
    assert approval.tool_input.get("command") == command
    assert approval.tool_use_id == asked["tool"]["callID"]
    assert approval.agent_id == ""
    return chat


# -------------------------------------------------------------------- tests ---


def test_tui_permission_approve_deny_exit(make_run: Callable[..., Run]) -> None:
    """Started with ``--port``: the server's ``GET /permission`` is read with the spool."""
    first = cs.bash("touch approved.txt", call_id="call_approve")
    run = make_run(
        [
            first,
            cs.text("The file was created."),
            cs.bash("touch denied.txt", call_id="call_deny"),
            cs.text("should not be used"),
        ]
    )
    gate = run.gate(first)
    run.start_tui("--port", str(opencode.free_port()))
    before = run.checkpoint("before any prompt", lambda c: c.state == "idle")
    assert (before.messages, before.pending_approval, before.pending_dialog) == ([], None, None)
    assert locate_transcript(PROVIDER, run.run_id, run.runtime_dir) == ""

    # prompt → working: the model's reply is held on its first piece.
    run.submit("create approved.txt")
    run.srv.wait_streaming(timeout=WAIT)
    run.wait_hook("session_status")
    chat = run.checkpoint("model streaming", is_working)
    assert visible(chat, "user") == ["create approved.txt"]
    assert chat.pid == run.pid and chat.process == "alive"

    # → permission wait
    gate.set()
    run.wait_screen(opencode.PERMISSION_MARKER)
    (asked,) = run.wait_hook("permission_asked")
    chat = run.checkpoint("permission open", is_approval_open)
    approval = chat.pending_approval
    assert approval is not None
    assert (approval.tool_name, approval.tool_use_id) == ("bash", "call_approve")
    assert approval.tool_input.get("command") == "touch approved.txt"
    assert asked["tool"]["callID"] == "call_approve"
    # A run started with --port: the server's answer of now is the deciding evidence.
    assert chat.evidence[0].source == "server:permission", chat.evidence

    # → approve → idle
    run.press_until("Enter", lambda s: opencode.PERMISSION_MARKER not in s)
    (replied,) = run.wait_hook("permission_replied")
    assert replied["reply"] == "once"
    run.checkpoint(
        "approved",
        lambda c: c.pending_approval is None and c.state in ("working", "needs_input"),
        stable=False,
    )
    run.wait_screen("The file was created.")
    run.wait_hook("session_idle")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the approved turn", is_idle_after_turn)
    assert (run.home.cwd / "approved.txt").exists()
    assert visible(chat, "assistant") == ["The file was created."]
    kinds = [m.kind for m in chat.messages if m.visibility == "visible"]
    assert kinds == ["text", "tool_call", "tool_result", "text"]
    assert chat.usage.input_tokens == 2 * (56 + 64) and chat.usage.cached_input_tokens == 128
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))

    # a denied permission
    open_permission(run, "create denied.txt", "touch denied.txt")
    assert run.pane is not None
    run.press("Right", "Right")
    run.wait_screen(lambda s: "Reject" in s)
    time.sleep(0.5)
    run.press_until("Enter", lambda s: opencode.PERMISSION_MARKER not in s)
    (_, rejected) = run.wait_hook("permission_replied", count=2)
    assert rejected["reply"] == "reject"
    run.wait_hook("session_idle", count=2)
    run.wait_idle_screen()
    chat = run.checkpoint("denied: idle after the turn", is_idle_after_turn)
    assert not (run.home.cwd / "denied.txt").exists()
    result = chat.messages[-2] if chat.messages[-1].visibility == "hidden" else chat.messages[-1]
    assert result.kind == "tool_result" and result.is_error, result
    assert result.text.startswith("The user rejected permission")
    assert run.srv.remaining == 1  # the turn ended at the rejection

    # exit → ended: OpenCode writes nothing; its process is gone.
    transcript = chat.transcript_path
    run.submit("/exit")
    run.wait_gone()
    chat = run.checkpoint("after /exit", is_ended_after_turn, stable=False)
    assert chat.pid == run.pid
    assert chat.transcript_path == transcript
    assert chat.evidence[0].source == "core:lifecycle"


def test_tui_esc_while_streaming_then_clear(make_run: Callable[..., Run]) -> None:
    """No ``--port``: the plugin spool and the store alone."""
    words = " ".join(f"word{i}" for i in range(300))
    run = make_run(
        [
            cs.slow_text(words, seconds=60, chunks=300),
            cs.text("First thread answer."),
            cs.text("Second thread answer."),
        ]
    )
    run.start_tui()

    run.submit("write a long answer")
    run.wait_screen("word5 ")
    chat = run.checkpoint("model streaming", is_working)

    # Esc while streaming: OpenCode asks for a second Esc, then aborts the turn.
    run.press("Escape")
    run.wait_screen("esc again to interrupt")
    run.press_until("Escape", lambda s: opencode.INTERRUPTED_MARKER in s)
    run.wait_hook("session_idle")
    run.wait_idle_screen()
    chat = run.checkpoint("Esc while streaming", is_idle_after_turn)
    interrupt = [m for m in chat.messages if m.visibility == "visible"][-1]
    assert interrupt.kind == "interrupt", chat.messages
    partial = visible(chat, "assistant")
    assert len(partial) == 1 and partial[0].startswith("word0 word1"), partial
    assert run.srv.aborted, run.srv.summary()

    run.submit("and now briefly")
    run.wait_screen("First thread answer.")
    run.wait_hook("session_idle", count=2)
    run.wait_idle_screen()
    first = run.checkpoint("first session idle", is_idle_after_turn)
    first_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert first_path and first.transcript_path == first_path

    # /clear (OpenCode's /new): nothing is written until the next prompt creates the session.
    run.submit("/clear")
    run.wait_screen(opencode.READY_MARKER)
    chat = run.checkpoint("after /clear, before a prompt", is_idle_after_turn)
    assert locate_transcript(PROVIDER, run.run_id, run.runtime_dir) == first_path

    run.submit("second prompt")
    run.wait_screen("Second thread answer.")
    run.wait_hook("session_created", count=2)
    run.wait_hook("session_idle", count=3)
    run.wait_idle_screen()
    chat = run.checkpoint("second session idle", is_idle_after_turn)
    second_path = locate_transcript(PROVIDER, run.run_id, run.runtime_dir)
    assert second_path and second_path != first_path
    assert chat.transcript_path == second_path
    assert chat.transcript_id and chat.transcript_id != first.transcript_id
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    assert visible(chat, "user") == ["second prompt"]
    assert visible(chat, "assistant") == ["Second thread answer."]


QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm color"},
                {"label": "Blue", "description": "A cool color"},
            ],
        }
    ]
}


def test_tui_question_then_undo(make_run: Callable[..., Run]) -> None:
    """A question form (the running ``question`` tool is the dialog, in the store too);
    ``/undo`` marks the turn superseded (``session.revert``) and the next prompt deletes
    it (``message.removed.1``): its records stay, ``inactive``, under their ``seq``."""
    run = make_run(
        [
            cs.tool_call("question", QUESTION, call_id="call_question"),
            cs.text("You chose a color."),
            cs.text("Answered in text this time."),
        ]
    )
    run.start_tui()
    run.submit("ask me a color")
    run.wait_screen("Which color do you prefer?")
    run.wait_hook("question_asked")
    chat = run.checkpoint("question open", lambda c: c.state == "question")
    assert chat.activity == "needs_input" and chat.pending_approval is None
    dialog = chat.pending_dialog
    assert dialog is not None and dialog.kind == "question"
    assert dialog.tool_use_id == "call_question"
    assert dialog.prompt == "Which color do you prefer?"
    assert [(o.label, o.description) for o in dialog.options] == [
        ("Red", "A warm color"),
        ("Blue", "A cool color"),
    ]
    assert [q.header for q in dialog.questions] == ["Color"]

    run.press_until("Enter", lambda s: opencode.QUESTION_MARKER not in s)
    (replied,) = run.wait_hook("question_replied")
    assert replied["answers"] == [["Red"]]
    run.wait_screen("You chose a color.")
    run.wait_hook("session_idle")
    run.wait_idle_screen()
    answered = run.checkpoint("answered, idle", is_idle_after_turn)
    results = [m for m in answered.messages if m.kind == "tool_result"]
    assert len(results) == 1 and '"Red"' in results[0].text
    before = {m.id: m.seq for m in answered.messages}
    assert all(m.visibility in ("visible", "hidden") for m in answered.messages)

    # /undo: the turn is kept, reverted (session.revert names its prompt): inactive.
    run.submit("/undo")
    run.wait_screen("message reverted")
    chat = run.checkpoint(
        "after /undo", lambda c: is_idle_after_turn(c) and not visible(c, "assistant")
    )
    assert {m.id: m.seq for m in chat.messages} == before
    assert {m.visibility for m in chat.messages} == {"inactive", "hidden"}

    # The prompt is back in the input: sent again, OpenCode deletes the reverted turn.
    assert run.pane is not None
    run.wait_screen("ask me a color")
    run.press("Enter")
    run.wait_screen("Answered in text this time.")
    run.wait_hook("session_idle", count=2)
    run.wait_idle_screen()
    chat = run.checkpoint("after the next prompt", is_idle_after_turn)
    old = [m for m in chat.messages if m.id in before]
    assert [(m.id, m.seq) for m in old] == list(before.items())
    assert {m.visibility for m in old} == {"inactive", "hidden"}
    assert visible(chat, "user") == ["ask me a color"]
    assert visible(chat, "assistant") == ["Answered in text this time."]
    assert [m.seq for m in chat.messages] == list(range(1, len(chat.messages) + 1))
    session = chat.transcript_id
    gone = opencode.rows(
        run.home.database,
        "SELECT count(*) FROM event WHERE aggregate_id = ? AND type = 'message.removed.1'",
        (session,),
    )
    assert gone[0][0] >= 2, gone


SUBAGENT_TASK = {
    "description": "Look around",
    "prompt": "List what you see and say SUBDONE",
    "subagent_type": "general",
}


def test_tui_subagent_task(
    make_run: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``task`` call: OpenCode runs the subagent as a session of its own (``parent_id``
    the run's session). The run works while its subagent does; ``show`` nests the
    subagent's records under the ``task`` call; ``usage`` counts the subagent's tokens
    with the session's — as OpenCode's own per-session totals add up."""
    child_reply = cs.text("SUBDONE from the subagent")
    run = make_run(
        [
            cs.tool_call("task", SUBAGENT_TASK, call_id="call_task"),
            child_reply,
            cs.text("Parent finished after the subagent."),
        ]
    )
    gate = run.gate(child_reply)
    run.start_tui()
    monkeypatch.setenv("XDG_DATA_HOME", str(run.home.data_dir.parent))

    run.submit("delegate to a subagent")
    run.srv.wait_for(lambda s: len(s.main_requests()) >= 2 and bool(s.streaming), WAIT)
    chat = run.checkpoint("subagent streaming", is_working)
    session = chat.transcript_id
    (child,) = opencode.rows(
        run.home.database, "SELECT id FROM session WHERE parent_id = ?", (session,)
    )
    view = agentspool.show_session(session)
    (group,) = view.detail.subagents
    assert (group.agent_id, group.spawned_by) == (child[0], "call_task")

    gate.set()
    run.wait_screen("Parent finished after the subagent.")
    run.wait_hook("session_idle")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the subagent's turn", is_idle_after_turn)
    assert visible(chat, "assistant") == ["Parent finished after the subagent."]
    assert not [m for m in chat.messages if m.agent_id], "the run's own records only"

    view = agentspool.show_session(session)
    (group,) = view.detail.subagents
    assert (group.agent_id, group.spawned_by) == (child[0], "call_task")
    said = [m.text for m in group.messages if m.kind == "text" and m.role == "assistant"]
    assert said == ["SUBDONE from the subagent"]

    # OpenCode's own totals per session (docs/providers/opencode.md §2.5: input leaves
    # the cache out), the subagent's row among them.
    ((inputs, outputs, cached, written, sessions),) = opencode.rows(
        run.home.database,
        "SELECT sum(tokens_input), sum(tokens_output + tokens_reasoning),"
        " sum(tokens_cache_read), sum(tokens_cache_write), count(*) FROM session",
    )
    assert sessions == 2
    report = agentspool.usage(by="session", providers=["opencode"], store=str(tmp_path / "h.db"))
    (row,) = report.rows
    assert row.key == session
    totals = (row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens)
    assert totals == (inputs, outputs, cached, written)


def test_tui_the_agent_declares_blocked_then_done_and_a_subagent_cannot(
    make_run: Callable[..., Run],
) -> None:
    """A subagent's ``bash`` runs in the same OpenCode process with the same environment
    (the run's ``AGENTSPOOL_RUN_ID``): only the store's running call, in the subagent's
    session, tells it apart (ADR 0019). Its declaration is refused; the agent's count."""
    agentspool_bin = os.path.join(sysconfig.get_path("scripts"), "agentspool")
    run = make_run(
        [
            cs.bash(
                f'{agentspool_bin} lifecycle blocked --reason "needs the API key"',
                call_id="call_blocked",
            ),
            cs.tool_call(
                "task",
                {
                    "description": "Declare done",
                    "prompt": "Declare the task done with agentspool lifecycle done",
                    "subagent_type": "general",
                },
                call_id="call_task",
            ),
            cs.bash(f"{agentspool_bin} lifecycle done", call_id="call_sub_done"),
            cs.text("I was refused."),
            cs.bash(f"{agentspool_bin} lifecycle done", call_id="call_done"),
            cs.text("Declared done."),
        ]
    )
    config_file = run.home.config_dir / "opencode.json"
    config = json.loads(config_file.read_text())
    config["permission"]["bash"] = "allow"
    config_file.write_text(json.dumps(config))
    run.start_tui()

    run.submit("declare blocked, let a subagent declare done, then declare done")
    run.wait_screen("Declared done.")
    run.wait_hook("session_idle")
    run.wait_idle_screen()
    chat = run.checkpoint("idle after the declarations", is_idle_after_turn)
    outputs = dict(
        opencode.rows(
            run.home.database,
            "SELECT json_extract(data, '$.callID'), json_extract(data, '$.state.output')"
            " FROM part WHERE json_extract(data, '$.tool') = 'bash'",
        )
    )
    assert f"run {run.run_id}: blocked: needs the API key" in outputs["call_blocked"], outputs
    assert "cannot declare its parent's task state" in outputs["call_sub_done"], outputs
    assert f"run {run.run_id}: done" in outputs["call_done"], outputs
    assert (chat.task_state, chat.task_reason) == ("done", "")


def test_tui_started_by_hand_with_the_plugin_installed(tmp_path: Path, runtime_dir: str) -> None:
    """``agentspool install opencode`` (ADR 0031): a TUI nobody armed is its own run,
    ``opencode-<pid>-<start ticks>``, its permission prompt seen, ended when it exits."""
    srv = cs.ChatServer([cs.bash("touch by-hand.txt", call_id="call_hand")]).start()
    home = opencode.make_home(srv.base_url, tmp_path / "opencode")
    try:
        report = agentspool.install("opencode", directory=str(home.config_dir))
        assert report.files[0].action == "created"
        pane = opencode.start_tui(
            home, extra_env={"AGENTSPOOL_RUNTIME_DIR": runtime_dir}, timeout=START
        )
        pid = opencode.pid(pane)
        opencode.submit(pane, "touch it")
        pane.wait_for(opencode.PERMISSION_MARKER, WAIT)
        deadline = time.monotonic() + WAIT
        while True:
            runs = agentspool.list_runs(runtime_dir, sessions=False)
            if runs and runs[0].pending_approval is not None:
                break
            assert time.monotonic() < deadline, runs
            time.sleep(0.2)
        (run,) = runs
        assert run.run_id.startswith(f"opencode-{pid}-") and run.provider == PROVIDER
        assert run.state == "needs_input" and run.pid == pid
        assert run.pending_approval.tool_use_id == "call_hand"
        pane.send_keys("Escape")  # rejects the prompt and ends the turn
        pane.wait_until(lambda s: opencode.PERMISSION_MARKER not in s, WAIT)
        opencode.submit(pane, "/exit")
        deadline = time.monotonic() + WAIT
        while os.path.exists(f"/proc/{pid}/exe"):
            assert time.monotonic() < deadline, "opencode did not exit"
            time.sleep(0.1)
        (ended,) = agentspool.list_runs(runtime_dir, include_ended=True, sessions=False)
        assert (ended.run_id, ended.state) == (run.run_id, "ended")
    finally:
        home.cleanup()
        srv.stop()
