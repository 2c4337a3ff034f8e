"""Kimi Code wire (``<KIMI_CODE_HOME>/sessions/<work dir key>/<session id>/agents/main/
wire.jsonl``) → canonical messages and canonical events, incrementally.

Grammar: docs/providers/kimi-code.md §3 (tests/live/captures/kimi-code/tui-session/). One
JSON record a line, ``{type, …, time}`` (``time`` in ms), appended as things happen —
also an open dialog, which makes the wire the one transcript here that attests a wait:

* ``turn.prompt{turnId, promptId}`` opens turn ``turnId``; ``turn.ended{turnId, reason:
  completed | cancelled | failed | blocked}`` ends it (``cancelled``: Esc);
* ``context.append_message{message{role, content, id, origin{kind}}}``: the prompt
  (``origin.kind: user``) and text the CLI injects (``injection``: reminders, hidden);
* ``context.append_loop_event{event}``: the model's output, ``content.part`` (text,
  thinking), ``tool.call{toolCallId, name, args}``, ``tool.result{toolCallId, result}``;
* ``interaction.request{id, kind: approval | question, toolCallId, request}`` is a dialog
  open, ``interaction.resolved{id, response}`` its answer (an approval's ``decision``);
* ``usage.record{usage{inputOther, output, inputCacheRead, inputCacheCreation}}``, one
  per model call: the CLI's own figures. ``inputOther`` excludes the cache: input is the
  sum of the three.

Every event comes from the wire in every read, live or not: it alone records the turn
and the dialogs durably; the hooks add the session's end and the agent process.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from agentspool.adapters.common.calls import tool_call, tool_wait
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.jsonl import DECODE_ERRORS
from agentspool.adapters.common.lines import LineParser
from agentspool.adapters.common.tokens import folded_usage
from agentspool.adapters.kimi_code._schema import IGNORED, WIRE_TYPES
from agentspool.core import events as ev
from agentspool.core.seam import Message, Usage
from agentspool.spool.files import open_regular

PRESENTATION = {
    "Bash": "shell",
    "Edit": "edit",
    "Write": "edit",
    "Read": "read",
    "Glob": "search",
    "Grep": "search",
    "AskUserQuestion": "question",
    "EnterPlanMode": "plan",
    "ExitPlanMode": "plan",
    "Agent": "agent",
}
_OUTCOMES: dict[str, Any] = {"completed": "completed", "cancelled": "interrupted"}


class _Record(msgspec.Struct, gc=False):
    type: str = ""
    time: float = 0.0
    agentId: str = ""  # noqa: N815 - the CLI's field names
    turnId: Any = None  # noqa: N815
    reason: str = ""
    id: str = ""
    kind: str = ""
    toolCallId: str = ""  # noqa: N815
    model: str = ""
    message: dict[str, Any] | None = None
    event: dict[str, Any] | None = None
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None


_decode = msgspec.json.Decoder(_Record).decode


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _tokens(raw: dict[str, Any]) -> Usage:
    return folded_usage(
        raw,
        uncached="inputOther",
        output="output",
        cache_read="inputCacheRead",
        cache_write="inputCacheCreation",
    )


def approval_input(request: dict[str, Any]) -> dict[str, Any]:
    """An approval names no arguments, only what it shows: a command's ``display``."""
    display = request.get("display")
    if isinstance(display, dict) and display.get("kind") == "command":
        return {"command": display.get("command", "")}
    return {}


class WireParser(LineParser):
    """Parse state for one main agent's wire: ``feed`` blocks of complete lines."""

    def __init__(self, session_id: str) -> None:
        super().__init__({})  # cli_version stays "": the wire names its protocol only
        self.session_id = session_id
        self._requests: dict[str, str] = {}
        """Open dialog id → the call it is about."""
        self._unpriced: Usage | None = None
        self._usages = 0
        self._model = ""

    def feed_line(self, raw: bytes) -> None:
        record = self._decoded(_decode, raw)
        if record is None or not self.drift.reads(record.type, WIRE_TYPES, IGNORED):
            return
        kind = record.type
        if record.agentId not in ("", "main"):
            return  # a subagent's record in the main wire: not this conversation
        base: dict[str, Any] = {
            "at": record.time / 1000,
            "source": f"transcript:{kind}",
            "epoch": self.session_id,
        }
        turn = "" if record.turnId is None else str(record.turnId)
        if kind == "metadata":
            self.events.append(ev.SessionStarted(**base))
        elif kind == "turn.prompt":
            self.events.append(ev.TurnStarted(turn_id=turn, **base))
        elif kind == "turn.ended":
            outcome = _OUTCOMES.get(record.reason, "failed")
            self.events.append(ev.TurnStopped(turn_id=turn, outcome=outcome, **base))
        elif kind == "context.append_message":
            self._message(record)
        elif kind == "context.append_loop_event":
            self._loop_event(record, base)
        elif kind == "interaction.request":
            self._request(record, turn, base)
        elif kind == "interaction.resolved":
            call = self._requests.pop(record.id, "")
            self.events.append(ev.InputResolved(tool_use_id=call, **base))
        elif kind == "usage.record":
            self._price(record)

    def _add(self, record: _Record, message: Message) -> None:
        message.seq = len(self.messages) + 1
        message.timestamp = _stamp(record.time)
        if self._unpriced is not None:
            message.usage, self._unpriced = self._unpriced, None
            message.model, message.message_id = self._model, f"usage-{self._usages}"
        self.messages.append(message)

    def _price(self, record: _Record) -> None:
        usage = _tokens(record.usage or {})
        self.usage.add(usage)
        if not (usage.input_tokens or usage.output_tokens):
            return  # a call Esc cut short: recorded with zeros
        self._usages += 1
        self._model = record.model
        if self._unpriced is None:
            self._unpriced = usage
        else:
            self._unpriced.add(usage)

    def _message(self, record: _Record) -> None:
        message = record.message or {}
        origin = message.get("origin") if isinstance(message.get("origin"), dict) else {}
        if message.get("role") != "user":
            return
        hidden = (origin or {}).get("kind") != "user"
        made = Message(
            id=str(message.get("id") or f"m{len(self.messages)}"),
            kind="text",
            role="user",
            text=_text(message.get("content")),
            is_meta=hidden,
        )
        if hidden:
            made.visibility = "hidden"
        self._add(record, made)

    def _loop_event(self, record: _Record, base: dict[str, Any]) -> None:
        event = record.event or {}
        kind, uuid = event.get("type"), str(event.get("uuid") or "")
        if kind == "content.part":
            part = event.get("part") if isinstance(event.get("part"), dict) else {}
            text = str((part or {}).get("text") or (part or {}).get("think") or "")
            thinking = (part or {}).get("type") == "think"
            kind_made: Any = "thinking" if thinking else "text"
            self._add(record, Message(id=uuid, kind=kind_made, role="assistant", text=text))
        elif kind == "tool.call":
            call_id, name = str(event.get("toolCallId") or uuid), str(event.get("name") or "")
            shown = PRESENTATION.get(name, "mcp" if "__" in name else "other")
            self._add(record, tool_call(uuid or call_id, call_id, name, event.get("args"), shown))
            self.events.append(ev.ToolStarted(tool_use_id=call_id, tool_name=name, **base))
        elif kind == "tool.result":
            call_id = str(event.get("toolCallId") or "")
            result = event.get("result") if isinstance(event.get("result"), dict) else {}
            output = (result or {}).get("output")
            message = Message(
                id=f"{call_id}/result",
                kind="tool_result",
                role="tool",
                text=output if isinstance(output, str) else msgspec.json.encode(output).decode(),
                tool_use_id=call_id,
                is_error=bool((result or {}).get("isError")),
            )
            self._add(record, message)
            self.events.append(ev.ToolFinished(tool_use_id=call_id, **base))

    def _request(self, record: _Record, turn: str, base: dict[str, Any]) -> None:
        request = record.request or {}
        call = record.toolCallId or str(request.get("toolCallId") or "")
        self._requests[record.id] = call
        turn = turn or str(request.get("turnId", ""))
        if record.kind == "question":
            dialog = question_dialog(call, request.get("questions"))
            self.events.append(
                ev.InputRequested(
                    turn_id=turn,
                    kind="question",
                    tool_use_id=call,
                    tool_name="AskUserQuestion",
                    dialog=dialog,
                    **base,
                )
            )
        else:
            name = str(request.get("toolName") or "")
            self.events.append(tool_wait(turn, call, name, approval_input(request), **base))


def _stamp(ms: float) -> str:
    seconds = ms / 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(ms) % 1000:03d}Z"


def session_id_of(path: str) -> str:
    """``…/<session id>/agents/main/wire.jsonl`` → the session id (``""``: not a wire)."""
    parts = path.replace("\\", "/").split("/")
    if len(parts) >= 4 and parts[-3:] == ["agents", "main", "wire.jsonl"]:
        return parts[-4] if parts[-4].startswith("session_") else ""
    return ""


def is_wire(path: str) -> bool:
    """A Kimi Code main agent's wire: named so, its first line the ``metadata`` record."""
    if not session_id_of(path):
        return False
    try:
        with open_regular(path) as fh:
            first = _decode(fh.readline(1 << 16))
    except (OSError, *DECODE_ERRORS):
        return False
    return first.type == "metadata"
