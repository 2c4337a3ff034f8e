"""Claude Code live signals → canonical events: the hook spool and the native status file.

Facts: docs/providers/claude-code.md §1-§3 and §5.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import msgspec

from agentspool.adapters.claude_code._records import FORMS
from agentspool.adapters.claude_code._schema import (
    HOOK_FIELDS,
    NATIVE_FIELDS,
    NATIVE_STATUSES,
    NATIVE_WAITS,
)
from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.drift import DriftCounter, object_keys
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import Base, HookFields, HookReader, hook_base
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.spool.files import open_regular
from agentspool.spool.read import SpoolRecord

# `waitingFor` values of sessions/<pid>.json; the binary maps "input needed" to a
# question and the others to a permission.
QUESTION_WAITS = frozenset({"input needed"})
PRINT_ENTRYPOINTS = frozenset({"sdk-cli", "sdk-ts", "sdk-py"})


class _Task(msgspec.Struct):
    id: str = ""
    status: str = ""


class _Call(msgspec.Struct):
    tool_use_id: str = ""


class HookPayload(HookFields):
    transcript_path: str = ""
    prompt_id: str = ""
    tool_input: dict[str, Any] | None = None
    tool_use_id: str = ""
    agent_id: str = ""
    notification_type: str = ""
    background_tasks: list[_Task] = msgspec.field(default_factory=list)
    tool_calls: list[_Call] = msgspec.field(default_factory=list)


decode = HookDecoder(HookPayload)
Handler = Callable[["HookTranslator", HookPayload, Base, str], list[ev.Event]]
"""One hook's meaning: (translator, payload, base, the main agent's turn) → events."""


class HookTranslator(HookReader[HookPayload]):
    """Turns spool records into events, in spool order, keeping what matching needs."""

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        # PreToolUse calls not yet finished: PermissionRequest carries no tool_use_id,
        # so it is matched to the latest unfinished call with the same tool and input.
        self._calls: list[tuple[str, str, Any, str]] = []  # (tool_use_id, name, input, agent)

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        hook = self._payload(record)
        if hook is None:
            return []
        name = record.event
        if record.agent_pid:
            self.agent_pid = record.agent_pid
        if hook.cwd and not hook.agent_id:
            self.cwd = hook.cwd
        self._locate(hook.transcript_path, name)
        handler = self._HOOKS.get(name)
        if handler is None:
            return []
        base = hook_base(record, hook.session_id)
        return handler(self, hook, base, "" if hook.agent_id else hook.prompt_id)

    def _session_start(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return [ev.SessionStarted(how=hook.source or "startup", **base)]

    def _prompt(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return [ev.TurnStarted(turn_id=hook.prompt_id, **base)] if hook.prompt_id else []

    def _pre_tool(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        self._calls.append((hook.tool_use_id, hook.tool_name, hook.tool_input, hook.agent_id))
        if hook.agent_id:
            return []
        return [
            ev.ToolStarted(
                turn_id=turn, tool_use_id=hook.tool_use_id, tool_name=hook.tool_name, **base
            )
        ]

    def _permission(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        if self._print_mode():
            return []  # -p denies at once, no dialog: docs/providers/claude-code.md §3.5
        tool_use_id = self._match(hook)
        return [
            tool_wait(
                turn,
                tool_use_id,
                hook.tool_name,
                hook.tool_input,
                form=FORMS.get(hook.tool_name),
                agent_id=hook.agent_id,
                **base,
            )
        ]

    def _post_tool(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return self._finished([hook.tool_use_id], turn, base)

    def _post_batch(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return self._finished([c.tool_use_id for c in hook.tool_calls], turn, base)

    def _notification(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        if hook.notification_type == "permission_prompt":
            return [ev.InputRequested(turn_id="", kind="approval", **base)]
        if hook.notification_type == "idle_prompt":
            return [ev.TurnStopped(turn_id=hook.prompt_id, **base)]
        return []

    def _stop(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        running = tuple(t.id for t in hook.background_tasks if t.status in ("running", ""))
        if not hook.agent_id:
            self._calls.clear()
        return [
            ev.TurnStopped(turn_id=hook.prompt_id, outcome="completed", background=running, **base)
        ]

    def _stop_failure(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return [ev.TurnStopped(turn_id=hook.prompt_id, outcome="failed", **base)]

    def _subagent_stop(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return [ev.BackgroundFinished(task_id=hook.agent_id, **base)] if hook.agent_id else []

    def _session_end(self, hook: HookPayload, base: Base, turn: str) -> list[ev.Event]:
        return [ev.SessionEnded(reason=hook.reason, **base)] if hook.reason != "clear" else []

    _HOOKS: ClassVar[dict[str, Handler]] = {
        "SessionStart": _session_start,
        "UserPromptSubmit": _prompt,
        "PreToolUse": _pre_tool,
        "PermissionRequest": _permission,
        "PostToolUse": _post_tool,
        "PostToolUseFailure": _post_tool,
        "PermissionDenied": _post_tool,
        "PostToolBatch": _post_batch,
        "Notification": _notification,
        "Stop": _stop,
        "StopFailure": _stop_failure,
        "SubagentStop": _subagent_stop,
        "SessionEnd": _session_end,
    }

    def _print_mode(self) -> bool:
        status, _ = read_native(self.transcript_path, self.agent_pid)
        return status is not None and status.entrypoint in PRINT_ENTRYPOINTS

    def _match(self, hook: HookPayload) -> str:
        for tool_use_id, name, tool_input, agent in reversed(self._calls):
            if (
                name == hook.tool_name
                and agent == hook.agent_id
                and (
                    not hook.tool_input
                    or tool_input == hook.tool_input
                    # ExitPlanMode's hook input is {}: docs/providers/claude-code.md §3.3
                    or hook.tool_name == "ExitPlanMode"
                )
            ):
                return str(tool_use_id)
        return ""

    def _finished(self, ids: list[str], turn: str, base: dict[str, Any]) -> list[ev.Event]:
        done = set(ids)
        self._calls = [c for c in self._calls if c[0] not in done]
        out: list[ev.Event] = []
        for tool_use_id in ids:
            out.append(ev.ToolFinished(turn_id=turn, tool_use_id=tool_use_id, **base))
            out.append(ev.InputResolved(tool_use_id=tool_use_id, **base))
        return out


class NativeStatus(msgspec.Struct):
    pid: int = 0
    sessionId: str = ""  # noqa: N815 - the CLI's field names
    cwd: str = ""
    procStart: str = ""  # noqa: N815
    entrypoint: str = ""
    status: str = ""
    waitingFor: str = ""  # noqa: N815
    statusUpdatedAt: float = 0.0  # noqa: N815
    updatedAt: float = 0.0  # noqa: N815


def native_path(transcript_path: str, pid: int) -> str:
    """``<claude config dir>/sessions/<pid>.json``, beside ``projects/<slug>/<sid>.jsonl``."""
    claude_dir = os.path.dirname(os.path.dirname(os.path.dirname(transcript_path)))
    return os.path.join(claude_dir, "sessions", f"{pid}.json")


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` as the native file's ``procStart`` spells it
    (``/proc/<pid>/stat`` field 22), None if dead — a zombie too (``_proc.stat``)."""
    proc = _proc.stat(pid)
    return None if proc is None else str(proc.started)


_NATIVE = "status-file"
_NATIVE_KNOWN = {_NATIVE: NATIVE_FIELDS}


def native_drift() -> DriftCounter:
    """A counter for one read of the status file (its drift is as of that read)."""
    return DriftCounter(_NATIVE_KNOWN)


def _check_native(raw: bytes, status: NativeStatus, drift: DriftCounter) -> None:
    drift.see(_NATIVE, raw, object_keys)
    if status.status and status.status not in NATIVE_STATUSES:
        drift.unknown_type(f"status:{status.status}")
    if status.waitingFor and status.waitingFor not in NATIVE_WAITS:
        drift.unknown_type(f"waitingFor:{status.waitingFor}")


def read_native(
    transcript_path: str, pid: int, drift: DriftCounter | None = None
) -> tuple[NativeStatus | None, bool]:
    """(status file if it is about a live process, whether that process is gone).
    ``drift`` counts what the file holds that is not known here."""
    if not pid or not transcript_path:
        return None, False
    started = process_start(pid)
    if started is None:
        return None, True
    try:
        with open_regular(native_path(transcript_path, pid)) as fh:
            raw = fh.read()
    except OSError:
        return None, False
    try:
        status = msgspec.json.decode(raw, type=NativeStatus)
    except msgspec.DecodeError:
        # Mid-rewrite, or a field of a new type: either way nothing to go on.
        if drift is not None and raw.strip():
            drift.corrupt += 1
        return None, False
    if status.procStart and status.procStart != started:
        return None, True  # the pid was reused: the file is about a process long gone
    if drift is not None:
        _check_native(raw, status, drift)
    return status, False


def native_events(status: NativeStatus | None, gone: bool, pid: int) -> list[ev.Event]:
    if gone:
        # SIGKILL leaves the status file behind and fires no hook: a dead agent process
        # is the evidence that nothing is running or waiting any more.
        return [
            ev.SessionEnded(reason="process gone", at=time.time(), source=f"native:pid {pid} gone")
        ]
    if status is None or not status.status:
        return []
    at = (status.statusUpdatedAt or status.updatedAt) / 1000
    base: dict[str, Any] = {
        "at": at,
        "source": f"native:{status.status}",
        "epoch": status.sessionId,
    }
    if status.status == "waiting":
        kind: Literal["approval", "question"] = (
            "question" if status.waitingFor in QUESTION_WAITS else "approval"
        )
        return [ev.InputRequested(turn_id="", kind=kind, **base)]
    if status.status == "idle":
        # Set at once on deny/Esc, which fire no hook (docs/providers/claude-code.md §3.2, §5).
        return [ev.InputResolved(**base), ev.TurnStopped(**base)]
    if status.status == "busy":
        # Set the moment a prompt is answered, while the approved tool runs: no hook fires
        # until the tool ends (an 8 s command read as waiting for 8 s). Stamped after the
        # prompt's PermissionRequest, it proves that prompt gone; the busy written when
        # the turn began is older than the prompt and changes nothing.
        return [ev.InputResolved(**base)]
    return []
