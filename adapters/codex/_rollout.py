"""Codex rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: docs/providers/codex.md §6. Every line is an envelope
``{timestamp, ordinal, type, payload, metadata?}``, decoded in one pass as the tagged
union of one view per record type: each declares only the payload fields read here
(msgspec skips the rest cheaply), so bookkeeping records cost a skip. A line that fails
to decode is counted (``corrupt``) and skipped; a record type not known here is counted
(``unknown``); neither is ever fatal. Both, and fields not known on the first record of
each shape, are schema drift (``drift``, ADR 0014). ``RolloutParser.feed`` takes a block of complete
lines and decodes it in one call (``feed_line`` takes one line); a follower
(``_jsonl.JsonlFollower``, or ``ZstFollower`` for ``.jsonl.zst``) hands it what was
appended, so a re-read costs what was appended, not the file.

Every event carries the turn id the record itself names (``payload.turn_id``, a
``response_item``'s ``internal_chat_message_metadata_passthrough.turn_id``), so records
Codex appends after a turn's ``turn_aborted``/``task_complete`` (a background command's
late ``item_completed``) stay with that finalized turn and cannot reopen it. The
transcript identity (``epoch``) is the thread id, ``session_meta.payload.id``; a
sub-agent's own file is its own identity, and all its messages carry ``agent_id``.

Older releases (0.34 to 0.146) write the same envelope with other records beside the
response items (docs/providers/codex.md §10): their UI events repeat the prompt, the
answer and the reasoning (the first of the two copies is the record, the second its
echo); their usage is ``event_msg/token_count`` (the running total and the last
response's); they mark no turn's start or end, so a prompt opens a turn and the next
prompt closes it. A line with no ``type`` is the pre-envelope format's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Union

import msgspec

from agentspool.adapters.codex._schema import IGNORED, ROLLOUT_FIELDS
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import DriftCounter, object_keys
from agentspool.adapters.common.jsonl import JsonlFollower, OnLines, split_lines
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, PendingDialog, TranscriptFacts, Usage
from agentspool.spool.errors import CompressedRolloutError

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
    "tool_search": "search",
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
# Events known and not read (the reasons: ``_schema.IGNORED``).
EVENT_BOOKKEEPING = frozenset(
    shape.removeprefix("event_msg:") for shape in IGNORED if shape.startswith("event_msg:")
)
ITEMS_IGNORED = frozenset(
    shape.removeprefix("response_item:") for shape in IGNORED if shape.startswith("response_item:")
)
# Context Codex injects as a user message before the prompt (docs/providers/codex.md §10):
# hidden, and never a session's title. 0.169 marks it (``content_item_kinds``); before,
# only its opening says so: a tag (``<environment_context>``, ``<user_instructions>``)
# or the AGENTS.md heading (0.57+).
INJECTED_HEADINGS = ("<", "# AGENTS.md instructions for ")
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "reasoning_text", "summary_text"})


def presentation(name: str, namespace: str = "") -> str:
    if namespace.startswith("mcp") or name.startswith("mcp__"):
        return "mcp"
    return PRESENTATION.get(name, "other")


# -- views: only the fields read here ------------------------------------------------


class _ItemMetadata(msgspec.Struct, gc=False):
    compaction_output: bool = False


class _SessionMeta(msgspec.Struct, gc=False):
    id: str = ""
    cwd: str = ""
    session_id: str = ""
    parent_thread_id: str | None = None
    forked_from_id: str | None = None
    source: Any = None
    thread_source: str | None = None
    agent_nickname: str | None = None
    cli_version: str = ""


class _Part(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None


class _Passthrough(msgspec.Struct, gc=False):
    turn_id: str = ""
    content_item_kinds: list[str] = []


class _ResponseItem(msgspec.Struct, gc=False):
    type: str = ""
    id: str | None = None
    role: str = ""
    content: list[_Part] | str | None = None
    name: str = ""
    namespace: str | None = None
    arguments: Any = None
    """A JSON string as Codex writes it; an object where other writers put one."""
    input: Any = None
    call_id: str = ""
    output: Any = None
    summary: list[_Part] | str | None = None
    """``summary_text`` parts of a reasoning item (a caption string in a peer's call)."""
    internal_chat_message_metadata_passthrough: _Passthrough | None = None


class _RichItem(msgspec.Struct, gc=False):
    """The fields of the rare item kinds, read from the line again when one is met: every
    field a view declares costs each item's undeclared keys a look (benchmarks/read.py)."""

    action: Any = None
    """A ``web_search_call``'s ``{type, query, queries, url, pattern}``."""
    function_call: Any = None
    """A peer's chat-completions call on an assistant message."""
    function: Any = None
    result: Any = None
    tools: Any = None
    revised_prompt: str | None = None
    recipient: str | None = None


class _RichItemLine(msgspec.Struct, gc=False):
    payload: _RichItem = msgspec.field(default_factory=_RichItem)


class _Agent(msgspec.Struct, gc=False):
    thread_id: str = ""
    agent_nickname: str | None = None


class _Item(msgspec.Struct, gc=False):
    """An ``item_completed`` item, any type. Only a ``spawn_agent`` call is read, so the
    other fields are untyped here: another item type's ``tool`` or ``prompt`` of any
    shape must not make its line unreadable. ``_SpawnAgent`` checks the one read."""

    type: Any = ""
    id: Any = ""
    tool: Any = ""
    receiver_thread_ids: Any = ()
    receiver_agents: Any = ()
    prompt: Any = None


class _SpawnAgent(msgspec.Struct, gc=False):
    id: str = ""
    receiver_thread_ids: list[str] = []
    receiver_agents: list[_Agent] = []
    prompt: str | None = None


class _TokenUsage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0


class _TokenInfo(msgspec.Struct, gc=False):
    """``token_count.info``: the thread's running total and the last response's usage
    (either may be missing in older releases and other writers), the model (0.14x)."""

    total_token_usage: _TokenUsage | None = None
    last_token_usage: _TokenUsage | None = None
    model: str | None = None


class _EventMsg(msgspec.Struct, gc=False):
    type: str = ""
    turn_id: str = ""
    reason: str = ""
    error: Any = None
    """``{message, codex_error_info}`` (task_complete); ``{kind, message}`` (error)."""
    item: _Item | None = None
    message: Any = None
    """The text of user_message and agent_message (and of error in 0.169's shape)."""
    text: Any = None
    """The text of agent_reasoning, agent_reasoning_raw_content."""
    info: _TokenInfo | None = None


class _RichEvent(msgspec.Struct, gc=False):
    """The fields of the rare event kinds, read from the line again (see ``_RichItem``)."""

    call_id: str = ""
    name: str = ""
    input: Any = None
    new_thread_id: str | None = None
    new_agent_nickname: str | None = None
    prompt: str | None = None
    review_output: Any = None


class _RichEventLine(msgspec.Struct, gc=False):
    payload: _RichEvent = msgspec.field(default_factory=_RichEvent)


class _UsageRecord(msgspec.Struct, gc=False):
    turn_id: str = ""
    response_id: str = ""
    usage: _TokenUsage | None = None


class _Compacted(msgspec.Struct, gc=False):
    message: str | None = None


class _Answer(msgspec.Struct, gc=False):
    question: str = ""
    answer: Any = None


class _Retained(msgspec.Struct, gc=False):
    type: str = ""
    turn_id: str = ""
    call_id: str = ""
    questions: list[_Answer] = []


class _Line(msgspec.Struct, tag_field="type", gc=False):
    """A rollout line ``{timestamp, ordinal, type, payload}``: one subclass per
    record type, tagged by ``type``, so one decode reads a line with its payload's view
    (msgspec skips what a view does not declare, cheaply)."""

    timestamp: str = ""
    ordinal: int = -1


class _SessionMetaLine(_Line, tag="session_meta"):
    payload: _SessionMeta = msgspec.field(default_factory=_SessionMeta)


class _ResponseItemLine(_Line, tag="response_item"):
    payload: _ResponseItem = msgspec.field(default_factory=_ResponseItem)
    metadata: _ItemMetadata | None = None


class _EventLine(_Line, tag="event_msg"):
    payload: _EventMsg = msgspec.field(default_factory=_EventMsg)


class _UsageLine(_Line, tag="token_usage_record"):
    payload: _UsageRecord = msgspec.field(default_factory=_UsageRecord)


class _CompactedLine(_Line, tag="compacted"):
    payload: _Compacted = msgspec.field(default_factory=_Compacted)


class _RetainedLine(_Line, tag="retained_context"):
    payload: _Retained = msgspec.field(default_factory=_Retained)


class _TurnContext(msgspec.Struct, gc=False):
    model: str = ""


class _TurnContextLine(msgspec.Struct, tag_field="type", tag="turn_context"):
    """The per-turn settings snapshot: only the model is read (it prices the turn's
    usage)."""

    payload: _TurnContext = msgspec.field(default_factory=_TurnContext)


class _WorldStateLine(msgspec.Struct, tag_field="type", tag="world_state"):
    """Bookkeeping, nothing read."""


class _AgentMetadataLine(
    msgspec.Struct, tag_field="type", tag="inter_agent_communication_metadata"
):
    """Bookkeeping (0.146), nothing read."""


class _AnyLine(msgspec.Struct, gc=False):
    """Second look at a line the typed decode refused: an unknown type, or a bad one."""

    type: str = ""
    payload: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    """Empty (``not payload``) when the line has none."""


class _LegacyLine(msgspec.Struct, gc=False):
    """A line of the pre-envelope format (no ``type``): the session header first (the
    thread's ``id``, its ``timestamp``), then ``record_type`` state snapshots. A bare
    response item (``type`` its own kind, no ``payload``) is read as one."""

    id: Any = ""
    timestamp: Any = ""
    record_type: Any = None


_LINE_TYPES = (
    _SessionMetaLine,
    _ResponseItemLine,
    _EventLine,
    _UsageLine,
    _CompactedLine,
    _RetainedLine,
    _TurnContextLine,
    _WorldStateLine,
    _AgentMetadataLine,
)
_line_decoder = msgspec.json.Decoder(Union[_LINE_TYPES])  # noqa: UP007
_decode_line = _line_decoder.decode
_decode_lines = _line_decoder.decode_lines
_decode_any_line = msgspec.json.Decoder(_AnyLine).decode
_decode_legacy_line = msgspec.json.Decoder(_LegacyLine).decode
_decode_bare_item = msgspec.json.Decoder(_ResponseItem).decode
_decode_rich_item = msgspec.json.Decoder(_RichItemLine).decode
_decode_rich_bare_item = msgspec.json.Decoder(_RichItem).decode
_decode_rich_event = msgspec.json.Decoder(_RichEventLine).decode
KNOWN_TYPES = frozenset(cls.__struct_config__.tag for cls in _LINE_TYPES)

_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_BARE_ITEMS = frozenset({"message", "reasoning", "web_search_call", *_CALLS, *_OUTPUTS})
"""Response item kinds: a line with one of them as its ``type`` and no ``payload`` is a
bare item of the pre-envelope format."""
_COPIES_KEPT = 64
"""Texts remembered per channel for their echo (an echo follows within the turn)."""


def _injected(text: str) -> bool:
    return text.startswith(INJECTED_HEADINGS)


def _parts(content: list[_Part] | str | None) -> list[str]:
    if isinstance(content, list):
        return [p.text for p in content if p.text and p.type in _TEXT_PARTS]
    return []


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _thread_spawn(source: Any) -> dict[str, Any]:
    """``source.subagent.thread_spawn`` of a sub-agent's session_meta (0.200)."""
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return spawn if isinstance(spawn, dict) else {}


def _tool_names(tools: Any) -> str:
    """What a ``tool_search_output`` found: the tools' names (groups' members too)."""
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict):
            if tool.get("name"):
                names.append(str(tool["name"]))
            names += [
                str(t["name"])
                for t in tool.get("tools") or ()
                if isinstance(t, dict) and t.get("name")
            ]
    return "\n".join(names)


def _error_text(error: Any) -> str | None:
    """An error object's message (``{message, …}``), ``None`` for no error."""
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or "")
    return str(error)


def _usage_of(u: _TokenUsage) -> Usage:
    return Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cached_input_tokens=u.cached_input_tokens,
        reasoning_tokens=u.reasoning_output_tokens,
        cache_write_tokens=u.cache_write_input_tokens,
    )


def _text(content: list[_Part] | str | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if len(content) == 1:  # nearly always
        part = content[0]
        return part.text if part.text and part.type in _TEXT_PARTS else ""
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


def arguments_of(raw: Any) -> dict[str, Any]:
    """A call's JSON ``arguments`` string as a dict (an object as it is); anything else
    kept under ``input``."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    if not isinstance(raw, str):
        return {"input": raw}
    try:
        value = msgspec.json.decode(raw)
    except _DECODE_ERRORS:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def dialog_for(tool_use_id: str, arguments: dict[str, Any]) -> PendingDialog:
    """``request_user_input``'s ``questions[{id, header, question, options[{label,
    description}]}]`` as the dialog the operator sees."""
    return question_dialog(tool_use_id, arguments.get("questions"))


_TYPE_SPELLINGS = (b'"type":"%s"', b'"type": "%s"')


def _shape_and_members(raw: bytes | memoryview) -> tuple[str, list[str]] | None:
    """A line's shape (``type``, or ``type:<payload type>`` where payloads have kinds)
    and its members: envelope keys, ``payload.<key>`` for the payload's."""
    envelope = object_keys(raw)
    if envelope is None or "type" not in envelope:
        return None
    try:
        kind = msgspec.json.decode(envelope["type"], type=str)
    except _DECODE_ERRORS:
        return None
    names = list(envelope)
    payload = object_keys(envelope["payload"]) if "payload" in envelope else None
    if payload is not None:
        names += [f"payload.{key}" for key in payload]
        if kind in _KINDED and "type" in payload:
            try:
                kind += ":" + msgspec.json.decode(payload["type"], type=str)
            except _DECODE_ERRORS:
                return None
    return kind, names


_KINDED = frozenset({"response_item", "event_msg", "retained_context"})


class RolloutParser:
    """Parse state for one rollout file (one thread): ``feed`` blocks, or ``feed_line``
    single lines, in file order.

    A bulk read builds every message and event of a long history, so the handlers
    construct them directly (no keyword dicts passed through helpers): per record Python
    is most of a cold read's cost (benchmarks/read.py)."""

    def __init__(self, fallback_thread_id: str = "") -> None:
        self.messages: list[Message] = []
        self._base = 0
        """Records handed out and let go before ``messages`` (``take``): the next
        record's ``seq`` is ``_base + len(messages) + 1``."""
        self._changed: dict[int, Message] = {}
        """Records let go before that a later usage record priced: seq → the new copy."""
        self.events: list[ev.Event] = []
        self.usage = Usage()
        self.model = ""
        """The model the latest ``turn_context`` names: the one its usage is priced at."""
        self.thread_id = fallback_thread_id
        """The thread id: ``session_meta.id`` where that is one (a UUID, as Codex makes
        them), else the one the file's name carries (``fallback_thread_id``)."""
        self.parent_thread_id = ""
        self.forked_from = ""
        """The thread whose history this rollout copies: a fork's
        ``session_meta.forked_from_id``, or the thread a later ``session_meta`` names (a
        resumed thread's new file), else ``""``."""
        self.agent_id = ""
        """The thread id when this rollout is a sub-agent's, else ``""``."""
        self.nickname = ""
        self.corrupt = 0
        self.unknown = 0
        self.drift = DriftCounter(ROLLOUT_FIELDS)
        self.cli_version = ""
        """``session_meta.cli_version``: the latest one (a resumed thread may be a newer
        CLI's)."""
        self.cwd = ""
        """The thread's working directory, as its first ``session_meta`` names it."""
        self._unchecked: list[str] = []
        """Shapes whose first record was met in the block being read: checked after it."""
        self.turn = ""
        """The latest turn ``task_started`` (or a prompt, below) opened (records naming no
        turn bind to it)."""
        self._turn_open = False
        self._prompted = False
        """The open turn is one a prompt opened: the rollout marks no turn (before 0.1xx),
        so the next prompt closes it."""
        self.open_calls: dict[str, tuple[str, dict[str, Any], str]] = {}
        """call_id → (name, arguments, turn_id) of calls with no output yet."""
        self.subagents: dict[str, str] = {}
        """Sub-agent thread id → the ``spawn_agent`` call that started it (parent side)."""
        self._names: dict[str, str] = {}
        self._usage_seen: set[str] = set()
        self._unpriced: list[Message] = []
        """Model output since the last usage record: the response that record prices."""
        self._total: tuple[int, int, int, int] | None = None
        """The running total of the latest ``token_count`` (input, cached, output,
        reasoning)."""
        self._recorded = False
        """A ``token_usage_record`` came since the latest ``token_count``: the next one
        repeats it."""
        self._copies: dict[str, list[str]] = {}
        """Role → texts recorded from UI events whose response item may follow (that item
        is their echo, not a record)."""
        self._block: memoryview | None = None
        self._decoded: list[Any] = []
        self._lines: list[bytes] | None = None
        """The block's lines, split once a rare record asks for its own (``_raw``)."""
        self._bare = False
        self._recent: dict[str, str] = {}
        """Role → the text of the latest record from a response item, which its UI event
        may repeat next."""
        self._meta_seen = False
        self._items_checked: set[str] = set()
        self._events_checked: set[str] = set()

    # -- dispatch ------------------------------------------------------------------
    def feed(self, block: memoryview) -> None:
        """A block of complete lines (what ``JsonlFollower`` hands on), decoded in one
        call. A block holding a line the typed decode refuses (corrupt, torn, a record
        type not known here) is read again line by line, so that line alone is counted
        and skipped."""
        try:
            decoded = _decode_lines(block)
        except _DECODE_ERRORS:
            for raw in split_lines(block):
                self.feed_line(raw)
            return
        handlers = self._HANDLERS
        self._block, self._decoded, self._lines = block, decoded, None
        for line in decoded:
            handlers[type(line)](self, line)
        self._block, self._decoded = None, []
        if self._unchecked:
            self._check_fields(block)

    def feed_line(self, raw: bytes) -> None:
        if raw[:1] != b"{" and not raw.strip():
            return
        try:
            line = _decode_line(raw)
        except msgspec.ValidationError:
            self._untyped(raw)
            return
        except (msgspec.DecodeError, UnicodeDecodeError):
            self.corrupt += 1
            return
        self._decoded, self._lines = [line], [raw]
        self._HANDLERS[type(line)](self, line)
        if self._unchecked:
            self._check_fields(raw)

    def _untyped(self, raw: bytes) -> None:
        """A line the typed decode refused: a record type not known here, a known one
        whose fields do not fit its view, or a line of the pre-envelope format."""
        try:
            head = _decode_any_line(raw)
        except _DECODE_ERRORS:
            self.corrupt += 1  # not even an object
            return
        kind = head.type
        if not kind:
            self._legacy(raw)
        elif not head.payload and kind in _BARE_ITEMS:
            try:
                item = _decode_bare_item(raw)
            except _DECODE_ERRORS:
                self.corrupt += 1
                return
            self._decoded, self._lines, self._bare = [], [raw], True
            self._response_item(_ResponseItemLine(payload=item))
            self._bare = False
        elif kind in KNOWN_TYPES:
            self.corrupt += 1  # a known record whose fields do not fit its view
        else:
            self.unknown += 1
            self.drift.unknown_type(kind)

    def _legacy(self, raw: bytes) -> None:
        """A line with no ``type``: the pre-envelope format's session header (first) or a
        ``record_type`` state snapshot. Any other such object names no record: nothing
        to read (a header is read once; its fields are not checked, the format is
        retired)."""
        try:
            line = _decode_legacy_line(raw)
        except _DECODE_ERRORS:
            self.corrupt += 1
            return
        if line.record_type is not None or self._meta_seen:
            return
        if isinstance(line.id, str) and line.id:
            stamp = line.timestamp if isinstance(line.timestamp, str) else ""
            self._session_meta(_SessionMetaLine(timestamp=stamp, payload=_SessionMeta(id=line.id)))

    # -- drift (ADR 0014) ------------------------------------------------------------
    def _first(self, shape: str) -> None:
        """The first record of a shape known here, met in a decoded block: its fields
        are checked once the block is read (a decoded line keeps no bytes)."""
        if shape in ROLLOUT_FIELDS and shape not in self._unchecked:
            self._unchecked.append(shape)

    def _check_fields(self, block: bytes | memoryview) -> None:
        """Find the line of each unchecked shape in the block and check its fields: the
        shape's name is searched as bytes, so only candidate lines are decoded."""
        data = bytes(block)
        for shape in self._unchecked:
            # A rollout written with a space after each colon (the real-world corpus holds
            # some) is found by the second spelling, not by decoding every line.
            if any(self._check_spelled(data, shape, spelling) for spelling in _TYPE_SPELLINGS):
                continue
            # Not as expected in the bytes (another spelling): the slow way.
            for raw in split_lines(memoryview(data)):
                found = _shape_and_members(raw)
                if found is not None and found[0] == shape:
                    self.drift.check(shape, found[1])
                    break
        self._unchecked.clear()

    def _check_spelled(self, data: bytes, shape: str, spelling: bytes) -> bool:
        """Check the first line of ``shape`` whose type is spelled so; whether found."""
        needle = spelling % shape.rpartition(":")[2].encode()
        at = data.find(needle)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            found = _shape_and_members(data[start:end])
            if found is not None and found[0] == shape:
                self.drift.check(shape, found[1])
                return True
            at = data.find(needle, end)
        return False

    def _append(self, message: Message) -> None:
        message.seq = self._base + len(self.messages) + 1
        if self.agent_id and not message.agent_id:
            message.agent_id = self.agent_id
        self.messages.append(message)
        if message.role == "assistant":
            self._unpriced.append(message)

    def _raw(self, line: _Line) -> bytes:
        """``line``'s bytes: ``feed`` splits its block only when a rare record asks (the
        decoded lines are the block's non-blank lines, in order; an equal line earlier in
        the block has the same bytes' meaning)."""
        if self._lines is None:
            block = self._block if self._block is not None else memoryview(b"")
            self._lines = [raw for raw in split_lines(block) if raw.strip()]
        return self._lines[self._decoded.index(line) if self._decoded else 0]

    def _rich_item(self, line: _Line) -> _RichItem:
        try:
            if self._bare:
                return _decode_rich_bare_item(self._raw(line))
            return _decode_rich_item(self._raw(line)).payload
        except _DECODE_ERRORS:
            return _RichItem()

    def _rich_event(self, line: _Line) -> _RichEvent:
        try:
            return _decode_rich_event(self._raw(line)).payload
        except _DECODE_ERRORS:
            return _RichEvent()

    def _fallback_id(self, line: _Line) -> str:
        """An id for a record that names none: its ordinal, else the seq its message
        gets (both stable however often the file is read)."""
        return (
            f"o{line.ordinal}" if line.ordinal >= 0 else f"seq{self._base + len(self.messages) + 1}"
        )

    # Codex 0.34-0.146 write a prompt, an answer and the reasoning twice: as a response
    # item and as a UI event, in either order. The first is the record; the second, the
    # same text from the other channel, is its echo (nothing is recorded for it).
    def _item_echo(self, role: str, text: str) -> bool:
        """An item's text: the echo of a UI event before it (consumed), or remembered as
        the latest item of the role, whose event may follow."""
        theirs = self._copies.get(role)
        if theirs and text in theirs:
            theirs.remove(text)
            return True
        self._recent[role] = text
        return False

    def _event_echo(self, role: str, text: str) -> bool:
        """A UI event's text: the echo of the latest item of the role (a reasoning event
        repeats one part of its item's summary), or remembered for the item that may
        follow."""
        recent = self._recent.get(role)
        if recent is not None and (text == recent or (role == "thinking" and text in recent)):
            return True
        if text:
            kept = self._copies.setdefault(role, [])
            kept.append(text)
            if len(kept) > _COPIES_KEPT:
                del kept[:-_COPIES_KEPT]
        return False

    # -- turns a prompt opens (releases that mark none) ----------------------------
    def _prompt(self, message: Message) -> None:
        """A prompt the user sent. Within a turn ``task_started`` opened it is that
        turn's; otherwise (no release before 0.1xx writes a turn's start or end) it opens
        a turn of its own, and ends the one the previous prompt opened: Codex takes a
        prompt only once its turn is over."""
        copies, recent = self._copies, self._recent
        if copies:
            copies.pop("assistant", None)
            copies.pop("thinking", None)
        if len(recent) > 1:
            recent.pop("assistant", None)
            recent.pop("thinking", None)
        if self._turn_open and not self._prompted:
            return
        at = epoch_seconds(message.timestamp)
        if self._turn_open:
            self.events.append(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="completed",
                    at=at,
                    source="transcript:next-prompt",
                    epoch=self.thread_id,
                )
            )
        self.turn = f"prompt:{message.id}"
        self._turn_open = self._prompted = True
        self.events.append(
            ev.TurnStarted(
                turn_id=self.turn, at=at, source="transcript:prompt", epoch=self.thread_id
            )
        )

    def _turn_closed(self) -> None:
        self._turn_open = self._prompted = False

    # -- record types --------------------------------------------------------------
    def _session_meta(self, line: _SessionMetaLine) -> None:
        meta = line.payload
        if meta.cli_version:
            self.cli_version = meta.cli_version
        if "session_meta" not in self.drift.checked:
            self._first("session_meta")
        if self._meta_seen:
            # A later session_meta does not change the identity. One naming another
            # thread begins that thread's history, copied: a resumed thread's new file
            # (0.36) or a fork holds its parent's lines under new times.
            if UUID.fullmatch(meta.id) and meta.id != self.thread_id and not self.agent_id:
                self.forked_from = self.forked_from or meta.id
            return
        self._meta_seen = True
        if UUID.fullmatch(meta.id) or not self.thread_id:
            # A header naming no thread id (a made-up name, or none) leaves the file
            # name's: ids like "parent-session" are shared by unrelated files.
            self.thread_id = meta.id or self.thread_id
        self.cwd = meta.cwd
        spawn = _thread_spawn(meta.source)
        self.parent_thread_id = meta.parent_thread_id or spawn.get("parent_thread_id") or ""
        if not isinstance(self.parent_thread_id, str):
            self.parent_thread_id = ""
        subagent = isinstance(meta.source, dict) and "subagent" in meta.source
        if subagent or meta.thread_source == "subagent" or self.parent_thread_id:
            self.agent_id = self.thread_id
            self.nickname = meta.agent_nickname or ""
        elif meta.forked_from_id:
            self.forked_from = meta.forked_from_id
        self.events.append(
            ev.SessionStarted(
                how="subagent" if self.agent_id else "transcript",
                at=epoch_seconds(line.timestamp),
                source="transcript:session_meta",
                epoch=self.thread_id,
            )
        )

    def _turn_context(self, line: _TurnContextLine) -> None:
        if "turn_context" not in self.drift.checked:
            self._first("turn_context")
        if line.payload.model:
            self.model = line.payload.model

    def _world_state(self, line: object) -> None:
        if "world_state" not in self.drift.checked:
            self._first("world_state")

    def _bookkeeping(self, line: object) -> None:
        """A record known and not read (``_schema.IGNORED`` says why)."""

    def _response_item(self, line: _ResponseItemLine) -> None:
        item = line.payload
        kind = item.type
        if not kind and item.role:
            kind = "message"  # a Responses API input message may leave out its type
        if kind not in self._items_checked:
            self._items_checked.add(kind)
            self._first("response_item:" + kind)
        if kind == "message":
            self._message(line, item)
            return
        if kind == "reasoning":
            self._reasoning(line, item)
            return
        passthrough = item.internal_chat_message_metadata_passthrough
        turn = (passthrough.turn_id if passthrough else "") or self.turn
        if kind in _CALLS:
            self._call(line, item, turn)
        elif kind in _OUTPUTS:
            self._output(line, item, turn, _output_text(item.output))
        elif kind == "tool_search_call":
            # Codex looking up tools it may call (0.146, run locally: its output follows).
            self._call(line, item, turn, "tool_search")
        elif kind == "tool_search_output":
            self._output(line, item, turn, _tool_names(self._rich_item(line).tools))
        elif kind == "web_search_call":
            # The model's own search (run by the API, not here): done when recorded.
            self._done_call(line, item, "web_search", _as_dict(self._rich_item(line).action))
        elif kind == "image_generation_call":
            revised = self._rich_item(line).revised_prompt
            prompt = {"prompt": revised} if revised else {}
            self._done_call(line, item, "image_generation", prompt)
        elif kind == "agent_message":
            self._agent_message(line, item)
        elif kind == "tool_call":  # a peer's fixture: {function: {name}, arguments}
            rich = self._rich_item(line)
            name = rich.function.get("name", "") if isinstance(rich.function, dict) else ""
            self._done_call(line, item, str(name or "tool"), arguments_of(item.arguments))
        elif kind == "tool_result":  # a peer's fixture: {name, result}
            self._done_result(line, item.name, _output_text(self._rich_item(line).result))
        elif kind not in ITEMS_IGNORED:
            self.unknown += 1
            self.drift.unknown_type("response_item:" + kind)

    def _message(self, line: _ResponseItemLine, item: _ResponseItem) -> None:
        text = _text(item.content)
        passthrough = item.internal_chat_message_metadata_passthrough
        kinds = passthrough.content_item_kinds if passthrough else ()
        role: Literal["user", "assistant", "system"]
        kind: MessageKind = "text"
        hidden = False
        if item.role == "user":
            role = "user"
            stripped = text.lstrip()
            if "generic.turn_aborted" in kinds or stripped.startswith("<turn_aborted>"):
                kind = "interrupt"
            elif "multi_agent.subagent_notification" in kinds or stripped.startswith(
                "<subagent_notification>"
            ):
                kind = "subagent"
            elif not ("user.text" in kinds or (not kinds and not _injected(stripped))):
                hidden = True  # context Codex injects for the model (environment, rules)
            is_meta = hidden or kind != "text"
            # 0.169 marks its items (content_item_kinds) and writes no UI-event copies.
            if not (is_meta or kinds) and self._item_echo("user", text):
                return
        elif item.role == "assistant":
            call = self._rich_item(line).function_call if item.content is None else None
            if isinstance(call, dict):
                # A peer's fixture: a chat-completions call carried by the message.
                self._done_call(
                    line, item, str(call.get("name") or "tool"), arguments_of(call.get("arguments"))
                )
                return
            role = "assistant"
            # The summary the model wrote when compacting; the ``compacted`` record
            # that follows carries it to the reader as the summary message.
            hidden = line.metadata is not None and line.metadata.compaction_output
            kind = "summary" if hidden else "text"
            is_meta = hidden
            if not (hidden or kinds) and self._item_echo("assistant", text):
                return
        elif item.role in ("function", "tool"):
            # A peer's fixture: a chat-completions tool result, by the tool's name.
            self._done_result(line, item.name, text)
            return
        else:  # developer / system instructions
            role = "system"
            hidden = is_meta = True
        message = Message(
            id=item.id or self._fallback_id(line),
            kind=kind,
            role=role,
            text=text,
            timestamp=line.timestamp,
            visibility="hidden" if hidden else "visible",
            is_meta=is_meta,
        )
        self._append(message)
        if role == "user" and not is_meta:
            self._prompt(message)

    def _reasoning(self, line: _ResponseItemLine, item: _ResponseItem) -> None:
        pending = self._copies.get("thinking")
        if pending:
            # Its reasoning events came first (0.34-0.108): one per summary part.
            parts = _parts(item.summary) + _parts(item.content)
            if all(t in pending for t in parts):
                for text in parts:
                    pending.remove(text)
                return
        text = _text(item.summary) or _text(item.content)
        self._recent["thinking"] = text
        self._append(
            Message(
                id=item.id or self._fallback_id(line),
                kind="thinking",
                role="assistant",
                text=text,
                timestamp=line.timestamp,
                # Only encrypted (no summary, as 0.34 writes most): nothing to show.
                visibility="visible" if text else "hidden",
            )
        )

    def _agent_message(self, line: _ResponseItemLine, item: _ResponseItem) -> None:
        """A message one agent sent another (multi-agent, 0.146: ``author`` →
        ``recipient``): the conversation between agents, not an answer to the user."""
        self._append(
            Message(
                id=item.id or self._fallback_id(line),
                kind="subagent",
                role="system",
                text=_text(item.content),
                timestamp=line.timestamp,
                tool_name=self._rich_item(line).recipient or "",
                presentation="agent",
            )
        )

    def _call(
        self, line: _ResponseItemLine, item: _ResponseItem, turn: str, named: str = ""
    ) -> None:
        name = named or item.name or item.type
        call_id = item.call_id or item.id or self._fallback_id(line)
        arguments = arguments_of(item.arguments if item.arguments is not None else item.input)
        self.open_calls[call_id] = (name, arguments, turn)
        self._names[call_id] = name
        self._append(
            Message(
                id=item.id or f"call:{call_id}",
                kind="tool_call",
                role="assistant",
                timestamp=line.timestamp,
                tool_name=name,
                tool_use_id=call_id,
                tool_input=arguments,
                presentation=presentation(name, item.namespace or ""),
            )
        )
        at = epoch_seconds(line.timestamp)
        source = "transcript:" + item.type
        self.events.append(
            ev.ToolStarted(
                turn_id=turn,
                tool_use_id=call_id,
                tool_name=name,
                at=at,
                source=source,
                epoch=self.thread_id,
            )
        )
        if name == QUESTION_TOOL:
            # The call's execution *is* the question form: while it has no output the
            # form is on screen (docs/providers/codex.md §5.4). Refused at once in Default
            # mode, where its output follows within milliseconds and resolves it.
            self.events.append(
                ev.InputRequested(
                    turn_id=turn,
                    kind="question",
                    tool_use_id=call_id,
                    tool_name=name,
                    tool_input=arguments,
                    dialog=dialog_for(call_id, arguments),
                    at=at,
                    source=source,
                    epoch=self.thread_id,
                )
            )

    def _done_call(
        self, line: _Line, item: _ResponseItem | None, name: str, arguments: dict[str, Any]
    ) -> None:
        """A call recorded once it was over, or one no output will answer here (a search
        the API ran, a peer's shape): the record alone — nothing runs, nothing to wait
        on."""
        call_id = (item.call_id or item.id or "") if item is not None else ""
        call_id = call_id or self._fallback_id(line)
        self._names[call_id] = name
        self._append(
            Message(
                id=(item.id if item is not None else None) or f"call:{call_id}",
                kind="tool_call",
                role="assistant",
                timestamp=line.timestamp,
                tool_name=name,
                tool_use_id=call_id,
                tool_input=arguments,
                presentation=presentation(name),
            )
        )

    def _done_result(self, line: _Line, name: str, text: str) -> None:
        """A result that names its tool, not its call: kept as the record it is, joined
        to no call (none is guessed)."""
        self._append(
            Message(
                id=f"output:{self._fallback_id(line)}",
                kind="tool_result",
                role="tool",
                text=text,
                timestamp=line.timestamp,
                tool_name=name,
            )
        )

    def _output(self, line: _ResponseItemLine, item: _ResponseItem, turn: str, text: str) -> None:
        call_id = item.call_id
        opened = self.open_calls.pop(call_id, None)
        if opened is not None:
            turn = opened[2] or turn
        self._append(
            Message(
                id=item.id or f"output:{call_id}",
                kind="tool_result",
                role="tool",
                text=text,
                timestamp=line.timestamp,
                tool_name=self._names.get(call_id, ""),
                tool_use_id=call_id,
            )
        )
        self.events.append(
            ev.ToolFinished(
                turn_id=turn,
                tool_use_id=call_id,
                at=epoch_seconds(line.timestamp),
                source="transcript:" + item.type,
                epoch=self.thread_id,
            )
        )

    def _event_msg(self, line: _EventLine) -> None:
        msg = line.payload
        kind = msg.type
        if kind not in self._events_checked:
            self._events_checked.add(kind)
            self._first("event_msg:" + kind)
        # The kinds every turn writes first (a bulk read pays per event, ADR 0009).
        if kind == "item_completed":
            if msg.item is not None:
                self._item_completed(line, msg)
        elif kind == "token_count":
            if msg.info is not None:
                self._token_count(line, msg)
        elif kind in EVENT_BOOKKEEPING:
            return
        else:
            handler = self._EVENTS.get(kind)
            if handler is not None:
                handler(self, line, msg)
            else:
                self.unknown += 1
                self.drift.unknown_type("event_msg:" + kind)

    def _task_started(self, line: _EventLine, msg: _EventMsg) -> None:
        if msg.turn_id:
            self.turn = msg.turn_id
            self._turn_open, self._prompted = True, False
            self.events.append(
                ev.TurnStarted(
                    turn_id=msg.turn_id,
                    at=epoch_seconds(line.timestamp),
                    source="transcript:task_started",
                    epoch=self.thread_id,
                )
            )

    def _task_complete(self, line: _EventLine, msg: _EventMsg) -> None:
        turn = msg.turn_id or self.turn
        error = _error_text(msg.error)
        failed = error is not None
        if error is not None:
            self._append(
                Message(
                    id=f"error:{turn}",
                    kind="error",
                    role="system",
                    text=error,
                    timestamp=line.timestamp,
                    is_error=True,
                )
            )
        self._turn_closed()
        self.events.append(
            ev.TurnStopped(
                turn_id=turn,
                outcome="failed" if failed else "completed",
                at=epoch_seconds(line.timestamp),
                source="transcript:task_complete(error)" if failed else "transcript:task_complete",
                epoch=self.thread_id,
            )
        )

    def _turn_aborted(self, line: _EventLine, msg: _EventMsg) -> None:
        reason = f"({msg.reason})" if msg.reason else ""
        self._turn_closed()
        self.events.append(
            ev.TurnStopped(
                turn_id=msg.turn_id or self.turn,
                outcome="interrupted",
                at=epoch_seconds(line.timestamp),
                source=f"transcript:turn_aborted{reason}",
                epoch=self.thread_id,
            )
        )

    def _error(self, line: _EventLine, msg: _EventMsg) -> None:
        """The API error that ended a turn, as releases before 0.1xx report it (0.169
        puts it in ``task_complete.error``): an error record; an open turn ends failed."""
        text = msg.message if isinstance(msg.message, str) else _error_text(msg.error)
        self._append(
            Message(
                id=f"error:{self._fallback_id(line)}",
                kind="error",
                role="system",
                text=text or "",
                timestamp=line.timestamp,
                is_error=True,
            )
        )
        if self._turn_open:
            self._turn_closed()
            self.events.append(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="failed",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:error",
                    epoch=self.thread_id,
                )
            )

    def _user_message(self, line: _EventLine, msg: _EventMsg) -> None:
        text = msg.message if isinstance(msg.message, str) else ""
        if self._event_echo("user", text):
            return  # the prompt's response item came first
        message = Message(
            id=self._fallback_id(line),
            kind="text",
            role="user",
            text=text,
            timestamp=line.timestamp,
        )
        self._append(message)
        self._prompt(message)

    def _agent_said(self, line: _EventLine, msg: _EventMsg) -> None:
        text = msg.message if isinstance(msg.message, str) else ""
        if self._event_echo("assistant", text):
            return
        self._append(
            Message(
                id=self._fallback_id(line),
                kind="text",
                role="assistant",
                text=text,
                timestamp=line.timestamp,
            )
        )

    def _agent_thought(self, line: _EventLine, msg: _EventMsg) -> None:
        text = msg.text if isinstance(msg.text, str) else ""
        if self._event_echo("thinking", text):
            return
        self._append(
            Message(
                id=self._fallback_id(line),
                kind="thinking",
                role="assistant",
                text=text,
                timestamp=line.timestamp,
            )
        )

    def _tool_call_event(self, line: _EventLine, msg: _EventMsg) -> None:
        """A call as a UI event only (a peer's fixture): the call record, joined to
        nothing (no output names it)."""
        rich = self._rich_event(line)
        arguments = arguments_of(rich.input)
        call_id = rich.call_id or self._fallback_id(line)
        self._names[call_id] = rich.name
        self._append(
            Message(
                id=f"call:{call_id}",
                kind="tool_call",
                role="assistant",
                timestamp=line.timestamp,
                tool_name=rich.name,
                tool_use_id=call_id,
                tool_input=arguments,
                presentation=presentation(rich.name),
            )
        )

    def _review_done(self, line: _EventLine, msg: _EventMsg) -> None:
        """``/review``'s outcome (0.146): its explanation and findings, as the answer the
        reader sees."""
        output = self._rich_event(line).review_output
        review = output if isinstance(output, dict) else {}
        lines = [str(review.get("overall_explanation") or "")]
        for finding in review.get("findings") or ():
            if isinstance(finding, dict) and finding.get("title"):
                lines.append(f"- {finding['title']}")
        self._append(
            Message(
                id=f"review:{self._fallback_id(line)}",
                kind="text",
                role="assistant",
                text="\n".join(part for part in lines if part),
                timestamp=line.timestamp,
            )
        )

    def _spawned(self, line: _EventLine, msg: _EventMsg) -> None:
        """``collab_agent_spawn_end`` (0.146-0.200): the sub-agent a ``spawn_agent`` call
        started, as 0.169's ``item_completed/CollabAgentToolCall`` names it."""
        rich = self._rich_event(line)
        if rich.new_thread_id:
            self._link(
                line, rich.call_id, rich.new_thread_id, rich.prompt or rich.new_agent_nickname or ""
            )

    def _item_completed(self, line: _EventLine, msg: _EventMsg) -> None:
        # Items duplicate the response_items (messages, command output); only the
        # sub-agent link is new here.
        item = msg.item
        if item is None or item.type != "CollabAgentToolCall" or item.tool != "spawn_agent":
            return
        try:
            spawn = msgspec.convert(item, _SpawnAgent, from_attributes=True)
        except msgspec.ValidationError:
            self.corrupt += 1
            return
        nicknames = {a.thread_id: a.agent_nickname or "" for a in spawn.receiver_agents}
        for child in spawn.receiver_thread_ids:
            self._link(line, spawn.id, child, spawn.prompt or nicknames.get(child, ""))

    def _link(self, line: _EventLine, call_id: str, child: str, text: str) -> None:
        if child in self.subagents:
            return
        self.subagents[child] = call_id
        self._append(
            Message(
                id=f"subagent:{child}",
                kind="subagent",
                role="system",
                text=text,
                timestamp=line.timestamp,
                tool_name="spawn_agent",
                tool_use_id=call_id,
                parent_id=call_id,
                agent_id=child,
                presentation="agent",
            )
        )

    def _token_count(self, line: _EventLine, msg: _EventMsg) -> None:
        """Usage as releases before 0.1xx record it, and 0.169 repeats it: the thread's
        running total and the last response's usage (docs/providers/codex.md §10.3). A
        response counts once: a ``token_count`` right after a ``token_usage_record`` is
        its repeat; one whose running total did not move repeats the previous one (a
        compaction's or a resume's context estimate, or the same event twice). The last
        response's usage where the record gives it, else the running total's growth."""
        info = msg.info
        if info is None:
            return
        total, last = info.total_token_usage, info.last_token_usage
        key = previous = None
        if total is not None:
            key = (
                total.input_tokens,
                total.cached_input_tokens,
                total.output_tokens,
                total.reasoning_output_tokens,
            )
            previous = self._total
            self._total = key
        if self._recorded:
            self._recorded = False
            return
        if key is not None and key == previous:
            return
        if last is not None:
            usage = _usage_of(last)
        elif total is not None:
            usage = _usage_of(total)
            if previous is not None and all(
                n >= p for n, p in zip(key or (), previous, strict=True)
            ):
                usage.input_tokens -= previous[0]
                usage.cached_input_tokens -= previous[1]
                usage.output_tokens -= previous[2]
                usage.reasoning_tokens -= previous[3]
        else:
            return
        if not (usage.input_tokens or usage.output_tokens):
            return
        self.usage.add(usage)
        # Its own record (hidden), where the response's items are is not known: before
        # 0.1xx the usage comes before them, from 0.1xx after. The running total is the
        # response's id: a fork copies its parent's token_count events, running totals
        # and all, under new times (core/usage.py counts such a copy once).
        self._append(
            Message(
                id=f"usage:{self._fallback_id(line)}",
                kind="text",
                role="system",
                timestamp=line.timestamp,
                visibility="hidden",
                is_meta=True,
                usage=usage,
                message_id="" if key is None else "total:{}/{}/{}/{}".format(*key),
                model=info.model or self.model,
            )
        )

    def _token_usage(self, line: _UsageLine) -> None:
        if "token_usage_record" not in self.drift.checked:
            self._first("token_usage_record")
        self._recorded = True
        record = line.payload
        u = record.usage
        if u is None:
            return
        key = record.response_id or (f"o{line.ordinal}" if line.ordinal >= 0 else "")
        if key:
            if key in self._usage_seen:
                return
            self._usage_seen.add(key)
        # Codex's input_tokens already includes the cached part (the API's
        # input_tokens, with input_tokens_details.cached_tokens beside it): nothing
        # to fold, the cached count is recorded as the part of it that hit the cache.
        usage = Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cached_input_tokens=u.cached_input_tokens,
            reasoning_tokens=u.reasoning_output_tokens,
            cache_write_tokens=u.cache_write_input_tokens,
        )
        self.usage.add(usage)
        # The usage record follows its response's items, so it is attached to the first
        # of them once it arrives (a re-read shows it; seq and ids never move). A
        # response that left no item keeps its usage in Chat.usage only.
        if self._unpriced:
            priced = self._unpriced[0]
            if priced.usage is None:
                # A copy in its place: the message may already be in a caller's Chat,
                # and what a read handed out never changes afterwards.
                priced = msgspec.structs.replace(
                    priced, usage=usage, message_id=key, model=self.model
                )
                at = priced.seq - 1 - self._base
                if at >= 0:
                    self.messages[at] = priced
                else:  # already taken out (``take``): handed out again, changed
                    self._changed[priced.seq] = priced
            self._unpriced.clear()

    def _compacted(self, line: _CompactedLine) -> None:
        if "compacted" not in self.drift.checked:
            self._first("compacted")
        record = line.payload
        self._append(
            Message(
                id=f"compacted:{self._fallback_id(line)}",
                kind="summary",
                role="system",
                text=record.message or "",
                timestamp=line.timestamp,
            )
        )

    def _retained(self, line: _RetainedLine) -> None:
        record = line.payload
        if record.type != "verified_answer":
            self.drift.unknown_type("retained_context:" + record.type)
            return
        if "retained_context:verified_answer" not in self.drift.checked:
            self._first("retained_context:verified_answer")
        lines = []
        for qa in record.questions:
            answer = qa.answer
            if isinstance(answer, list):
                answer = ", ".join(str(a) for a in answer)
            lines.append(f"{qa.question.splitlines()[0] if qa.question else ''}: {answer}")
        self._append(
            Message(
                id=f"answer:{record.call_id}",
                kind="text",
                role="user",
                text="\n".join(lines),
                timestamp=line.timestamp,
                tool_name=QUESTION_TOOL,
                tool_use_id=record.call_id,
                presentation="question",
            )
        )

    _HANDLERS: ClassVar[dict[type, Callable[[RolloutParser, Any], None]]] = {
        _SessionMetaLine: _session_meta,
        _TurnContextLine: _turn_context,
        _WorldStateLine: _world_state,
        _AgentMetadataLine: _bookkeeping,
        _ResponseItemLine: _response_item,
        _EventLine: _event_msg,
        _UsageLine: _token_usage,
        _CompactedLine: _compacted,
        _RetainedLine: _retained,
    }
    _EVENTS: ClassVar[dict[str, Callable[[RolloutParser, _EventLine, _EventMsg], None]]] = {
        "task_started": _task_started,
        "task_complete": _task_complete,
        "turn_aborted": _turn_aborted,
        "item_completed": _item_completed,
        "token_count": _token_count,
        "error": _error,
        "user_message": _user_message,
        "agent_message": _agent_said,
        "agent_reasoning": _agent_thought,
        "agent_reasoning_raw_content": _agent_thought,
        "tool_call": _tool_call_event,
        "exited_review_mode": _review_done,
        "collab_agent_spawn_end": _spawned,
    }


def thread_id_from_path(path: str) -> str:
    """``rollout-YYYY-MM-DDTHH-MM-SS-<thread id>.jsonl[.zst]`` → the thread id."""
    name = os.path.basename(path)
    for suffix in (".zst", ".jsonl"):
        name = name.removesuffix(suffix)
    parts = name.split("-")
    return "-".join(parts[-5:]) if len(parts) >= 11 else ""


class ZstFollower(JsonlFollower):
    """A ``.jsonl.zst`` rollout (a finished, archived file): there is no byte offset into
    a compressed stream, so a changed file is read anew."""

    _stamp: tuple[int, int, int] | None = None

    def read(self, on_lines: OnLines, reset: Callable[[], None]) -> None:
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
            reset()
            pending = b""
            try:
                with zstandard.ZstdDecompressor().stream_reader(fh) as reader:
                    while chunk := reader.read(self.BLOCK):
                        data = pending + chunk
                        cut = data.rfind(b"\n") + 1
                        pending = data[cut:]
                        if cut:
                            on_lines(memoryview(data)[:cut])
            except zstandard.ZstdError:
                pass  # a truncated or damaged frame: what decoded so far stands
            if pending:
                on_lines(memoryview(pending + b"\n"))


# -- resuming a parse (the history index, ADR 0022) --------------------------------------

RESUME_VERSION = 2
"""Bump when the parse state below, or what the parser makes of a record, changes: a
state of another version makes the file be parsed again from its first byte. (2: the
releases before 0.169 read — token_count usage, echoes, prompt-opened turns, forks.)"""


class ResumeState(msgspec.Struct, gc=False):
    """What ``HistoryParser`` needs to go on from an offset: exactly the parser's fields
    that shape a later record."""

    version: int
    count: int
    thread_id: str = ""
    parent_thread_id: str = ""
    forked_from: str = ""
    agent_id: str = ""
    nickname: str = ""
    model: str = ""
    cli_version: str = ""
    cwd: str = ""
    turn: str = ""
    turn_open: bool = False
    prompted: bool = False
    meta_seen: bool = False
    names: dict[str, str] = {}
    """call_id → tool name of every call so far (an output names its call's tool)."""
    subagents: dict[str, str] = {}
    usage_seen: list[str] = []
    unpriced: Message | None = None
    """The first model output since the last usage record: the next one prices it."""
    total: tuple[int, int, int, int] | None = None
    recorded: bool = False
    copies: dict[str, list[str]] = {}
    recent: dict[str, str] = {}


_encode_state = msgspec.json.Encoder().encode
_decode_state = msgspec.json.Decoder(ResumeState).decode


class HistoryParser(RolloutParser):
    """``RolloutParser`` for the history index: records are taken out as they are
    parsed (``take``) — with an earlier one again when a usage record prices it — and
    the parse state round-trips through ``state``/``resumed``."""

    @property
    def count(self) -> int:
        return self._base + len(self.messages)

    def take(self) -> list[Message]:
        taken = [self._changed[seq] for seq in sorted(self._changed)]
        taken += self.messages
        self._changed.clear()
        self._base += len(self.messages)
        self.messages = []
        return taken

    def facts(self) -> TranscriptFacts:
        return TranscriptFacts(
            session_id=self.thread_id,
            agent_id=self.agent_id,
            parent_session_id=self.parent_thread_id or self.forked_from,
            cwd=self.cwd,
            cli_version=self.cli_version,
        )

    def state(self) -> bytes:
        return _encode_state(
            ResumeState(
                version=RESUME_VERSION,
                count=self.count,
                thread_id=self.thread_id,
                parent_thread_id=self.parent_thread_id,
                forked_from=self.forked_from,
                agent_id=self.agent_id,
                nickname=self.nickname,
                model=self.model,
                cli_version=self.cli_version,
                cwd=self.cwd,
                turn=self.turn,
                turn_open=self._turn_open,
                prompted=self._prompted,
                meta_seen=self._meta_seen,
                names=self._names,
                subagents=self.subagents,
                usage_seen=sorted(self._usage_seen),
                unpriced=self._unpriced[0] if self._unpriced else None,
                total=self._total,
                recorded=self._recorded,
                copies=self._copies,
                recent=self._recent,
            )
        )

    @classmethod
    def resumed(cls, state: bytes) -> HistoryParser | None:
        """A parser that goes on where ``state`` was taken; ``None`` if it cannot."""
        try:
            saved = _decode_state(state)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if saved.version != RESUME_VERSION:
            return None
        parser = cls(saved.thread_id)
        parser._base = saved.count
        parser.parent_thread_id = saved.parent_thread_id
        parser.forked_from = saved.forked_from
        parser.agent_id = saved.agent_id
        parser.nickname = saved.nickname
        parser.model = saved.model
        parser.cli_version = saved.cli_version
        parser.cwd = saved.cwd
        parser.turn = saved.turn
        parser._turn_open = saved.turn_open
        parser._prompted = saved.prompted
        parser._meta_seen = saved.meta_seen
        parser._names = saved.names
        parser.subagents = saved.subagents
        parser._usage_seen = set(saved.usage_seen)
        parser._unpriced = [] if saved.unpriced is None else [saved.unpriced]
        parser._total = saved.total
        parser._recorded = saved.recorded
        parser._copies = saved.copies
        parser._recent = saved.recent
        return parser
