"""Codex rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: research/codex-0.169.0.md §4. Every line is an envelope
``{timestamp, ordinal, type, payload, metadata?}``; the envelope is decoded first with
the payload left raw, then the payload through a small view of its own type that
declares only the fields read here (msgspec skips the rest cheaply). A line that fails
to decode is counted (``corrupt``) and skipped; a record type not known here is counted
(``unknown``); neither is ever fatal. ``RolloutParser.feed_line`` takes one complete
line: a follower (``_jsonl.JsonlFollower``, or ``ZstFollower`` for ``.jsonl.zst``)
hands it what was appended, so a re-read costs what was appended, not the file.

Every event carries the turn id the record itself names (``payload.turn_id``, a
``response_item``'s ``internal_chat_message_metadata_passthrough.turn_id``), so records
Codex appends after a turn's ``turn_aborted``/``task_complete`` (a background command's
late ``item_completed``) stay with that finalized turn and cannot reopen it. The
transcript identity (``epoch``) is the thread id, ``session_meta.payload.id``; a
sub-agent's own file is its own identity, and all its messages carry ``agent_id``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar, cast

import msgspec

from agentspool.adapters import events as ev
from agentspool.adapters._dialogs import question_dialog
from agentspool.adapters._jsonl import JsonlFollower
from agentspool.adapters.seam import Message, PendingDialog, Usage
from agentspool.errors import AgentspoolError

QUESTION_TOOL = "request_user_input"
PRESENTATION = {
    "exec_command": "shell",
    "write_stdin": "shell",
    "shell": "shell",
    "local_shell": "shell",
    "shell_command": "shell",
    "apply_patch": "edit",
    "view_image": "read",
    "web_search": "web",
    "request_user_input": "question",
    "update_plan": "plan",
    "spawn_agent": "agent",
    "wait_agent": "agent",
    "send_input": "agent",
    "close_agent": "agent",
    "resume_agent": "agent",
    "get_goal": "todo",
    "create_goal": "todo",
    "update_goal": "todo",
}
# Records Codex writes for its own bookkeeping; known, never conversation.
BOOKKEEPING = frozenset({"turn_context", "world_state"})
EVENT_BOOKKEEPING = frozenset({"thread_settings_applied", "token_count", "item_started"})
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "reasoning_text", "summary_text"})


def presentation(name: str, namespace: str = "") -> str:
    if namespace.startswith("mcp") or name.startswith("mcp__"):
        return "mcp"
    return PRESENTATION.get(name, "other")


# -- views: only the fields read here ------------------------------------------------


class _Envelope(msgspec.Struct):
    timestamp: str = ""
    ordinal: int = -1
    type: str = ""
    payload: msgspec.Raw = msgspec.Raw(b"{}")
    """Raw here; the lines ``_typed_decoders`` decode carry the typed view instead."""
    metadata: msgspec.Raw = msgspec.Raw()


class _ItemMetadata(msgspec.Struct):
    compaction_output: bool = False


class _SessionMeta(msgspec.Struct):
    id: str = ""
    session_id: str = ""
    parent_thread_id: str | None = None
    source: Any = None
    thread_source: str | None = None
    agent_nickname: str | None = None


class _Part(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _Passthrough(msgspec.Struct):
    turn_id: str = ""
    content_item_kinds: list[str] = []


class _ResponseItem(msgspec.Struct):
    type: str = ""
    id: str | None = None
    role: str = ""
    content: list[_Part] | str | None = None
    name: str = ""
    namespace: str | None = None
    arguments: str | None = None
    input: str | None = None
    call_id: str = ""
    output: Any = None
    summary: list[_Part] | None = None
    internal_chat_message_metadata_passthrough: _Passthrough | None = None


class _Agent(msgspec.Struct):
    thread_id: str = ""
    agent_nickname: str | None = None


class _Item(msgspec.Struct):
    type: str = ""
    id: str = ""
    tool: str = ""
    receiver_thread_ids: list[str] = []
    receiver_agents: list[_Agent] = []
    prompt: str | None = None


class _TurnError(msgspec.Struct):
    message: str = ""


class _EventMsg(msgspec.Struct):
    type: str = ""
    turn_id: str = ""
    reason: str = ""
    error: _TurnError | None = None
    item: msgspec.Raw = msgspec.Raw()


class _TokenUsage(msgspec.Struct):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0


class _UsageRecord(msgspec.Struct):
    turn_id: str = ""
    response_id: str = ""
    usage: _TokenUsage | None = None


class _Compacted(msgspec.Struct):
    message: str | None = None


class _Answer(msgspec.Struct):
    question: str = ""
    answer: Any = None


class _Retained(msgspec.Struct):
    type: str = ""
    turn_id: str = ""
    call_id: str = ""
    questions: list[_Answer] = []


_envelope = msgspec.json.Decoder(_Envelope).decode

# Codex writes `{"timestamp":…,"ordinal":…,"type":"<type>","payload":{"type":"<kind>"…`:
# records that carry nothing read here (per-turn settings snapshots, running token
# counts, items that repeat response_items) are recognised from those first bytes and
# skipped without decoding — they are most of a rollout's bytes after the first turn.
_TYPE_KEY = b'"type":"'
_SKIP_TYPES = frozenset({b"turn_context", b"world_state"})
_SKIP_EVENTS = frozenset(
    t.encode() for t in ("thread_settings_applied", "token_count", "item_started")
)


_SKIP = b"\0skip"


def _record_kind(raw: bytes) -> bytes:
    """The record's type from its first bytes; ``_SKIP`` for records read for nothing,
    ``b""`` when the type is not where Codex writes it (then the line is decoded whole)."""
    start = raw.find(_TYPE_KEY, 0, 96)
    if start < 0:
        return b""
    start += len(_TYPE_KEY)
    end = raw.find(b'"', start, start + 40)
    kind = raw[start:end]
    if kind in _SKIP_TYPES:
        return _SKIP
    if kind != b"event_msg":
        return kind
    start = raw.find(_TYPE_KEY, end, end + 24)
    if start < 0:
        return kind
    start += len(_TYPE_KEY)
    event = raw[start : raw.find(b'"', start, start + 40)]
    if event in _SKIP_EVENTS:
        return _SKIP
    # item_completed matters only for the sub-agent link (CollabAgentToolCall).
    if event == b"item_completed" and b'"CollabAgentToolCall"' not in raw[:600]:
        return _SKIP
    return kind


_meta = msgspec.json.Decoder(_SessionMeta).decode
_item_metadata = msgspec.json.Decoder(_ItemMetadata).decode
_response_item = msgspec.json.Decoder(_ResponseItem).decode
_event_msg = msgspec.json.Decoder(_EventMsg).decode
_item = msgspec.json.Decoder(_Item).decode
_usage_record = msgspec.json.Decoder(_UsageRecord).decode
_compacted = msgspec.json.Decoder(_Compacted).decode
_retained = msgspec.json.Decoder(_Retained).decode


def _typed_decoders() -> dict[bytes, Callable[[bytes], _Envelope]]:
    """One-pass decoders of a whole line whose payload view is known from its type."""
    decoders: dict[bytes, Callable[[bytes], _Envelope]] = {}
    for kind, view in (
        ("session_meta", _SessionMeta),
        ("response_item", _ResponseItem),
        ("event_msg", _EventMsg),
        ("token_usage_record", _UsageRecord),
        ("compacted", _Compacted),
        ("retained_context", _Retained),
    ):
        envelope = msgspec.defstruct(
            f"_{kind}_line",
            [
                ("timestamp", str, ""),
                ("ordinal", int, -1),
                ("type", str, ""),
                ("payload", view, msgspec.field(default_factory=view)),
                ("metadata", msgspec.Raw, msgspec.Raw()),
            ],
        )
        # Same fields as _Envelope, with the payload typed: handlers read either alike.
        decoders[kind.encode()] = cast(
            "Callable[[bytes], _Envelope]", msgspec.json.Decoder(envelope).decode
        )
    return decoders


_LINE_DECODERS = _typed_decoders()


def _payload(line: _Envelope, decode: Callable[[bytes], Any]) -> Any:
    payload = line.payload
    return decode(payload) if isinstance(payload, msgspec.Raw) else payload


_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)


def seconds(stamp: str) -> float:
    if not stamp:
        return 0.0
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _text(content: list[_Part] | str | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if p.text and p.type in _TEXT_PARTS)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            str(p.get("text", "")) for p in output if isinstance(p, dict) and p.get("text")
        )
    if isinstance(output, dict):
        return str(output.get("content", "") or output.get("text", ""))
    return "" if output is None else str(output)


def arguments_of(raw: str | None) -> dict[str, Any]:
    """A call's JSON ``arguments`` string as a dict; anything else kept under ``input``."""
    if not raw:
        return {}
    try:
        value = msgspec.json.decode(raw)
    except _DECODE_ERRORS:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def dialog_for(tool_use_id: str, arguments: dict[str, Any]) -> PendingDialog:
    """``request_user_input``'s ``questions[{id, header, question, options[{label,
    description}]}]`` as the dialog the operator sees."""
    return question_dialog(tool_use_id, arguments.get("questions"))


class RolloutParser:
    """Parse state for one rollout file (one thread); ``feed_line`` lines in file order."""

    def __init__(self, fallback_thread_id: str = "") -> None:
        self.messages: list[Message] = []
        self.events: list[ev.Event] = []
        self.usage = Usage()
        self.thread_id = fallback_thread_id
        self.parent_thread_id = ""
        self.agent_id = ""
        """The thread id when this rollout is a sub-agent's, else ``""``."""
        self.nickname = ""
        self.corrupt = 0
        self.unknown = 0
        self.turn = ""
        """The latest turn ``task_started`` opened (records naming no turn bind to it)."""
        self.open_calls: dict[str, tuple[str, dict[str, Any], str]] = {}
        """call_id → (name, arguments, turn_id) of calls with no output yet."""
        self.subagents: dict[str, str] = {}
        """Sub-agent thread id → the ``spawn_agent`` call that started it (parent side)."""
        self._names: dict[str, str] = {}
        self._usage_seen: set[str] = set()
        self._unpriced: list[Message] = []
        """Model output since the last usage record: the response that record prices."""
        self._lines = 0
        self._meta_seen = False

    # -- dispatch ------------------------------------------------------------------
    def feed_line(self, raw: bytes) -> None:
        if raw[:1] != b"{" and not raw.strip():
            return
        self._lines += 1
        kind = _record_kind(raw)
        if kind is _SKIP:
            return
        try:
            decode = _LINE_DECODERS.get(kind) if kind else None
            line = decode(raw) if decode is not None else _envelope(raw)
            handler = self._HANDLERS.get(line.type)
            if handler is None:
                self.unknown += 1
                return
            handler(self, line)
        except _DECODE_ERRORS:
            self.corrupt += 1

    def _base(self, line: _Envelope, source: str) -> dict[str, Any]:
        return {
            "at": seconds(line.timestamp),
            "source": f"transcript:{source}",
            "epoch": self.thread_id,
        }

    def _add(self, line: _Envelope, **fields: Any) -> Message:
        fields.setdefault("timestamp", line.timestamp)
        if self.agent_id:
            fields.setdefault("agent_id", self.agent_id)
        message = Message(seq=len(self.messages) + 1, **fields)
        self.messages.append(message)
        if message.role == "assistant":
            self._unpriced.append(message)
        return message

    def _fallback_id(self, line: _Envelope) -> str:
        return f"o{line.ordinal}" if line.ordinal >= 0 else f"line{self._lines}"

    # -- record types --------------------------------------------------------------
    def _session_meta(self, line: _Envelope) -> None:
        meta = _payload(line, _meta)
        if self._meta_seen:
            return  # a later session_meta (resume, fork) does not change the identity
        self._meta_seen = True
        self.thread_id = meta.id or self.thread_id
        self.parent_thread_id = meta.parent_thread_id or ""
        subagent = isinstance(meta.source, dict) and "subagent" in meta.source
        if subagent or meta.thread_source == "subagent" or self.parent_thread_id:
            self.agent_id = self.thread_id
            self.nickname = meta.agent_nickname or ""
        self.events.append(
            ev.SessionStarted(
                how="subagent" if self.agent_id else "transcript",
                **self._base(line, "session_meta"),
            )
        )

    def _bookkeeping(self, line: _Envelope) -> None:
        return

    def _response_item(self, line: _Envelope) -> None:
        item = _payload(line, _response_item)
        passthrough = item.internal_chat_message_metadata_passthrough
        turn = (passthrough.turn_id if passthrough else "") or self.turn
        kind = item.type
        if kind == "message":
            self._message(line, item, passthrough)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(line, item, turn)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(line, item, turn)
        elif kind == "reasoning":
            text = _text(item.summary) or _text(item.content)
            self._add(
                line,
                id=item.id or self._fallback_id(line),
                kind="thinking",
                role="assistant",
                text=text,
            )
        else:
            self.unknown += 1

    def _message(
        self, line: _Envelope, item: _ResponseItem, passthrough: _Passthrough | None
    ) -> None:
        text = _text(item.content)
        mid = item.id or self._fallback_id(line)
        kinds = passthrough.content_item_kinds if passthrough else []
        stripped = text.lstrip()
        if item.role == "user":
            if "generic.turn_aborted" in kinds or stripped.startswith("<turn_aborted>"):
                self._add(line, id=mid, kind="interrupt", role="user", text=text, is_meta=True)
            elif "multi_agent.subagent_notification" in kinds or stripped.startswith(
                "<subagent_notification>"
            ):
                self._add(line, id=mid, kind="subagent", role="user", text=text, is_meta=True)
            elif "user.text" in kinds or (not kinds and not stripped.startswith("<")):
                self._add(line, id=mid, kind="text", role="user", text=text)
            else:
                # Context Codex injects for the model (environment, instructions).
                self._add(
                    line,
                    id=mid,
                    kind="text",
                    role="user",
                    text=text,
                    visibility="hidden",
                    is_meta=True,
                )
        elif item.role == "assistant":
            compaction = False
            if line.metadata:
                compaction = _item_metadata(line.metadata).compaction_output
            if compaction:
                # The summary the model wrote; the ``compacted`` record that follows
                # carries it to the reader as the summary message.
                self._add(
                    line,
                    id=mid,
                    kind="summary",
                    role="assistant",
                    text=text,
                    visibility="hidden",
                    is_meta=True,
                )
            else:
                self._add(line, id=mid, kind="text", role="assistant", text=text)
        else:  # developer / system instructions
            self._add(
                line,
                id=mid,
                kind="text",
                role="system",
                text=text,
                visibility="hidden",
                is_meta=True,
            )

    def _call(self, line: _Envelope, item: _ResponseItem, turn: str) -> None:
        name = item.name or item.type
        call_id = item.call_id or item.id or self._fallback_id(line)
        arguments = arguments_of(item.arguments if item.arguments is not None else item.input)
        self.open_calls[call_id] = (name, arguments, turn)
        self._names[call_id] = name
        self._add(
            line,
            id=item.id or f"call:{call_id}",
            kind="tool_call",
            role="assistant",
            tool_name=name,
            tool_use_id=call_id,
            tool_input=arguments,
            presentation=presentation(name, item.namespace or ""),
        )
        base = self._base(line, item.type)
        self.events.append(
            ev.ToolStarted(turn_id=turn, tool_use_id=call_id, tool_name=name, **base)
        )
        if name == QUESTION_TOOL:
            # The call's execution *is* the question form: while it has no output the
            # form is on screen (research §3c). Refused at once in Default mode, where
            # its output follows within milliseconds and resolves it.
            self.events.append(
                ev.InputRequested(
                    turn_id=turn,
                    kind="question",
                    tool_use_id=call_id,
                    tool_name=name,
                    tool_input=arguments,
                    dialog=dialog_for(call_id, arguments),
                    **base,
                )
            )

    def _output(self, line: _Envelope, item: _ResponseItem, turn: str) -> None:
        call_id = item.call_id
        opened = self.open_calls.pop(call_id, None)
        if opened is not None:
            turn = opened[2] or turn
        self._add(
            line,
            id=item.id or f"output:{call_id}",
            kind="tool_result",
            role="tool",
            text=_output_text(item.output),
            tool_name=self._names.get(call_id, ""),
            tool_use_id=call_id,
        )
        self.events.append(
            ev.ToolFinished(turn_id=turn, tool_use_id=call_id, **self._base(line, item.type))
        )

    def _event_msg(self, line: _Envelope) -> None:
        msg = _payload(line, _event_msg)
        kind = msg.type
        if kind == "task_started":
            if msg.turn_id:
                self.turn = msg.turn_id
                self.events.append(
                    ev.TurnStarted(turn_id=msg.turn_id, **self._base(line, "task_started"))
                )
        elif kind == "task_complete":
            turn = msg.turn_id or self.turn
            if msg.error is not None:
                self._add(
                    line,
                    id=f"error:{turn}",
                    kind="error",
                    role="system",
                    text=msg.error.message,
                    is_error=True,
                )
            self.events.append(
                ev.TurnStopped(
                    turn_id=turn,
                    outcome="failed" if msg.error is not None else "completed",
                    **self._base(line, "task_complete" + ("(error)" if msg.error else "")),
                )
            )
        elif kind == "turn_aborted":
            self.events.append(
                ev.TurnStopped(
                    turn_id=msg.turn_id or self.turn,
                    outcome="interrupted",
                    **self._base(
                        line, f"turn_aborted({msg.reason})" if msg.reason else "turn_aborted"
                    ),
                )
            )
        elif kind == "item_completed":
            if msg.item:
                self._item_completed(line, _item(msg.item))
        elif kind not in EVENT_BOOKKEEPING:
            self.unknown += 1

    def _item_completed(self, line: _Envelope, item: _Item) -> None:
        # Items duplicate the response_items (messages, command output); only the
        # sub-agent link is new here.
        if item.type != "CollabAgentToolCall" or item.tool != "spawn_agent":
            return
        nicknames = {a.thread_id: a.agent_nickname or "" for a in item.receiver_agents}
        for child in item.receiver_thread_ids:
            if child in self.subagents:
                continue
            self.subagents[child] = item.id
            nickname = nicknames.get(child, "")
            self._add(
                line,
                id=f"subagent:{child}",
                kind="subagent",
                role="system",
                text=item.prompt or nickname,
                tool_name="spawn_agent",
                tool_use_id=item.id,
                parent_id=item.id,
                agent_id=child,
                presentation="agent",
            )

    def _token_usage(self, line: _Envelope) -> None:
        record = _payload(line, _usage_record)
        if record.usage is None:
            return
        key = record.response_id or self._fallback_id(line)
        if key in self._usage_seen:
            return
        self._usage_seen.add(key)
        u = record.usage
        # Codex's input_tokens already includes the cached part (the API's
        # input_tokens, with input_tokens_details.cached_tokens beside it): nothing
        # to fold, the cached count is recorded as the part of it that hit the cache.
        usage = Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cached_input_tokens=u.cached_input_tokens,
            reasoning_tokens=u.reasoning_output_tokens,
        )
        self.usage.add(usage)
        # The usage record follows its response's items, so it is attached to the first
        # of them once it arrives (a re-read shows it; seq and ids never move). A
        # response that left no item keeps its usage in Chat.usage only.
        priced = self._unpriced[0] if self._unpriced else None
        if priced is not None and priced.usage is None:
            priced.usage = Usage(**msgspec.structs.asdict(usage))
            priced.message_id = key
        self._unpriced.clear()

    def _compacted(self, line: _Envelope) -> None:
        record = _payload(line, _compacted)
        self._add(
            line,
            id=f"compacted:{self._fallback_id(line)}",
            kind="summary",
            role="system",
            text=record.message or "",
        )

    def _retained(self, line: _Envelope) -> None:
        record = _payload(line, _retained)
        if record.type != "verified_answer":
            return
        lines = []
        for qa in record.questions:
            answer = qa.answer
            if isinstance(answer, list):
                answer = ", ".join(str(a) for a in answer)
            lines.append(f"{qa.question.splitlines()[0] if qa.question else ''}: {answer}")
        self._add(
            line,
            id=f"answer:{record.call_id}",
            kind="text",
            role="user",
            text="\n".join(lines),
            tool_name=QUESTION_TOOL,
            tool_use_id=record.call_id,
            presentation="question",
        )

    _HANDLERS: ClassVar[dict[str, Callable[[RolloutParser, _Envelope], None]]] = {
        "session_meta": _session_meta,
        "turn_context": _bookkeeping,
        "world_state": _bookkeeping,
        "response_item": _response_item,
        "event_msg": _event_msg,
        "token_usage_record": _token_usage,
        "compacted": _compacted,
        "retained_context": _retained,
    }


def thread_id_from_path(path: str) -> str:
    """``rollout-YYYY-MM-DDTHH-MM-SS-<thread id>.jsonl[.zst]`` → the thread id."""
    name = os.path.basename(path)
    for suffix in (".zst", ".jsonl"):
        name = name.removesuffix(suffix)
    parts = name.split("-")
    return "-".join(parts[-5:]) if len(parts) >= 11 else ""


class CompressedRolloutError(AgentspoolError, RuntimeError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: reading a compressed rollout needs the optional "
            "'zstandard' package (pip install 'agentspool[zstd]')"
        )
        self.path = path


class ZstFollower(JsonlFollower):
    """A ``.jsonl.zst`` rollout (a finished, archived file): there is no byte offset into
    a compressed stream, so a changed file is read anew."""

    CHUNK = 1 << 20
    _stamp: tuple[int, int, int] | None = None

    def read(self) -> None:
        try:
            import zstandard
        except ImportError:
            raise CompressedRolloutError(self.path) from None
        with self._open() as fh:
            st = os.fstat(fh.fileno())
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            if stamp == self._stamp:
                return
            self._stamp = stamp
            self._reset()
            pending = b""
            try:
                with zstandard.ZstdDecompressor().stream_reader(fh) as reader:
                    while True:
                        chunk = reader.read(self.CHUNK)
                        if not chunk:
                            break
                        lines = (pending + chunk).split(b"\n")
                        pending = lines.pop()
                        for raw in lines:
                            self.on_line(raw)
            except zstandard.ZstdError:
                pass  # a truncated or damaged frame: what decoded so far stands
            if pending:
                self.on_line(pending)
