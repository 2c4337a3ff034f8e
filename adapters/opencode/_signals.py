"""OpenCode's live signals → canonical events: the plugin spool, the process, the server.

The plugin (settings-templates/opencode-plugin.js) appends OpenCode's bus events to the
run's spool (docs/providers/opencode.md §3): a ``start`` record (the process, its start
time, its directory, database and server URL), then ``session_created``,
``session_status``, ``session_idle``, ``permission_asked`` / ``permission_replied``,
``question_asked`` / ``question_replied`` / ``question_rejected``. Events carry their
session; a subagent's session (one with a parent) is folded into its top-level
session's chat with ``agent_id`` set, so the run reads waiting while a subagent waits.

Nothing is written when OpenCode ends (``/exit`` fires no event, SIGKILL nothing): the
process is the evidence (``agent_gone``: gone, a zombie, or its pid reused).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.opencode import _store
from agentspool.adapters.opencode._schema import SPOOL_FIELDS
from agentspool.adapters.opencode._transcript import dialog_for
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.spool.read import SpoolRecord


class _Tool(msgspec.Struct):
    messageID: str = ""  # noqa: N815 - OpenCode's own field names
    callID: str = ""  # noqa: N815


class _Status(msgspec.Struct):
    type: str = ""


class _SessionInfo(msgspec.Struct):
    id: str = ""
    parentID: str | None = None  # noqa: N815


class Payload(msgspec.Struct):
    """The fields read from any of the plugin's records (each carries a few)."""

    sessionID: str = ""  # noqa: N815
    id: str = ""
    requestID: str = ""  # noqa: N815
    info: _SessionInfo | None = None
    status: _Status | None = None
    permission: str = ""
    metadata: dict[str, Any] | None = None
    patterns: list[str] | None = None
    tool: _Tool | None = None
    questions: list[Any] | None = None
    reply: str = ""
    # start
    pid: int = 0
    start: int = 0
    directory: str = ""
    serverUrl: str = ""  # noqa: N815
    database: str = ""


decode = HookDecoder(Payload)


def asked(question: bool, request: Payload, agent: str, **base: Any) -> ev.InputRequested:
    """The wait a permission request or a question opens: the plugin's
    ``permission.asked``/``question.asked`` and the server's ``GET /permission``/
    ``/question`` items have the same shape (docs/providers/opencode.md §3.3, §4)."""
    call = request.tool.callID if request.tool is not None else ""
    if question:
        return ev.InputRequested(
            kind="question",
            tool_use_id=call,
            tool_name="question",
            agent_id=agent,
            dialog=dialog_for(call, {"questions": request.questions}),
            **base,
        )
    return ev.InputRequested(
        kind="approval",
        tool_use_id=call,
        tool_name=request.permission,
        tool_input=request.metadata or {"patterns": request.patterns or []},
        agent_id=agent,
        **base,
    )


def _idle(name: str, payload: Payload) -> bool:
    status = payload.status.type if payload.status is not None else ""
    return name == "session_idle" or (name == "session_status" and status == "idle")


class SpoolTranslator:
    """Plugin records → events, in spool order, per top-level session."""

    def __init__(self) -> None:
        self.agent_pid = 0
        self.agent_start = 0
        """The OpenCode process's start time (clock ticks since boot), from ``start``."""
        self.cwd = ""
        self.database = ""
        self.server_url = ""
        self.session_id = ""
        """The top-level session the run works in now (the latest one an event named)."""
        self.undecodable = 0
        self.drift = DriftCounter(SPOOL_FIELDS)
        self.events: dict[str, list[ev.Event]] = {}
        """Top-level session id → its events (a subagent's folded into its parent's)."""
        self._parents: dict[str, str] = {}
        self._requests: dict[str, tuple[str, str]] = {}  # request id → (call id, session)

    @property
    def transcript_path(self) -> str:
        """``<database>#<session>``: the session the run works in now."""
        if not (self.database and self.session_id):
            return ""
        return _store.join(self.database, self.session_id)

    def root(self, session_id: str) -> str:
        seen = 0
        while session_id in self._parents and seen < 64:
            session_id, seen = self._parents[session_id], seen + 1
        return session_id

    def tree(self, session_id: str) -> dict[str, str]:
        """The session and its subagents' sessions seen so far → their ``agent_id``."""
        found = {session_id: ""}
        found.update({s: s for s in self._parents if self.root(s) == session_id})
        return found

    def agents(self) -> dict[str, str]:
        """Every session the run's events named → its ``agent_id`` (``""``: a top-level
        session; a subagent's session: its own id)."""
        found = dict.fromkeys([*self.events, self.session_id], "")
        found.update({s: s for s in self._parents})
        found.pop("", None)
        return found

    def translate(self, record: SpoolRecord) -> None:
        payload = decode(record)
        if payload is None:
            self.undecodable += 1
            return
        name = record.event
        if name not in self.drift.checked and not record.truncated:
            self.drift.see(name, record.payload)
        if name == "start":
            self.agent_pid, self.agent_start = payload.pid or record.agent_pid, payload.start
            self.cwd = payload.directory or self.cwd
            self.database = payload.database or self.database
            self.server_url = payload.serverUrl
            return
        session = payload.sessionID
        if name == "session_created" and payload.info is not None and payload.info.parentID:
            self._parents[payload.info.id] = payload.info.parentID
        if not session:
            return
        root = self.root(session)
        if root == session:
            self.session_id = session
        agent = "" if root == session else session
        base: dict[str, Any] = {
            "at": record.wall_ns / 1e9,
            "source": f"plugin:{name.replace('_', '.')}",
            "epoch": root,
        }
        out = self.events.setdefault(root, [])
        tool = payload.tool or _Tool()
        if name == "session_created" and not agent:
            out.append(ev.SessionStarted(how="startup", **base))
        elif name in ("permission_asked", "question_asked"):
            self._requests[payload.id] = (tool.callID, session)
            out.append(asked(name == "question_asked", payload, agent, **base))
        elif name in ("permission_replied", "question_replied", "question_rejected"):
            call, _ = self._requests.pop(payload.requestID, ("", ""))
            if call:
                out.append(ev.InputResolved(tool_use_id=call, **base))
        elif not agent and _idle(name, payload):
            # Idle: the session's loop is over. Nothing waits in it (OpenCode rejects what
            # was pending when a turn is aborted), and no turn is open.
            out.append(ev.InputResolved(**base))
            out.append(ev.TurnStopped(**base))

    def agent_gone(self) -> bool:
        """The OpenCode process the ``start`` record named no longer runs (exited, a
        zombie, or its pid now another process's)."""
        if not self.agent_pid:
            return False
        found = _proc.stat(self.agent_pid)
        return found is None or bool(self.agent_start and found.started != self.agent_start)

    def liveness(self) -> list[ev.Event]:
        """Not kept: a gone OpenCode process ends whatever its events left open (the
        caller found it gone: ``agent_gone``)."""
        return _proc.ended_by_exit(self.agent_pid)
