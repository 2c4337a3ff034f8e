"""Gemini CLI hooks → canonical events: the spool and the gemini process.

Facts: docs/providers/gemini-cli.md §3. Every payload carries ``session_id`` (the chat
file's ``sessionId``), ``transcript_path`` (that file) and ``cwd``; none carries a turn
id or a tool call id. So the hooks own the turn here and name it themselves: each
``BeforeAgent`` opens turn ``prompt-<n>`` (the n-th prompt of the spool, the same on
every read), ``AfterAgent`` ends it. ``BeforeTool`` opens call ``tool-<n>``;
``AfterTool`` (same tool and input, first open one) finishes it.

The permission wait is ``Notification`` with ``notification_type: "ToolPermission"``:
it fires after the call's ``BeforeTool`` once the confirmation is on screen, and names
the kind (``details.type``: ``exec`` with the command, ``edit``, ``mcp``, ``ask_user``
…) but not the call, so it is matched to the newest open ``BeforeTool`` of the session
(same command first). Nothing fires when it closes: an approval ends with the call's
``AfterTool``; "No" and Esc fire nothing at all — the chat file's cancelled tool call
and ``Request cancelled.`` record say so (``_chat``); the session's end or the process's
death end it too. Between the key and ``AfterTool`` (a build: minutes) nothing is
written, so an approved shell command is seen running under the gemini process
(``commands_started``). ``ask_user``'s ``BeforeTool`` is itself the question form opening.

The agent process is the hook's parent (the node process the CLI restarted itself as,
which writes the chat file and runs the tools); a hook that outlived it (a late
``SessionEnd``) names pid 1, which is not kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from agentspool.adapters.common.approved import Asked, approved
from agentspool.adapters.common.calls import call_input, tool_wait
from agentspool.adapters.common.parent_agent import ParentAgentHooks
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import Base, HookFields
from agentspool.adapters.gemini_cli._records import QUESTION_TOOL, SHELL_TOOL, dialog_for
from agentspool.adapters.gemini_cli._schema import HOOK_FIELDS
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.spool.read import SpoolRecord

PERMISSION = "ToolPermission"
# Hooks whose transcript_path is not the session going on: SessionEnd names the one
# ending (before /clear's SessionStart names the next).
# Which tools a confirmation of each ``details.type`` can belong to (details name no call).
_CONFIRMS = {
    "exec": (SHELL_TOOL,),
    "edit": ("replace", "write_file"),
    "ask_user": (QUESTION_TOOL,),
}


class HookPayload(HookFields):
    transcript_path: str = ""
    tool_input: Any = None
    notification_type: str = ""
    details: Any = None


decode = HookDecoder(HookPayload)


class _Call(msgspec.Struct):
    session: str
    turn: str
    tool_use_id: str
    name: str
    tool_input: dict[str, Any]
    at: float = 0.0
    """When its ``BeforeTool`` ran (epoch seconds): the call was made, before any
    confirmation."""


class _Hook(msgspec.Struct):
    """A record as its handler reads it: the payload, and what the record says around
    it."""

    payload: HookPayload
    session: str
    turn: str
    """The session's open turn."""
    at: float
    source: str
    mono_ns: int

    @property
    def base(self) -> Base:
        """What every event of the record says: when, which hook, which session."""
        return {"at": self.at, "source": self.source, "epoch": self.session}


Handler = Callable[["HookTranslator", _Hook], list[ev.Event]]


class HookTranslator(ParentAgentHooks[HookPayload]):
    """Spool records → events, in spool order, keeping what matching needs."""

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        self.ended_paths: set[str] = set()
        """Chat files whose session a ``SessionEnd`` ended (the CLI deletes one that holds
        no conversation then)."""
        self._prompts = 0
        self._tools = 0
        self._turns: dict[str, str] = {}
        """Session → its open turn."""
        self._calls: list[_Call] = []
        self._approvals: dict[str, Asked] = {}
        """Session → the shell command approval asked and not yet proven answered."""

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        payload = self.take(record)
        if payload is None:
            return []
        name = record.event
        self._locate(payload.transcript_path, name)
        handler = self._HOOKS.get(name)
        if handler is None:
            return []
        session = payload.session_id
        hook = _Hook(
            payload=payload,
            session=session,
            turn=self._turns.get(session, ""),
            at=record.wall_ns / 1e9,
            source=f"hook:{name}",
            mono_ns=record.mono_ns,
        )
        return handler(self, hook)

    def _session_start(self, hook: _Hook) -> list[ev.Event]:
        how = hook.payload.source or "startup"
        return [ev.SessionStarted(how=how, **hook.base)]

    def _before_agent(self, hook: _Hook) -> list[ev.Event]:
        self._prompts += 1
        turn = self._turns[hook.session] = f"prompt-{self._prompts}"
        self._forget(hook.session)
        return [ev.TurnStarted(turn_id=turn, **hook.base)]

    def _before_tool(self, hook: _Hook) -> list[ev.Event]:
        self._tools += 1
        call = _Call(
            session=hook.session,
            turn=hook.turn,
            tool_use_id=f"tool-{self._tools}",
            name=hook.payload.tool_name,
            tool_input=call_input(hook.payload.tool_input),
            at=hook.at,
        )
        self._calls.append(call)
        out: list[ev.Event] = [
            ev.ToolStarted(
                turn_id=call.turn,
                tool_use_id=call.tool_use_id,
                tool_name=call.name,
                **hook.base,
            )
        ]
        if call.name == QUESTION_TOOL:
            out.append(self._wait(call, hook.at, hook.source))
        return out

    def _notification(self, hook: _Hook) -> list[ev.Event]:
        if hook.payload.notification_type != PERMISSION:
            return []
        details = hook.payload.details if isinstance(hook.payload.details, dict) else {}
        asked = self._match_confirmation(hook.session, details)
        if asked is None:  # a confirmation of a call no BeforeTool named: unspecific
            return [
                ev.InputRequested(
                    turn_id=hook.turn,
                    kind="approval",
                    **hook.base,
                )
            ]
        command = details.get("command") if details.get("type") == "exec" else ""
        self._approvals[hook.session] = Asked(
            tool_use_id=asked.tool_use_id,
            command=command if isinstance(command, str) else "",
            mono_ns=hook.mono_ns,
            at=hook.at,
            epoch=hook.session,
        )
        return [self._wait(asked, hook.at, hook.source)]

    def _after_tool(self, hook: _Hook) -> list[ev.Event]:
        finished = self._match_finished(hook.session, hook.payload)
        if finished is None:
            return []
        self._calls.remove(finished)
        asked = self._approvals.get(hook.session)
        if asked is not None and asked.tool_use_id == finished.tool_use_id:
            del self._approvals[hook.session]
        return [
            ev.ToolFinished(turn_id=finished.turn, tool_use_id=finished.tool_use_id, **hook.base),
            ev.InputResolved(tool_use_id=finished.tool_use_id, **hook.base),
        ]

    def _after_agent(self, hook: _Hook) -> list[ev.Event]:
        self._forget(hook.session)
        self._turns.pop(hook.session, None)
        if not hook.turn:
            return []
        return [ev.TurnStopped(turn_id=hook.turn, **hook.base)]

    def _session_end(self, hook: _Hook) -> list[ev.Event]:
        if hook.payload.transcript_path:
            self.ended_paths.add(hook.payload.transcript_path)
        self._forget(hook.session)
        self._turns.pop(hook.session, None)
        reason = hook.payload.reason
        return [ev.SessionEnded(reason=reason, **hook.base)]

    _HOOKS: ClassVar[dict[str, Handler]] = {
        "SessionStart": _session_start,
        "BeforeAgent": _before_agent,
        "BeforeTool": _before_tool,
        "Notification": _notification,
        "AfterTool": _after_tool,
        "AfterAgent": _after_agent,
        "SessionEnd": _session_end,
    }

    def _wait(self, call: _Call, at: float, source: str) -> ev.InputRequested:
        """The call waiting: a call of ``ask_user`` is the question form (a confirmation of
        type ``ask_user`` is matched to such a call only: ``_CONFIRMS``)."""
        form = dialog_for if call.name == QUESTION_TOOL else None
        return tool_wait(
            call.turn,
            call.tool_use_id,
            call.name,
            call.tool_input,
            form=form,
            at=at,
            source=source,
            epoch=call.session,
        )

    def open_calls(self) -> list[_Call]:
        """The calls a ``BeforeTool`` opened and no ``AfterTool`` closed yet, oldest first."""
        return list(self._calls)

    def _forget(self, session: str) -> None:
        self._calls = [c for c in self._calls if c.session != session]
        self._approvals.pop(session, None)

    def settled(self) -> list[ev.Event]:
        return self.commands_started()

    def commands_started(self) -> list[ev.Event]:
        """Approvals proven given by the approved shell command running (``approved``).

        Gemini CLI 0.61.0 runs it as ``bash -c <script>``, a child of the gemini process
        started ~0.1 s after the key, whose script holds the command on a line of its
        own; nothing fires until the command ends (``AfterTool``)."""

        def runs(_session: str, asked: Asked, _p: _proc.Proc, args: list[str]) -> bool:
            line = "\n" + asked.command + "\n"
            return any(line in arg for arg in args[1:])

        found = approved(self.agent_pid, self.agent_seen_ns, self._approvals, runs)
        for session, _ in found:
            del self._approvals[session]
        return [resolved for _, resolved in found]

    def _match_confirmation(self, session: str, details: dict[str, Any]) -> _Call | None:
        """The open call a confirmation is for: the newest of the session whose tool
        the confirmation's type allows, the same command first."""
        tools = _CONFIRMS.get(str(details.get("type", "")))
        candidates = [
            c
            for c in reversed(self._calls)
            if c.session == session and (tools is None or c.name in tools)
        ]
        command = details.get("command")
        exact = [c for c in candidates if command and c.tool_input.get("command") == command]
        found = exact or candidates
        return found[0] if found else None

    def _match_finished(self, session: str, hook: HookPayload) -> _Call | None:
        tool_input = call_input(hook.tool_input)
        same = [c for c in self._calls if c.session == session and c.name == hook.tool_name]
        exact = [c for c in same if c.tool_input == tool_input]
        found = exact or same
        return found[0] if found else None
