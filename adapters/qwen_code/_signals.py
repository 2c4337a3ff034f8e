"""Qwen Code hooks → canonical events: the spool and the qwen process.

Facts: docs/providers/qwen-code.md §2 (tests/live/captures/qwen-code/tui-session/). The
hooks are Claude-shaped, with three differences that decide the rules here:

* ``PermissionRequest`` fires when the dialog opens, *before* any ``PreToolUse`` and with
  no tool id; ``PreToolUse`` fires only once the call was approved. So the wait is
  opened by ``PermissionRequest`` (its tool and input), and closed by the ``PreToolUse``
  of that tool and input (approved), or by a ``PostToolBatch`` naming it (a call Esc
  denied is listed ``cancelled``, and nothing else fires).
* A question form goes through the same permission path: ``PermissionRequest`` with
  ``tool_name: "ask_user_question"`` is the form opening (``question``).
* Esc mid-stream and Esc on a dialog fire no ``Stop``, only
  ``Notification{idle_prompt}``, which also follows every ``Stop``: it ends whatever
  turn is open. ``UserPromptSubmit`` also fires, with an empty prompt, for each
  continuation after tool results: only a prompt opens a turn.

``Notification{permission_prompt}`` repeats the ``PermissionRequest`` before it and adds
nothing. The agent process is the hook's parent (the pid ``sessions/<pid>.json`` names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from agentspool.adapters.common.calls import call_input, tool_wait
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.parent_agent import ParentAgentHooks
from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.translator import Base, HookFields, hook_base
from agentspool.adapters.qwen_code._schema import HOOK_FIELDS
from agentspool.core import events as ev
from agentspool.core import proc as _proc
from agentspool.core.seam import PendingDialog
from agentspool.spool.files import open_regular
from agentspool.spool.read import SpoolRecord

QUESTION_TOOL = "ask_user_question"
SHELL_TOOL = "run_shell_command"


class _BatchCall(msgspec.Struct):
    tool_name: str = ""
    tool_input: Any = None
    tool_call_id: str = ""
    status: str = ""


class HookPayload(HookFields):
    transcript_path: str = ""
    prompt_id: str = ""
    prompt: str = ""
    tool_input: Any = None
    tool_call_id: str = ""
    notification_type: str = ""
    tool_calls: list[_BatchCall] = msgspec.field(default_factory=list)


decode = HookDecoder(HookPayload)


def dialog_for(tool_use_id: str, tool_input: dict[str, Any]) -> PendingDialog:
    """``ask_user_question``'s ``questions[{question, header, options, multiSelect}]``."""
    return question_dialog(tool_use_id, tool_input.get("questions"))


class _Asked(msgspec.Struct):
    tool_name: str
    tool_input: dict[str, Any]


Handler = Callable[["HookTranslator", HookPayload, Base], list[ev.Event]]


class HookTranslator(ParentAgentHooks[HookPayload]):
    """Spool records → events, in spool order, keeping the open permission request."""

    def __init__(self) -> None:
        super().__init__(decode, HOOK_FIELDS)
        self._turn = ""
        self._asked: _Asked | None = None

    def translate(self, record: SpoolRecord) -> list[ev.Event]:
        hook = self.take(record)
        if hook is None:
            return []
        name = record.event
        self._locate(hook.transcript_path, name)
        handler = self._HOOKS.get(name)
        if handler is None:
            return []
        return handler(self, hook, hook_base(record, hook.session_id))

    def _session_start(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        self._turn, self._asked = "", None
        return [ev.SessionStarted(how=hook.source or "startup", **base)]

    def _prompt(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        if not hook.prompt or not hook.prompt_id:
            return []  # a continuation after tool results, inside the same turn
        self._turn = hook.prompt_id
        return [ev.TurnStarted(turn_id=hook.prompt_id, **base)]

    def _permission(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        name, tool_input = hook.tool_name, call_input(hook.tool_input)
        self._asked = _Asked(name, tool_input)
        form = dialog_for if name == QUESTION_TOOL else None
        return [tool_wait(hook.prompt_id or self._turn, "", name, tool_input, form=form, **base)]

    def _pre_tool(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        out = self._answered(hook.tool_name, call_input(hook.tool_input), base)
        out.append(
            ev.ToolStarted(
                turn_id=self._turn, tool_use_id=hook.tool_call_id, tool_name=hook.tool_name, **base
            )
        )
        return out

    def _post_tool(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        return [ev.ToolFinished(turn_id=self._turn, tool_use_id=hook.tool_call_id, **base)]

    def _post_batch(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        out: list[ev.Event] = []
        for call in hook.tool_calls:
            out += self._answered(call.tool_name, call_input(call.tool_input), base)
            out.append(ev.ToolFinished(turn_id=self._turn, tool_use_id=call.tool_call_id, **base))
        return out

    def _notification(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        if hook.notification_type != "idle_prompt":
            return []
        return self._stopped("", "completed", base)

    def _stop(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        return self._stopped(hook.prompt_id, "completed", base)

    def _stop_failure(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        return self._stopped(hook.prompt_id, "failed", base)

    def _session_end(self, hook: HookPayload, base: Base) -> list[ev.Event]:
        self._turn, self._asked = "", None
        if hook.reason == "clear":
            return []  # the next SessionStart opens the fresh conversation
        return [ev.SessionEnded(reason=hook.reason, **base)]

    _HOOKS: ClassVar[dict[str, Handler]] = {
        "SessionStart": _session_start,
        "UserPromptSubmit": _prompt,
        "PermissionRequest": _permission,
        "PreToolUse": _pre_tool,
        "PostToolUse": _post_tool,
        "PostToolUseFailure": _post_tool,
        "PostToolBatch": _post_batch,
        "Notification": _notification,
        "Stop": _stop,
        "StopFailure": _stop_failure,
        "SessionEnd": _session_end,
    }

    def _answered(self, tool_name: str, tool_input: dict[str, Any], base: Base) -> list[ev.Event]:
        """The open permission request, if this call is the one it asked about."""
        asked = self._asked
        if asked is None or asked.tool_name != tool_name or asked.tool_input != tool_input:
            return []
        self._asked = None
        return [ev.InputResolved(**base)]

    def _stopped(self, turn: str, outcome: Any, base: Base) -> list[ev.Event]:
        self._turn, self._asked = "", None
        return [ev.InputResolved(**base), ev.TurnStopped(turn_id=turn, outcome=outcome, **base)]


class _Status(msgspec.Struct):
    pid: int = 0
    sessionId: str = ""  # noqa: N815 - the CLI's field names
    cwd: str = ""
    procStart: str = ""  # noqa: N815
    """``<boot id>:<start time in clock ticks>`` (0.24.4)."""


def live_status(path: str) -> tuple[str, int, str] | None:
    """``sessions/<pid>.json`` of a live qwen process: (session id, pid, cwd). It holds no
    state (docs/providers/qwen-code.md §4); the file is left behind only by a crash."""
    try:
        with open_regular(path) as fh:
            status = msgspec.json.decode(fh.read(1 << 16), type=_Status)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    proc = _proc.stat(status.pid) if status.sessionId else None
    ticks = status.procStart.rpartition(":")[2]
    if proc is None or (ticks.isdigit() and int(ticks) != proc.started):
        return None  # gone, or the pid names a younger process now
    return status.sessionId, status.pid, status.cwd
