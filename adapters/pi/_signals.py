"""The extension's spool → canonical events, and where the session's file is.

Facts: docs/providers/pi.md §2. agentspool's extension (settings-templates/
pi-extension.js) spools, each payload naming the session (``sessionId``):

* ``session_start`` — at launch, and after ``/new`` / ``/resume`` / ``/fork`` (Pi loads
  the extension anew for each session): the session file it will write (Pi writes it
  only at the first answer), the cwd, the Pi process;
* ``agent_start`` … ``agent_end`` — the agent loop of one prompt: turn ``agent-<n>``, the
  n-th of the session in this spool; ``agent_end``'s ``stopReason`` says how it ended
  (``aborted``: Esc);
* ``tool_execution_start`` / ``tool_execution_end`` — a call running (its approval is
  asked inside it: Pi starts the execution, then asks the extension's ``tool_call``);
* ``permission_asked`` / ``permission_replied`` — the confirm dialog the extension opens
  before a ``bash`` call, and its answer;
* ``session_shutdown`` — ``quit`` ends the session; any other reason is a switch, and the
  next ``session_start`` names the next file.

The agent process is the record's own writer (the extension runs inside Pi).
"""

from __future__ import annotations

from typing import Any

from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.parent_agent import ParentAgentHooks
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import CamelHookFields
from agentspool.adapters.pi._schema import SPOOL_FIELDS
from agentspool.core import events as ev
from agentspool.spool.read import SpoolRecord

_OUTCOMES: dict[str, Any] = {"aborted": "interrupted", "error": "failed"}


class SpoolPayload(CamelHookFields):
    session_file: str = ""
    tool_call_id: str = ""
    args: Any = None
    input: Any = None
    stop_reason: str = ""


decode = HookDecoder(SpoolPayload)


class SpoolTranslator(ParentAgentHooks[SpoolPayload]):
    """Spool records → events, per session, in spool order. ``transcript_path``: the
    session file the latest ``session_start`` named (it may not exist yet)."""

    def __init__(self) -> None:
        super().__init__(decode, SPOOL_FIELDS)
        self.session_id = ""
        self.events: dict[str, list[ev.Event]] = {}
        self.open_calls: dict[str, tuple[str, Any]] = {}
        """Calls running now: call id → tool name and arguments, oldest first."""
        self._turns: dict[str, int] = {}

    def session_events(self, session_id: str | None = None) -> list[ev.Event]:
        """The events of ``session_id`` (``None``: of the latest session)."""
        return self.events.get(self.session_id if session_id is None else session_id, [])

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        payload = self.take(record)
        if payload is None:
            return []
        name = record.event
        session = payload.session_id
        if name == "session_start":
            self.session_id, self.open_calls = session, {}
            self.transcript_path = payload.session_file or self.transcript_path
        event = self._event(name, payload, record.wall_ns / 1e9)
        if event is None:
            return []
        self.events.setdefault(session, []).append(event)
        return [event]

    def _event(self, name: str, payload: SpoolPayload, at: float) -> ev.Event | None:
        session = payload.session_id
        common: dict[str, Any] = {"at": at, "source": f"spool:{name}", "epoch": session}
        turn = f"agent-{self._turns.get(session, 0)}"
        call = payload.tool_call_id
        if name == "session_start":
            return ev.SessionStarted(how=payload.reason or "startup", **common)
        if name == "agent_start":
            self._turns[session] = self._turns.get(session, 0) + 1
            return ev.TurnStarted(turn_id=f"agent-{self._turns[session]}", **common)
        if name == "agent_end":
            outcome = _OUTCOMES.get(payload.stop_reason, "completed")
            return ev.TurnStopped(turn_id=turn, outcome=outcome, **common)
        if name == "tool_execution_start":
            self.open_calls[call] = (payload.tool_name, payload.args)
            return ev.ToolStarted(
                turn_id=turn, tool_use_id=call, tool_name=payload.tool_name, **common
            )
        if name == "tool_execution_end":
            self.open_calls.pop(call, None)
            return ev.ToolFinished(turn_id=turn, tool_use_id=call, **common)
        if name == "permission_asked":
            return tool_wait(turn, call, payload.tool_name, payload.input, **common)
        if name == "permission_replied":
            return ev.InputResolved(tool_use_id=call, **common)
        if name == "session_shutdown" and payload.reason == "quit":
            self.open_calls = {}
            return ev.SessionEnded(reason=payload.reason, **common)
        return None
