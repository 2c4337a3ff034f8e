"""OpenCode's session log → canonical records and canonical events.

Input: the lines ``_store.EventLogFollower`` hands on, one per row of the session's
``event`` log (docs/providers/opencode.md §2): ``session.created.1`` /
``session.updated.1`` (the session's info, ``revert`` among it), ``message.updated.1``
(a message's info), ``message.part.updated.1`` (one part, whole, as it is now; a part is
written again each time it changes), ``message.removed.1`` (a message deleted after
``/undo``).

Records. A part is one record (a tool part two: its call, and its result once it has
one), numbered at the part's first row; a later row of the same part replaces the record
with a new one under the same ``seq`` (records handed out are never changed). Text and
reasoning parts are ``text``/``thinking``; a ``step-finish`` part's tokens are a
``hidden`` record carrying the step's usage (a step is one model request, so abandoned
ones still count); an assistant message that ends in an error is an ``interrupt``
(``MessageAbortedError``: Esc) or an ``error`` record. Supersession is attested by
OpenCode itself: while ``session.revert`` names a message (``/undo``), that message and
every later one are ``inactive``; once OpenCode deletes them (the next prompt), the log's
``message.removed.1`` keeps them ``inactive`` for good.

Events. A user message opens its turn (the turn id is the user message id; assistant
messages name it as ``parentID``). An assistant message that completes ends the turn
unless it finished with ``tool-calls`` (the next step follows) — then only a rejected
permission or a dismissed question ends it (OpenCode stops the loop there). A tool part
running opens its call, a finished one closes it; a running ``question`` tool *is* the
open question form. What only the live channel can show — a permission prompt, the
session going idle — comes from the plugin spool (``_signals``).
"""

from __future__ import annotations

import time
from typing import Any, Literal

import msgspec

from agentspool.adapters.common.calls import tool_wait
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import object_keys
from agentspool.adapters.common.lines import LineParser
from agentspool.adapters.opencode._schema import LOG_FIELDS, presentation
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, Role, Usage, Visibility

QUESTION_TOOL = "question"
REJECTED = "The user rejected permission to use this specific tool call."
DISMISSED = "The user dismissed this question"
ABORTED = "MessageAbortedError"
CONTINUES = "tool-calls"


class _Time(msgspec.Struct, gc=False):
    created: int | None = None
    completed: int | None = None
    start: int | None = None
    end: int | None = None


class _Cache(msgspec.Struct, gc=False):
    read: int = 0
    write: int = 0


class _Tokens(msgspec.Struct, gc=False):
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache: _Cache = msgspec.field(default_factory=_Cache)


class _Error(msgspec.Struct, gc=False):
    name: str = ""
    data: dict[str, Any] | None = None


class _Info(msgspec.Struct, gc=False):
    id: str = ""
    role: str = ""
    parentID: str = ""  # noqa: N815 - OpenCode's own field names
    time: _Time = msgspec.field(default_factory=_Time)
    modelID: str = ""  # noqa: N815
    finish: str = ""
    error: _Error | None = None
    summary: Any = None


class _State(msgspec.Struct, gc=False):
    status: str = ""
    input: dict[str, Any] | None = None
    output: str | None = None
    error: str | None = None
    time: _Time | None = None


class _Part(msgspec.Struct, gc=False):
    id: str = ""
    messageID: str = ""  # noqa: N815
    type: str = ""
    text: str = ""
    synthetic: bool = False
    time: _Time | None = None
    tool: str = ""
    callID: str = ""  # noqa: N815
    state: _State | None = None
    tokens: _Tokens | None = None


class _Revert(msgspec.Struct, gc=False):
    messageID: str = ""  # noqa: N815
    partID: str | None = None  # noqa: N815


class _SessionInfo(msgspec.Struct, gc=False):
    id: str = ""
    parentID: str | None = None  # noqa: N815
    directory: str = ""
    version: str = ""
    title: str = ""
    revert: _Revert | None = None
    time: dict[str, int] | None = None


class _SessionRow(msgspec.Struct, gc=False):
    info: _SessionInfo


class _MessageRow(msgspec.Struct, gc=False):
    info: _Info


class _PartRow(msgspec.Struct, gc=False):
    part: _Part
    time: int = 0


class _Removed(msgspec.Struct, gc=False):
    messageID: str = ""  # noqa: N815
    partID: str = ""  # noqa: N815


class _Line(msgspec.Struct, gc=False):
    type: str = ""
    data: msgspec.Raw = msgspec.Raw(b"null")
    seq: int = -1


_lines = msgspec.json.Decoder(_Line)
_session = msgspec.json.Decoder(_SessionRow).decode
_message = msgspec.json.Decoder(_MessageRow).decode
_part = msgspec.json.Decoder(_PartRow).decode
_removed = msgspec.json.Decoder(_Removed).decode
_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)


def usage_of(tokens: _Tokens) -> Usage:
    """OpenCode's ``tokens.input`` leaves out cache reads and writes, and ``output``
    leaves out reasoning: both folded in, as every adapter reports them."""
    cache = tokens.cache
    return Usage(
        input_tokens=tokens.input + cache.read + cache.write,
        output_tokens=tokens.output + tokens.reasoning,
        cached_input_tokens=cache.read,
        reasoning_tokens=tokens.reasoning,
        cache_write_tokens=cache.write,
    )


def _iso(ms: int | None) -> str:
    if not ms:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _seconds(ms: int | None) -> float:
    return ms / 1000 if ms else 0.0


def dialog_for(tool_use_id: str, tool_input: object) -> Any:
    """The question form of a ``question`` call (``questions[{question, header,
    options[{label, description}], multiple}]``)."""
    questions = tool_input.get("questions") if isinstance(tool_input, dict) else None
    shaped = [
        {**q, "multiSelect": bool(q.get("multiple", False))}
        for q in questions or []
        if isinstance(q, dict)
    ]
    return question_dialog(tool_use_id, shaped)


class _Msg:
    """What the parser keeps of one message."""

    __slots__ = ("completed", "model", "parent", "records", "rejected", "role", "summary")

    def __init__(self, role: str) -> None:
        self.role = role
        self.parent = ""
        self.model = ""
        self.summary = False
        self.completed = False
        self.rejected = False
        self.records: list[str] = []


class TranscriptParser(LineParser):
    """One session's log, fed in blocks of whole lines (``feed``), in log order."""

    def __init__(self) -> None:
        super().__init__(LOG_FIELDS)
        self.agent_id = ""
        """The session's own id when it is a subagent's (it has a parent session)."""
        self._index: dict[str, int] = {}  # record id → position in messages
        self._msgs: dict[str, _Msg] = {}
        self._order: list[str] = []  # message ids, in order of first appearance
        self._removed: set[str] = set()
        self._revert: _Revert | None = None
        self._tools: dict[str, str] = {}  # tool part id → the last status seen
        self._started = False

    # -- input -------------------------------------------------------------------
    def feed(self, block: memoryview) -> None:
        try:
            lines = _lines.decode_lines(block)
        except _ERRORS:
            lines = []
            for raw in bytes(block).split(b"\n"):
                if raw.strip():
                    try:
                        lines.append(_lines.decode(raw))
                    except _ERRORS:
                        self.corrupt += 1
        for line in lines:
            self._line(line)

    def _line(self, line: _Line) -> None:
        kind = line.type
        data = line.data
        if kind not in self.drift.checked:
            if kind not in LOG_FIELDS:
                self.drift.unknown_type(kind)
            else:
                self.drift.check(kind, object_keys(data) or {})
        try:
            if kind in ("session.created.1", "session.updated.1"):
                self._check_inner("session", data, "info")
                self._on_session(_session(data).info)
            elif kind == "message.updated.1":
                info = _message(data).info
                self._check_inner(f"message:{info.role}", data, "info")
                self._on_message(info)
            elif kind == "message.part.updated.1":
                row = _part(data)
                self._check_inner(f"part:{row.part.type}", data, "part")
                self._on_part(row.part, row.time)
            elif kind == "message.removed.1":
                self._on_removed(_removed(data).messageID)
            elif kind == "message.part.removed.1":
                self._remove_part(_removed(data).partID)
        except _ERRORS:
            self.corrupt += 1

    def _check_inner(self, shape: str, data: msgspec.Raw, key: str) -> None:
        """Schema drift (ADR 0014) of what a row carries: the first info or part of each
        shape (``session``, ``message:<role>``, ``part:<type>``) against the fields
        OpenCode 1.18.33 writes; every one of a shape not known is counted."""
        if shape in self.drift.checked:
            return
        if shape not in LOG_FIELDS:
            self.drift.unknown_type(shape)
            return
        inner = (object_keys(data) or {}).get(key)
        self.drift.check(shape, object_keys(inner) or {} if inner is not None else {})

    # -- sessions ----------------------------------------------------------------
    def _on_session(self, info: _SessionInfo) -> None:
        if not self._started and info.id:
            self._started = True
            self.session_id = info.id
            created = (info.time or {}).get("created")
            self.events.append(
                ev.SessionStarted(
                    epoch=info.id,
                    at=_seconds(created),
                    source="transcript:session.created",
                )
            )
        if info.parentID:
            self.agent_id = info.id
        self.cwd = info.directory or self.cwd
        self.cli_version = info.version or self.cli_version
        revert = info.revert if info.revert and info.revert.messageID else None
        if revert != self._revert:
            self._revert = revert
            self._refresh_visibility(self._order)

    # -- messages ----------------------------------------------------------------
    def _on_message(self, info: _Info) -> None:
        msg = self._msgs.get(info.id)
        base: dict[str, Any] = {"epoch": self.session_id}
        if msg is None:
            msg = self._msgs[info.id] = _Msg(info.role)
            self._order.append(info.id)
            if info.role == "user":
                self.events.append(
                    ev.TurnStarted(
                        turn_id=info.id,
                        at=_seconds(info.time.created),
                        source="transcript:message.user",
                        **base,
                    )
                )
        msg.parent = info.parentID or msg.parent
        msg.model = info.modelID or msg.model
        msg.summary = msg.summary or info.summary is True
        if info.role != "assistant" or msg.completed or not info.time.completed:
            return
        msg.completed = True
        at = _seconds(info.time.completed)
        base.update(at=at, source="transcript:message.completed")
        outcome: Literal["completed", "interrupted", "failed"] | None = "completed"
        if info.error is not None and info.error.name:
            aborted = info.error.name == ABORTED
            outcome = "interrupted" if aborted else "failed"
            detail = (info.error.data or {}).get("message")
            self._record(
                info.id,
                Message(
                    id=f"{info.id}:error",
                    kind="interrupt" if aborted else "error",
                    role="user" if aborted else "system",
                    text=str(detail or info.error.name),
                    timestamp=_iso(info.time.completed),
                    is_error=not aborted,
                    parent_id=msg.parent,
                ),
            )
        elif info.finish == CONTINUES:
            outcome = "interrupted" if msg.rejected else None
        if outcome is not None and msg.parent:
            self.events.append(ev.TurnStopped(turn_id=msg.parent, outcome=outcome, **base))

    def _on_removed(self, message_id: str) -> None:
        self._removed.add(message_id)
        self._refresh_visibility([message_id])

    # -- parts -------------------------------------------------------------------
    def _on_part(self, part: _Part, stamp: int) -> None:
        msg = self._msgs.get(part.messageID)
        if msg is None:
            msg = self._msgs[part.messageID] = _Msg("")
            self._order.append(part.messageID)
        kind = part.type
        started = part.time.start if part.time else None
        when = _iso(started or stamp)
        role: Literal["user", "assistant"] = "user" if msg.role == "user" else "assistant"
        if kind == "text":
            text_kind: MessageKind = "summary" if msg.summary else "text"
            self._of_part(
                part,
                text_kind,
                role,
                when,
                text=part.text,
                is_meta=part.synthetic,
                parent_id=msg.parent,
            )
        elif kind == "reasoning":
            self._of_part(part, "thinking", "assistant", when, text=part.text, parent_id=msg.parent)
        elif kind == "compaction":
            self._of_part(part, "compaction", "system", when)
        elif kind == "tool":
            self._on_tool(part, msg, stamp)
        elif kind == "step-finish" and part.tokens is not None:
            usage = usage_of(part.tokens)
            if part.id not in self._index:
                self.usage.add(usage)
            self._of_part(
                part,
                "text",
                "assistant",
                when,
                visibility="hidden",
                parent_id=msg.parent,
                usage=usage,
                message_id=part.id,
                model=msg.model,
            )

    def _of_part(
        self, part: _Part, kind: MessageKind, role: Role, when: str, **fields: Any
    ) -> None:
        """The record a part of a log message makes (its id the part's)."""
        self._record(
            part.messageID, Message(id=part.id, kind=kind, role=role, timestamp=when, **fields)
        )

    def _on_tool(self, part: _Part, msg: _Msg, stamp: int) -> None:
        state = part.state or _State()
        times = state.time or _Time()
        turn = msg.parent
        base: dict[str, Any] = {"epoch": self.session_id}
        self._record(
            part.messageID,
            Message(
                id=part.id,
                kind="tool_call",
                role="assistant",
                timestamp=_iso(times.start or stamp),
                tool_name=part.tool,
                tool_use_id=part.callID,
                tool_input=state.input or {},
                presentation=presentation(part.tool),
                parent_id=turn,
            ),
        )
        before = self._tools.get(part.id, "")
        self._tools[part.id] = state.status
        if state.status in ("pending", "running") and not before:
            self.events.append(
                ev.ToolStarted(
                    turn_id=turn,
                    tool_use_id=part.callID,
                    tool_name=part.tool,
                    at=_seconds(times.start or stamp),
                    source="transcript:tool",
                    **base,
                )
            )
        if part.tool == QUESTION_TOOL and state.status == "running" and before != "running":
            self.events.append(
                tool_wait(
                    turn,
                    part.callID,
                    part.tool,
                    state.input,
                    form=dialog_for,
                    at=_seconds(times.start or stamp),
                    source="transcript:question",
                    **base,
                )
            )
        if state.status not in ("completed", "error"):
            return
        failed = state.status == "error"
        text = (state.error if failed else state.output) or ""
        if failed and (text == REJECTED or text.startswith(DISMISSED)):
            msg.rejected = True
        self._record(
            part.messageID,
            Message(
                id=f"{part.id}:result",
                kind="tool_result",
                role="tool",
                text=text,
                timestamp=_iso(times.end or stamp),
                tool_name=part.tool,
                tool_use_id=part.callID,
                is_error=failed,
                parent_id=turn,
            ),
        )
        if before not in ("completed", "error"):
            self.events.append(
                ev.ToolFinished(
                    turn_id=turn,
                    tool_use_id=part.callID,
                    at=_seconds(times.end or stamp),
                    source=f"transcript:tool.{state.status}",
                    **base,
                )
            )

    # -- records -----------------------------------------------------------------
    def _visibility(self, message_id: str, record: Message) -> Visibility:
        if record.visibility == "hidden":
            return "hidden"
        if message_id in self._removed:
            return "inactive"
        revert = self._revert
        if revert is not None and message_id >= revert.messageID:
            if message_id > revert.messageID or not revert.partID:
                return "inactive"
            if record.id.partition(":")[0] >= revert.partID:
                return "inactive"
        return "visible"

    def _record(self, message_id: str, record: Message) -> None:
        """Add a record, or replace the one with its id (same ``seq``, a new object)."""
        if self.agent_id:
            record.agent_id = self.agent_id
        record.visibility = self._visibility(message_id, record)
        at = self._index.get(record.id)
        if at is None:
            record.seq = len(self.messages) + 1
            self._index[record.id] = len(self.messages)
            self.messages.append(record)
            msg = self._msgs.get(message_id)
            if msg is not None:
                msg.records.append(record.id)
            return
        record.seq = self.messages[at].seq
        if record != self.messages[at]:
            self.messages[at] = record

    def _remove_part(self, part_id: str) -> None:
        """A part deleted on its own: its records are superseded, kept ``inactive``."""
        for record_id in (part_id, f"{part_id}:result"):
            at = self._index.get(record_id)
            if at is None:
                continue
            current = self.messages[at]
            if current.visibility == "visible":
                self.messages[at] = msgspec.structs.replace(current, visibility="inactive")

    def _refresh_visibility(self, message_ids: list[str]) -> None:
        for message_id in message_ids:
            msg = self._msgs.get(message_id)
            for record_id in msg.records if msg is not None else ():
                at = self._index[record_id]
                current = self.messages[at]
                wanted = self._visibility(message_id, current)
                if wanted != current.visibility:
                    self.messages[at] = msgspec.structs.replace(current, visibility=wanted)
