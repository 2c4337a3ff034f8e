"""Pi's session file → canonical records and events.

Facts: docs/providers/pi.md §3. One JSON entry a line: a ``session`` header (the session
id, the cwd), then entries ``{type, id, parentId, timestamp, …}``; a ``message`` entry
holds one message: ``user``, ``assistant`` (content blocks ``text`` / ``thinking`` /
``toolCall``, ``usage``, ``stopReason``) or ``toolResult``. Pi appends a message when it
ends, and writes nothing at all until the session's first assistant message.

The file alone (a transcript-only read: an ended run, a session no extension saw)
derives the turn (``lifecycle``): a user message opens turn ``<its entry id>``; an
assistant message that stops for ``toolUse`` starts its calls, each closed by its
``toolResult``; one that stops otherwise ends the turn — ``stop``/``length`` completed,
``error`` failed, ``aborted`` (Esc) interrupted. Live, the extension's spool owns the
turn (``_signals``): the file then adds only its records.

Usage: each assistant message's ``usage``; ``input`` leaves out what was read from and
written to the cache (120 prompt tokens, 64 of them cached, read ``input: 56,
cacheRead: 64``), so the folded input is ``input + cacheRead + cacheWrite``. An aborted
message carries zero usage. The sums equal Pi's own footer (``↑`` input, ``↓`` output,
``R`` cache read; tests/adapters/pi/).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.common.calls import tool_call
from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.jsonl import split_lines
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.common.tokens import folded_usage
from agentspool.adapters.pi._schema import ENTRY_FIELDS
from agentspool.core import events as ev
from agentspool.core.seam import Message, Usage

SHELL_TOOL = "bash"
_PRESENTATION = {
    "bash": "shell",
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "grep": "search",
    "find": "search",
    "ls": "search",
}
_ENDS = {"stop": "completed", "length": "completed", "error": "failed", "aborted": "interrupted"}
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)


class Entry(msgspec.Struct, gc=False):
    type: str = ""
    id: str = ""
    timestamp: str = ""
    cwd: str = ""
    message: dict[str, Any] | None = None
    summary: str = ""
    name: str = ""
    content: Any = None
    display: bool = True


_decode = msgspec.json.Decoder(Entry).decode


def presentation(name: str) -> str:
    return _PRESENTATION.get(name, "other")


def usage_of(raw: Any) -> Usage | None:
    """Pi's usage, folded: its ``input`` leaves out the cache reads and writes."""
    if not isinstance(raw, dict):
        return None
    return folded_usage(
        raw, uncached="input", output="output", cache_read="cacheRead", cache_write="cacheWrite"
    )


def text_of(content: Any) -> str:
    """A message's text: a string, or its ``text`` blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


class SessionParser:
    """Parse state for one session file: ``feed`` blocks of complete lines in order.
    ``lifecycle``: derive the turn from the file (a transcript-only read)."""

    def __init__(self, *, lifecycle: bool = True) -> None:
        self.lifecycle = lifecycle
        self.messages: list[Message] = []
        self.events: list[ev.Event] = []
        self.usage = Usage()
        self.session_id = ""
        self.cwd = ""
        self.cli_version = ""  # Pi writes no version into the file (its header: version 3)
        self.title = ""
        self.corrupt = 0
        self.drift = DriftCounter(ENTRY_FIELDS)
        self._turn = ""

    def feed(self, block: memoryview) -> None:
        for raw in split_lines(block):
            if not raw.strip():
                continue
            try:
                entry = _decode(raw)
            except _DECODE_ERRORS:
                self.corrupt += 1
                continue
            self._check(entry, raw)
            self._entry(entry)

    def _check(self, entry: Entry, raw: bytes) -> None:
        shape = entry.type
        if not self.drift.reads(shape, ENTRY_FIELDS):
            return
        if shape not in self.drift.checked:
            self.drift.see(shape, raw)
        message = entry.message
        if isinstance(message, dict):
            role = f"message:{_str(message.get('role')) or '?'}"
            if role not in ENTRY_FIELDS:
                self.drift.unknown_type(role)
            elif role not in self.drift.checked:
                self.drift.check(role, message)

    def _event(self, event: type[Any], at: float, kind: str, **fields: Any) -> None:
        self.events.append(
            event(epoch=self.session_id, at=at, source=f"transcript:{kind}", **fields)
        )

    def _add(self, message: Message, entry: Entry) -> None:
        message.seq = len(self.messages) + 1
        message.timestamp = entry.timestamp
        self.messages.append(message)

    def _entry(self, entry: Entry) -> None:
        kind, at = entry.type, epoch_seconds(entry.timestamp)
        if kind == "session":
            self.session_id = self.session_id or entry.id
            self.cwd = self.cwd or entry.cwd
            self._event(ev.SessionStarted, at, kind, how="startup")
        elif kind == "message" and isinstance(entry.message, dict):
            self._message(entry, entry.message, at)
        elif kind == "compaction":
            text = entry.summary
            self._add(Message(id=entry.id, kind="compaction", role="system", text=text), entry)
        elif kind == "branch_summary":
            text = entry.summary
            self._add(Message(id=entry.id, kind="summary", role="system", text=text), entry)
        elif kind == "custom_message":
            text, hidden = text_of(entry.content), not entry.display
            record = Message(id=entry.id, kind="text", role="user", text=text, is_meta=True)
            record.visibility = "hidden" if hidden else "visible"
            self._add(record, entry)
        elif kind == "session_info":
            self.title = entry.name or self.title

    def _message(self, entry: Entry, message: dict[str, Any], at: float) -> None:
        role = message.get("role")
        if role == "user":
            text = text_of(message.get("content"))
            self._add(Message(id=entry.id, kind="text", role="user", text=text), entry)
            self._turn = entry.id
            if self.lifecycle:
                self._event(ev.TurnStarted, at, "user", turn_id=entry.id)
        elif role == "assistant":
            self._assistant(entry, message, at)
        elif role == "toolResult":
            call_id = _str(message.get("toolCallId"))
            result = Message(
                id=f"{entry.id}:result",
                kind="tool_result",
                role="tool",
                text=text_of(message.get("content")),
                tool_name=_str(message.get("toolName")),
                tool_use_id=call_id,
                is_error=message.get("isError") is True,
            )
            self._add(result, entry)
            if self.lifecycle:
                self._event(
                    ev.ToolFinished, at, "toolResult", turn_id=self._turn, tool_use_id=call_id
                )

    def _assistant(self, entry: Entry, message: dict[str, Any], at: float) -> None:
        made: list[Message] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            made += self._block(entry.id, len(made), block)
        stop = _str(message.get("stopReason"))
        text = _str(message.get("errorMessage")) or stop
        if stop == "aborted":
            made.append(
                Message(id=f"{entry.id}:{stop}", kind="interrupt", role="system", text=text)
            )
        elif stop == "error":
            made.append(Message(id=f"{entry.id}:{stop}", kind="error", role="assistant", text=text))
        if not made:  # a reply that produced nothing: its usage still counts (on a record)
            made.append(Message(id=entry.id, kind="text", role="assistant", is_meta=True))
        usage = usage_of(message.get("usage"))
        if usage is not None:
            self.usage.add(usage)
            made[0].usage = usage
        made[0].model = _str(message.get("model"))
        made[0].message_id = _str(message.get("responseId"))
        for record in made:
            self._add(record, entry)
        if not self.lifecycle:
            return
        if stop == "toolUse":
            for call in made:
                if call.kind == "tool_call":
                    self._event(
                        ev.ToolStarted,
                        at,
                        "toolCall",
                        turn_id=self._turn,
                        tool_use_id=call.tool_use_id,
                        tool_name=call.tool_name,
                    )
        elif stop in _ENDS and self._turn:
            self._event(ev.TurnStopped, at, stop, turn_id=self._turn, outcome=_ENDS[stop])

    @staticmethod
    def _block(entry_id: str, index: int, block: dict[str, Any]) -> list[Message]:
        kind = block.get("type")
        if kind == "text":
            text = _str(block.get("text"))
            return [Message(id=f"{entry_id}:{index}", kind="text", role="assistant", text=text)]
        if kind == "thinking":
            text = _str(block.get("thinking"))
            return [Message(id=f"{entry_id}:{index}", kind="thinking", role="assistant", text=text)]
        if kind == "toolCall":
            name, arguments = _str(block.get("name")), block.get("arguments")
            call_id = _str(block.get("id"))
            message_id = call_id or f"{entry_id}:{index}"
            return [tool_call(message_id, call_id, name, arguments, presentation(name))]
        return []
