"""Codex live signals → canonical events: the hook spool and the codex process.

Facts: docs/providers/codex.md §2.3-§2.5, §5. Codex passes no per-session environment
to hooks; the stdin payload is all (``session_id`` = the thread id, ``turn_id`` = the
rollout's turn id, ``transcript_path`` = the rollout). A sub-agent's hooks carry the
parent's ``session_id`` plus ``agent_id`` (the child thread id): they are translated
onto the child's own channel (epoch = child thread id), never the parent's turn.

Each record's ``agent_pid`` is the native codex process (the hook's parent); its
children are evidence too (``HookTranslator.commands_started``, ``agent_gone``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from agentspool.adapters.codex._records import QUESTION_TOOL, dialog_for
from agentspool.adapters.codex._schema import HOOK_FIELDS
from agentspool.adapters.common.approved import Asked, approved
from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import Base, HookFields, HookReader, hook_base
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.spool.read import SpoolRecord

# Hooks name a call's tool as Claude Code would ("Bash"); the rollout's name for the
# same call is exec_command.
HOOK_TOOL_NAMES = {"Bash": "exec_command"}
# Hooks whose transcript_path is not the run's current thread: SubagentStart names the
# child's rollout, and SessionEnd fires at /quit for every thread the process loaded
# (including those /clear replaced), in no promised order.
_NOT_LOCATING = frozenset({"SubagentStart", "SubagentStop", "SessionEnd"})


class HookPayload(HookFields):
    transcript_path: str | None = None
    """``null`` with ``codex exec --ephemeral`` (no rollout file)."""
    turn_id: str = ""
    trigger: str = ""
    tool_input: Any = None
    tool_use_id: str = ""
    agent_id: str = ""


decode = HookDecoder(HookPayload)


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        value = tool_input.get("command", tool_input.get("cmd", ""))
        return value if isinstance(value, str) else str(value)
    return ""


def _words(command: str) -> list[str] | None:
    """The argv a shell execs for a simple ``command`` (``bash -c 'sleep 18'`` becomes
    ``sleep 18`` itself); ``None`` if it does not split."""
    import shlex  # only while an approval is open: not on every read path

    try:
        return shlex.split(command)
    except ValueError:
        return None


class _Call(msgspec.Struct):
    turn: str
    agent: str
    tool_use_id: str
    name: str
    command: str


"""The fields every event of a record shares: ``at``, ``source``, ``epoch``."""
Handler = Callable[["HookTranslator", HookPayload, Base, int], list[ev.Event]]
"""One hook's meaning: (translator, payload, base, the record's mono_ns) → events."""


class HookTranslator(HookReader[HookPayload]):
    """Spool records → events, in spool order, keeping what matching needs.

    ``translate`` returns ``(agent_id, event)`` pairs: ``""`` is the run's own thread,
    anything else a sub-agent's channel.
    """

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        # When a record last named the native codex process (the hooks' parent).
        self.agent_seen_ns = 0
        # PreToolUse calls not yet finished: PermissionRequest carries no tool_use_id,
        # so it is matched to the latest unfinished call of the same turn and tool.
        self._calls: list[_Call] = []
        # Approvals asked and not yet proven answered, by (agent, turn).
        self._approvals: dict[tuple[str, str], Asked] = {}

    def translate(self, record: SpoolRecord) -> list[tuple[str, ev.Event]]:
        hook = self._payload(record)
        if hook is None:
            return []
        if record.agent_pid > 1:  # pid 1: a hook that outlived its agent (as ParentAgentHooks)
            self.agent_pid, self.agent_seen_ns = record.agent_pid, record.mono_ns
        name = record.event
        if not hook.agent_id:
            self._locate(hook.transcript_path or "", name, _NOT_LOCATING)
        if hook.cwd and not hook.agent_id:
            self.cwd = hook.cwd
        handler = self._HOOKS.get(name)
        if handler is None:
            return []
        base = hook_base(record, hook.agent_id or hook.session_id)
        return [(hook.agent_id, e) for e in handler(self, hook, base, record.mono_ns)]

    def _session_start(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        return [ev.SessionStarted(how=hook.source or "startup", **base)]

    def _subagent_start(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        started: list[ev.Event] = [ev.SessionStarted(how="subagent", **base)]
        return started + self._turn_started(hook, base, mono_ns)

    def _turn_started(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        return [ev.TurnStarted(turn_id=hook.turn_id, **base)] if hook.turn_id else []

    def _model_request(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        # Another model request: the turn goes on, so an approval asked in it was
        # granted (a denial is an Interrupt). After approval nothing else fires
        # until the command ends or yields (docs/providers/codex.md §5.2).
        if not hook.turn_id:
            return []
        out: list[ev.Event] = [ev.TurnStarted(turn_id=hook.turn_id, **base)]
        asked = self._approvals.pop((hook.agent_id, hook.turn_id), None)
        if asked is not None:
            out.append(ev.InputResolved(tool_use_id=asked.tool_use_id, **base))
        return out

    def _pre_tool(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        turn, agent = hook.turn_id, hook.agent_id
        self._calls.append(
            _Call(
                turn=turn,
                agent=agent,
                tool_use_id=hook.tool_use_id,
                name=hook.tool_name,
                command=_command(hook.tool_input),
            )
        )
        out: list[ev.Event] = [
            ev.ToolStarted(
                turn_id=turn, tool_use_id=hook.tool_use_id, tool_name=hook.tool_name, **base
            )
        ]
        if hook.tool_name == QUESTION_TOOL:
            out.append(
                tool_wait(
                    turn,
                    hook.tool_use_id,
                    hook.tool_name,
                    hook.tool_input,
                    form=dialog_for,
                    agent_id=agent,
                    **base,
                )
            )
        return out

    def _permission(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        tool_use_id = self._match(hook)
        self._approvals[(hook.agent_id, hook.turn_id)] = Asked(
            tool_use_id=tool_use_id,
            command=_command(hook.tool_input),
            mono_ns=mono_ns,
            at=base["at"],
            epoch=base["epoch"],
        )
        return [
            tool_wait(
                hook.turn_id,
                tool_use_id,
                hook.tool_name,
                hook.tool_input,
                agent_id=hook.agent_id,
                **base,
            )
        ]

    def _post_tool(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        key = (hook.agent_id, hook.turn_id)
        self._calls = [c for c in self._calls if c.tool_use_id != hook.tool_use_id]
        asked = self._approvals.get(key)
        if asked is not None and asked.tool_use_id == hook.tool_use_id:
            del self._approvals[key]
        return [
            ev.ToolFinished(turn_id=hook.turn_id, tool_use_id=hook.tool_use_id, **base),
            ev.InputResolved(tool_use_id=hook.tool_use_id, **base),
        ]

    def _stop(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        self._forget(hook.agent_id, hook.turn_id)
        return [ev.TurnStopped(turn_id=hook.turn_id, outcome="completed", **base)]

    def _interrupt(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        self._forget(hook.agent_id, hook.turn_id)
        return [ev.TurnStopped(turn_id=hook.turn_id, outcome="interrupted", **base)]

    def _post_compact(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        if hook.trigger != "manual" or not hook.turn_id:
            return []
        # A manual /compact is a turn of its own that ends right after this,
        # with task_complete and no Stop (docs/providers/codex.md §5.8).
        self._forget(hook.agent_id, hook.turn_id)
        return [ev.TurnStopped(turn_id=hook.turn_id, outcome="completed", **base)]

    def _session_end(self, hook: HookPayload, base: Base, mono_ns: int) -> list[ev.Event]:
        return [ev.SessionEnded(reason=hook.reason, **base)]

    _HOOKS: ClassVar[dict[str, Handler]] = {
        "SessionStart": _session_start,
        "SubagentStart": _subagent_start,
        "UserPromptSubmit": _turn_started,
        "PreCompact": _turn_started,
        "PreModelRequest": _model_request,
        "PreToolUse": _pre_tool,
        "PermissionRequest": _permission,
        "PostToolUse": _post_tool,
        "Stop": _stop,
        "SubagentStop": _stop,
        "Interrupt": _interrupt,
        "PostCompact": _post_compact,
        "SessionEnd": _session_end,
    }

    def agent_gone(self) -> bool:
        """The codex process that ran the hooks is dead (or its pid now names a younger
        process): nothing runs or waits any more. SIGKILL fires no hook."""
        return (
            bool(self.agent_pid) and _proc.same_process(self.agent_pid, self.agent_seen_ns) is None
        )

    def commands_started(self) -> list[tuple[str, ev.Event]]:
        """Approvals proven answered by the approved command running (``approved``).

        Codex 0.169.0 runs it as ``bash -c <command>``, a child of the codex process
        started ~0.1 s after the key; bash execs a simple command, so then that child is
        the command's own words. Hooks are descendants too, but never carry the command.
        """
        words = {key: _words(asked.command) for key, asked in self._approvals.items()}

        def runs(key: tuple[str, str], asked: Asked, p: _proc.Proc, args: list[str]) -> bool:
            return asked.command in args[1:] or (
                args == words[key] and p.ppid == self.agent_pid  # not a step of another
            )

        found = approved(self.agent_pid, self.agent_seen_ns, self._approvals, runs)
        for key, _ in found:
            del self._approvals[key]
        return [(agent, resolved) for (agent, _turn), resolved in found]

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
