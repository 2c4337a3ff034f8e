"""Qwen Code chat file (``~/.qwen/projects/<cwd slug>/chats/<session id>.jsonl``) →
canonical messages and canonical events, incrementally.

Grammar: docs/providers/qwen-code.md §3. One JSON record a line, appended as it
happens, each ``{uuid, parentUuid, sessionId, timestamp, type, …}``:

* ``user``: the prompt (``message.parts[{text}]``);
* ``assistant``: the model's answer in Gemini API parts — ``{text}`` and
  ``{functionCall{id, name, args}}`` — with ``usageMetadata`` (``promptTokenCount``
  already holds the cached ``cachedContentTokenCount``); an answer Esc cut short is
  written with what had streamed and no ``usageMetadata``;
* ``tool_result``: ``message.parts[{functionResponse{id, name, response}}]`` and
  ``toolCallResult{callId, status: success | cancelled | error}``;
* ``system``: the CLI's bookkeeping (``attribution_snapshot``, ``file_history_snapshot``,
  ``ui_telemetry``), no conversation.

The file is created at the first prompt; ``/clear`` starts a new file. Nothing is
written when a dialog opens (the unanswered call looks the same as a running one), nor
at the session's end.

Events, only with ``lifecycle`` (a transcript-only read; live, the hooks own the turn):
a prompt opens a turn, a function call is a tool started and its result finished, an
answer without a call ends the turn — ``completed`` with ``usageMetadata``,
``interrupted`` without.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.common.calls import tool_call
from agentspool.adapters.common.drift import object_keys
from agentspool.adapters.common.jsonl import DECODE_ERRORS
from agentspool.adapters.common.lines import LineParser
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.qwen_code._schema import CHAT_FIELDS, SYSTEM_SUBTYPES
from agentspool.core import events as ev
from agentspool.core.seam import Message, Usage
from agentspool.spool.files import open_regular

PRESENTATION = {
    "run_shell_command": "shell",
    "edit": "edit",
    "write_file": "edit",
    "notebook_edit": "edit",
    "read_file": "read",
    "glob": "search",
    "grep_search": "search",
    "tool_search": "search",
    "ask_user_question": "question",
    "enter_plan_mode": "plan",
    "exit_plan_mode": "plan",
    "agent": "agent",
}


class _Tokens(msgspec.Struct, gc=False):
    promptTokenCount: int = 0  # noqa: N815 - the CLI's field names
    candidatesTokenCount: int = 0  # noqa: N815
    cachedContentTokenCount: int = 0  # noqa: N815
    thoughtsTokenCount: int = 0  # noqa: N815


class _Content(msgspec.Struct, gc=False):
    parts: list[Any] = []


class _CallResult(msgspec.Struct, gc=False):
    callId: str = ""  # noqa: N815
    status: str = ""


class Record(msgspec.Struct, gc=False):
    uuid: str = ""
    sessionId: str = ""  # noqa: N815
    timestamp: str = ""
    type: str = ""
    subtype: str = ""
    cwd: str = ""
    version: str = ""
    model: str = ""
    message: _Content | None = None
    usageMetadata: _Tokens | None = None  # noqa: N815
    toolCallResult: _CallResult | None = None  # noqa: N815


_decode = msgspec.json.Decoder(Record).decode


def presentation(name: str) -> str:
    if name.startswith("mcp__"):
        return "mcp"
    return PRESENTATION.get(name, "other")


def _response_text(response: Any) -> tuple[str, bool]:
    """A function response's text (``output``, else ``error``) and whether it failed."""
    if isinstance(response, dict):
        for key, failed in (("output", False), ("error", True)):
            value = response.get(key)
            if isinstance(value, str):
                return value, failed
    return ("" if response is None else msgspec.json.encode(response).decode()), False


def _usage(tokens: _Tokens) -> Usage:
    return Usage(
        input_tokens=tokens.promptTokenCount,
        output_tokens=tokens.candidatesTokenCount + tokens.thoughtsTokenCount,
        cached_input_tokens=tokens.cachedContentTokenCount,
        reasoning_tokens=tokens.thoughtsTokenCount,
    )


class ChatParser(LineParser):
    """Parse state for one chat file: ``feed`` blocks of complete lines in file order."""

    def __init__(self, *, lifecycle: bool = True) -> None:
        super().__init__(CHAT_FIELDS)
        self.lifecycle = lifecycle
        self.open_calls: dict[str, tuple[str, dict[str, Any]]] = {}
        """Call id → (tool, input) of the calls no result answered yet, oldest first."""
        self._turn = ""

    def feed_line(self, raw: bytes) -> None:
        record = self._decoded(_decode, raw)
        if record is None or not self.drift.reads(record.type, CHAT_FIELDS):
            return
        kind = record.type
        if kind not in self.drift.checked:
            self.drift.see(kind, raw, object_keys)
        self.session_id = self.session_id or record.sessionId
        self.cwd = self.cwd or record.cwd
        self.cli_version = record.version or self.cli_version
        if kind == "system":
            if record.subtype not in SYSTEM_SUBTYPES:
                self.drift.unknown_type(f"system:{record.subtype}")
            return
        parts = record.message.parts if record.message is not None else []
        if kind == "user":
            self._user(record, parts)
        elif kind == "assistant":
            self._assistant(record, parts, raw)
        else:
            self._tool_result(record, parts)

    def _add(self, record: Record, message: Message) -> None:
        message.seq = len(self.messages) + 1
        message.timestamp = record.timestamp
        self.messages.append(message)

    def _event(self, event: type[ev.Event], record: Record, **fields: Any) -> None:
        if self.lifecycle:
            at = epoch_seconds(record.timestamp)
            self.events.append(
                event(at=at, source=f"transcript:{record.type}", epoch=self.session_id, **fields)
            )

    def _user(self, record: Record, parts: list[Any]) -> None:
        text = "\n".join(str(p["text"]) for p in parts if isinstance(p, dict) and "text" in p)
        self._add(record, Message(id=record.uuid, kind="text", role="user", text=text))
        self._turn = record.uuid
        self._event(ev.TurnStarted, record, turn_id=record.uuid)

    def _assistant(self, record: Record, parts: list[Any], raw: bytes) -> None:
        if record.usageMetadata is not None and "usageMetadata" not in self.drift.checked:
            members = object_keys(raw) or {}
            self.drift.see("usageMetadata", members.get("usageMetadata", b"{}"), object_keys)
        usage = _usage(record.usageMetadata) if record.usageMetadata is not None else None
        made: list[Message] = []
        calls = 0
        for index, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            if "text" in part and not part.get("thought"):
                suffix = f"/{index}" if index else ""
                text = str(part["text"])
                made.append(
                    Message(id=record.uuid + suffix, kind="text", role="assistant", text=text)
                )
            elif "text" in part:
                made.append(
                    Message(
                        id=f"{record.uuid}/{index}",
                        kind="thinking",
                        role="assistant",
                        text=str(part["text"]),
                    )
                )
            elif isinstance(call := part.get("functionCall"), dict):
                calls += 1
                call_id = str(call.get("id") or f"{record.uuid}/{index}")
                name = str(call.get("name") or "")
                found = call.get("args")
                args: dict[str, Any] = found if isinstance(found, dict) else {}
                self.open_calls[call_id] = (name, args)
                made.append(tool_call(call_id, call_id, name, args, presentation(name)))
                self._event(ev.ToolStarted, record, turn_id=self._turn, tool_use_id=call_id)
        if usage is not None and made:
            # One API response: its usage on its first record, counted once.
            made[0].usage, made[0].model, made[0].message_id = usage, record.model, record.uuid
            self.usage.add(usage)
        for message in made:
            self._add(record, message)
        if not calls:
            outcome = "completed" if usage is not None else "interrupted"
            self._event(ev.TurnStopped, record, turn_id=self._turn, outcome=outcome)

    def _tool_result(self, record: Record, parts: list[Any]) -> None:
        result = record.toolCallResult or _CallResult()
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(response, dict):
                continue
            call_id = str(response.get("id") or result.callId)
            text, failed = _response_text(response.get("response"))
            self.open_calls.pop(call_id, None)
            self._add(
                record,
                Message(
                    id=f"{record.uuid}/{call_id}",
                    kind="tool_result",
                    role="tool",
                    text=text,
                    tool_name=str(response.get("name") or ""),
                    tool_use_id=call_id,
                    is_error=failed or result.status in ("cancelled", "error"),
                ),
            )
            self._event(ev.ToolFinished, record, turn_id=self._turn, tool_use_id=call_id)
            if result.status == "cancelled":
                self._event(ev.InputResolved, record, tool_use_id=call_id)


def is_chat_file(path: str) -> bool:
    """A Qwen Code chat file: ``<session id>.jsonl`` whose first record is Qwen Code's
    (its records name their ``provenance``, which no other CLI's transcript does)."""
    if not session_id_of(path):
        return False
    try:
        with open_regular(path) as fh:
            first = fh.readline(1 << 20)
        record = _decode(first)
    except (OSError, *DECODE_ERRORS):
        return False
    return bool(record.sessionId) and record.type in CHAT_FIELDS and b'"provenance"' in first


def session_id_of(path: str) -> str:
    """The session a chat file belongs to: its name (``<session id>.jsonl``)."""
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".jsonl")] if name.endswith(".jsonl") and ".runtime" not in name else ""
