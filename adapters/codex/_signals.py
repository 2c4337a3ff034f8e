"""Codex live signals → canonical events: the hook spool.

Facts: docs/providers/codex.md §2.3-§2.5, §5. Codex passes no per-session environment
to hooks; the stdin payload is all (``session_id`` = the thread id, ``turn_id`` = the
rollout's turn id, ``transcript_path`` = the rollout). A sub-agent's hooks carry the
parent's ``session_id`` plus ``agent_id`` (the child thread id): they are translated
onto the child's own channel (epoch = child thread id), never the parent's turn.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.codex._rollout import QUESTION_TOOL, dialog_for
from agentspool.adapters.codex._schema import HOOK_FIELDS
from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.core import events as ev
from agentspool.spool.read import SpoolRecord

# Hooks name a call's tool as Claude Code would ("Bash"); the rollout's name for the
# same call is exec_command.
HOOK_TOOL_NAMES = {"Bash": "exec_command"}
# Hooks whose transcript_path is not the run's current thread: SubagentStart names the
# child's rollout, and SessionEnd fires at /quit for every thread the process loaded
# (including those /clear replaced), in no promised order.
_NOT_LOCATING = frozenset({"SubagentStart", "SubagentStop", "SessionEnd"})


class HookPayload(msgspec.Struct):
    session_id: str = ""
    transcript_path: str | None = None
    """``null`` with ``codex exec --ephemeral`` (no rollout file)."""
    turn_id: str = ""
    source: str = ""
    reason: str = ""
    trigger: str = ""
    tool_name: str = ""
    tool_input: Any = None
    tool_use_id: str = ""
    agent_id: str = ""


decode = HookDecoder(HookPayload)


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        value = tool_input.get("command", tool_input.get("cmd", ""))
        return value if isinstance(value, str) else str(value)
    return ""


class _Call(msgspec.Struct):
    turn: str
    agent: str
    tool_use_id: str
    name: str
    command: str


class HookTranslator:
    """Spool records → events, in spool order, keeping what matching needs.

    ``translate`` returns ``(agent_id, event)`` pairs: ``""`` is the run's own thread,
    anything else a sub-agent's channel.
    """

    def __init__(self) -> None:
        self.transcript_path = ""
        self.undecodable = 0
        self.drift = DriftCounter(HOOK_FIELDS)
        # PreToolUse calls not yet finished: PermissionRequest carries no tool_use_id,
        # so it is matched to the latest unfinished call of the same turn and tool.
        self._calls: list[_Call] = []
        # Approvals asked and not yet proven answered: (agent, turn) → tool_use_id.
        self._approvals: dict[tuple[str, str], str] = {}

    def translate(self, record: SpoolRecord) -> list[tuple[str, ev.Event]]:
        hook = decode(record)
        if hook is None:
            self.undecodable += 1
            return []
        name = record.event
        if name not in self.drift.checked and not record.truncated:
            self.drift.see(name, record.payload)
        if hook.transcript_path and not hook.agent_id and name not in _NOT_LOCATING:
            self.transcript_path = hook.transcript_path
        agent = hook.agent_id
        turn = hook.turn_id
        base: dict[str, Any] = {
            "at": record.wall_ns / 1e9,
            "source": f"hook:{name}",
            "epoch": agent or hook.session_id,
        }
        out: list[ev.Event] = []
        if name == "SessionStart":
            out.append(ev.SessionStarted(how=hook.source or "startup", **base))
        elif name == "SubagentStart":
            out.append(ev.SessionStarted(how="subagent", **base))
            if turn:
                out.append(ev.TurnStarted(turn_id=turn, **base))
        elif name in ("UserPromptSubmit", "PreCompact"):
            if turn:
                out.append(ev.TurnStarted(turn_id=turn, **base))
        elif name == "PreModelRequest":
            # Another model request: the turn goes on, so an approval asked in it was
            # granted (a denial is an Interrupt). After approval nothing else fires
            # until the command ends or yields (docs/providers/codex.md §5.2).
            if turn:
                out.append(ev.TurnStarted(turn_id=turn, **base))
                asked = self._approvals.pop((agent, turn), None)
                if asked is not None:
                    out.append(ev.InputResolved(tool_use_id=asked, **base))
        elif name == "PreToolUse":
            self._calls.append(
                _Call(
                    turn=turn,
                    agent=agent,
                    tool_use_id=hook.tool_use_id,
                    name=hook.tool_name,
                    command=_command(hook.tool_input),
                )
            )
            out.append(
                ev.ToolStarted(
                    turn_id=turn, tool_use_id=hook.tool_use_id, tool_name=hook.tool_name, **base
                )
            )
            if hook.tool_name == QUESTION_TOOL:
                tool_input = hook.tool_input if isinstance(hook.tool_input, dict) else {}
                out.append(
                    ev.InputRequested(
                        turn_id=turn,
                        kind="question",
                        tool_use_id=hook.tool_use_id,
                        tool_name=hook.tool_name,
                        tool_input=tool_input,
                        agent_id=agent,
                        dialog=dialog_for(hook.tool_use_id, tool_input),
                        **base,
                    )
                )
        elif name == "PermissionRequest":
            tool_use_id = self._match(hook)
            self._approvals[(agent, turn)] = tool_use_id
            tool_input = hook.tool_input if isinstance(hook.tool_input, dict) else {}
            out.append(
                ev.InputRequested(
                    turn_id=turn,
                    kind="approval",
                    tool_use_id=tool_use_id,
                    tool_name=hook.tool_name,
                    tool_input=tool_input,
                    agent_id=agent,
                    **base,
                )
            )
        elif name == "PostToolUse":
            self._calls = [c for c in self._calls if c.tool_use_id != hook.tool_use_id]
            if self._approvals.get((agent, turn)) == hook.tool_use_id:
                del self._approvals[(agent, turn)]
            out.append(ev.ToolFinished(turn_id=turn, tool_use_id=hook.tool_use_id, **base))
            out.append(ev.InputResolved(tool_use_id=hook.tool_use_id, **base))
        elif name in ("Stop", "SubagentStop", "Interrupt"):
            self._forget(agent, turn)
            out.append(
                ev.TurnStopped(
                    turn_id=turn,
                    outcome="interrupted" if name == "Interrupt" else "completed",
                    **base,
                )
            )
        elif name == "PostCompact":
            if hook.trigger == "manual" and turn:
                # A manual /compact is a turn of its own that ends right after this,
                # with task_complete and no Stop (docs/providers/codex.md §5.8).
                self._forget(agent, turn)
                out.append(ev.TurnStopped(turn_id=turn, outcome="completed", **base))
        elif name == "SessionEnd":
            out.append(ev.SessionEnded(reason=hook.reason, **base))
        return [(agent, e) for e in out]

    def _forget(self, agent: str, turn: str) -> None:
        self._calls = [c for c in self._calls if (c.agent, c.turn) != (agent, turn)]
        self._approvals.pop((agent, turn), None)

    def _match(self, hook: HookPayload) -> str:
        command = _command(hook.tool_input)
        same = [
            c
            for c in reversed(self._calls)
            if c.name == hook.tool_name and (c.agent, c.turn) == (hook.agent_id, hook.turn_id)
        ]
        exact = [c for c in same if not command or c.command == command]
        found = exact or same
        return found[0].tool_use_id if found else ""
