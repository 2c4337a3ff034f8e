"""Kimi Code hooks → canonical events: which session, its wire, its end, the process.

Facts: docs/providers/kimi-code.md §2 (tests/live/captures/kimi-code/tui-session/). No
payload names a transcript: the session id does (``session_<uuid>``), and the wire is
``<KIMI_CODE_HOME>/sessions/*/<session id>/agents/main/wire.jsonl`` — the home the agent
was started with (its ``/proc/<pid>/environ``), else the reader's. The wire records the
turn and every dialog durably (``_wire``); the hooks add:

* ``PermissionRequest{id, tool_call_id, tool_name, tool_input}`` / ``PermissionResult``
  — an approval open and answered, the same instant the wire says so;
* ``SessionEnd`` — the session's end (nothing is written to the wire). ``/clear`` starts
  the new session (its ``SessionStart``) *before* it ends the old one: an end of a
  session other than the newest is that one's, not the run's.

A question fires no hook of its own (``PreToolUse`` only): the wire's
``interaction.request{kind: question}`` is its one evidence. The agent is the kimi
process, the hook's parent past the shell that runs it.
"""

from __future__ import annotations

import glob
import os
from typing import Any

from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.parent_agent import ParentAgentHooks
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import HookFields, hook_base
from agentspool.adapters.kimi_code._home import kimi_dir
from agentspool.adapters.kimi_code._schema import HOOK_FIELDS
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.spool.read import SpoolRecord


def wire_of(home: str, session_id: str) -> str:
    """The session's main wire under ``home`` (``""`` until it exists)."""
    if not session_id.startswith("session_") or "/" in session_id:
        return ""
    pattern = os.path.join(glob.escape(home), "sessions", "*", glob.escape(session_id))
    found = glob.glob(os.path.join(pattern, "agents", "main", "wire.jsonl"))
    return found[0] if found else ""


class HookPayload(HookFields):
    tool_call_id: str = ""
    tool_input: Any = None
    turn_id: Any = None


decode = HookDecoder(HookPayload)


class HookTranslator(ParentAgentHooks[HookPayload]):
    """Spool records → events, in spool order; the newest session and its wire."""

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        self.session_id = ""

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        hook = self.take(record)
        if hook is None:
            return []
        name = record.event
        base = hook_base(record, hook.session_id)
        if name == "SessionEnd":
            if hook.session_id != self.session_id:
                return []  # /clear ends the old session after the new one started
            return [ev.SessionEnded(reason=hook.reason, **base)]
        if hook.session_id and hook.session_id != self.session_id:
            self.session_id, self.transcript_path = hook.session_id, ""
        self.locate()
        if name == "SessionStart":
            return [ev.SessionStarted(**base)]
        turn = "" if hook.turn_id is None else str(hook.turn_id)
        if name == "PermissionRequest":
            return [tool_wait(turn, hook.tool_call_id, hook.tool_name, hook.tool_input, **base)]
        if name == "PermissionResult":
            return [ev.InputResolved(tool_use_id=hook.tool_call_id, **base)]
        return []

    def settled(self) -> list[ev.Event]:
        self.locate()  # the wire may appear after the hook that named its session
        return []

    def locate(self) -> None:
        """Find the newest session's wire, once it exists."""
        if self.transcript_path or not self.session_id:
            return
        homes = [kimi_dir(_proc.environ(self.agent_pid)) if self.agent_pid else "", kimi_dir()]
        for home in dict.fromkeys(h for h in homes if h):
            self.transcript_path = wire_of(home, self.session_id)
            if self.transcript_path:
                return
