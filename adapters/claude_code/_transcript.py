"""Claude Code transcript (``~/.claude/projects/<slug>/<session>.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: docs/providers/claude-code.md §4 (2.1.328) and §9 (older versions, real
transcripts). One JSONL line per record; one line per content block of an API message
(all sharing ``message.id``). Every line is decoded through one small view that declares
only the fields read here (msgspec skips the rest cheaply), a block of lines in one call
(ADR 0009). A line that is no JSON object is counted (``corrupt``) and skipped; an object
whose fields have other shapes than these views expect is read with the fields that fit
(``_salvaged``); a record type not known here is counted (``unknown``); a torn last line
is left for the next read. ``TranscriptParser.feed`` takes appended lines only, so a
re-read costs what was appended, not the file.

Usage: one count per API response, of its **final** figures. Versions before 2.1.5x
wrote a response's line for each content block as the block finished, each with the
usage as of then (the first line's output is a few tokens, the last line's is the
response's); 2.1.328 repeats the final usage on every line. The response's first record
carries its usage; a later line of it with other figures replaces them — on a copy of
that record, which a history parse hands out again with its ``seq`` (core/seam.py,
``ResumedParse``). A line with usage and no ``message.id`` is counted on its own.

Subagents: a subagent's own file (``<session>/subagents/agent-<id>.jsonl``, 2.0.x's
``agent-<id>.jsonl``) holds only sidechain records and is read as that agent's. 1.0.7x to
1.0.10x wrote them into the main file (``isSidechain: true``, no ``agentId``): each chain
is read as its subagent's group, opened under the Task call whose prompt it begins with
(docs/providers/claude-code.md §9.4, ADR 0032).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin

import msgspec

from agentspool.adapters.claude_code._schema import TRANSCRIPT_FIELDS
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import DriftCounter, object_keys
from agentspool.adapters.common.jsonl import split_lines
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, PendingDialog, TranscriptFacts, Usage

S = TypeVar("S", bound=msgspec.Struct)

# Records the CLI writes for its own bookkeeping; never conversation, never shown.
BOOKKEEPING = frozenset(
    {
        "queue-operation",
        "worktree-state",  # the worktree a session entered (2.1.x)
        "relocated",  # the session's cwd moved with its worktree (2.1.x)
        "bridge-session",  # the remote-control bridge's id (2.1.2xx)
        "last-prompt",
        "mode",
        "permission-mode",
        "file-history-snapshot",
        "tools-used",
        "atis-latch",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "cost-state",
        "attachment",
        # 1.0's title of the conversation ending at ``leafUuid``: a continued session's
        # file starts with its predecessor's, so it does not name this file's session.
        "summary",
        "tag",
        "agent-name",
    }
)
# Record types other tools' hand-written test fixtures invent in files shaped like Claude
# Code's (and a line with no type): no Claude Code version writes them, so nothing in
# them is evidence of what it did. Not read, not counted.
FOREIGN_TYPES = frozenset({"", "tool", "tool_result", "tool_use", "started", "result"})
# Records about the file, not a link of the conversation chain (no side, no parent).
_FILE_RECORDS = frozenset({"ai-title", "custom-title", "pr-link", "frame-link"})
TITLE_RANK = {"ai-title": 1, "custom-title": 2}
"""A title the user gave (``/rename``) wins over one the CLI generated."""
RESPONSES_KEPT = 4
"""Responses whose usage a later line may still change: the latest begun. A response's
lines come one after another (only its tool results and bookkeeping between them), so
a line of an older response is not expected; its usage would stay as first counted."""
SIDE_RECORDS_KEPT = 512
"""Inline subagent records (1.0.x, in the main file) whose subagent is remembered: a
record names its parent, and the parent is one of the latest."""
SPAWNS_KEPT = 64
"""Task calls not yet matched to an inline subagent's first prompt."""
INTERRUPT_PREFIX = "[Request interrupted by user"
TASK_NOTIFICATION = "<task-notification>"
_TASK_ID = re.compile(r"<task-id>([^<]+)</task-id>")
DIALOG_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
PRESENTATION = {
    "Bash": "shell",
    "BashOutput": "shell",
    "KillShell": "shell",
    "PowerShell": "shell",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Read": "read",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "web",
    "WebSearch": "web",
    "Agent": "agent",
    "Task": "agent",
    "AskUserQuestion": "question",
    "ExitPlanMode": "plan",
    "EnterPlanMode": "plan",
    "TodoWrite": "todo",
}


def presentation(tool_name: str) -> str:
    if tool_name.startswith("mcp__"):
        return "mcp"
    return PRESENTATION.get(tool_name, "other")


class _Part(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: str | list[_Part] | None = None
    is_error: bool | None = None


class _ApiUsage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class _ApiMessage(msgspec.Struct, gc=False):
    id: str | None = None
    role: str = ""
    model: str | None = None
    content: str | list[_Block] | None = None
    stop_reason: str | None = None
    usage: _ApiUsage | None = None


class _Progress(msgspec.Struct, gc=False):
    """``data`` of a ``progress`` record: what made progress (a hook: which event)."""

    type: str = ""
    hookEvent: str = ""  # noqa: N815 - the CLI's field name


class _Line(msgspec.Struct, rename="camel", gc=False):
    """Every record type through one view: the CLI writes ``type`` after the payload
    of assistant and attachment records, and a tagged union (as the Codex rollout is
    read) would scan that payload twice, once to find the tag (ADR 0009). Bookkeeping
    records fit this view too; their few shared fields are read and dropped."""

    type: str = ""
    subtype: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    timestamp: str | None = None
    prompt_id: str | None = None
    is_meta: bool = False
    is_compact_summary: bool = False
    is_api_error_message: bool = False
    tool_denial_kind: str | None = None
    content: str | None = None
    message: _ApiMessage | None = None
    tool_use_result: msgspec.Raw = msgspec.Raw()
    """Read only behind an ``Agent`` call (``_AsyncLaunch``): often large (a Bash result
    repeats its whole output there, an Edit the whole file), so it stays undecoded."""
    version: str | None = None
    data: _Progress | None = None
    error: msgspec.Raw = msgspec.Raw()
    """``system:api_error``'s error, of many shapes (``_error_text``)."""
    retry_attempt: int | None = None
    max_retries: int | None = None
    api_refusal_explanation: str | None = None
    ai_title: str | None = None
    custom_title: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    pr_repository: str | None = None
    frame_url: str | None = None
    title: str | None = None


class _AsyncLaunch(msgspec.Struct, gc=False):
    """``toolUseResult`` of an ``Agent`` call: ``{"isAsync": true, "status":
    "async_launched", "agentId": …}`` when the agent runs in the background."""

    isAsync: bool = False  # noqa: N815 - the CLI's field names
    status: str = ""
    agentId: str = ""  # noqa: N815


class _ErrorNote(msgspec.Struct, gc=False):
    """What an API error's ``error`` says, in the shapes 2.1.x writes: a message and a
    status, or the API's own error body nested under ``error.error``."""

    message: str | None = None
    status: int | None = None
    error: _ErrorNote | None = None
    type: str | None = None


_line_decoder = msgspec.json.Decoder(_Line)
_decode_line = _line_decoder.decode
_decode_lines = _line_decoder.decode_lines
_decode_launch = msgspec.json.Decoder(_AsyncLaunch | str | None).decode
_decode_error = msgspec.json.Decoder(_ErrorNote | str | None).decode
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
_CONVERSATION = frozenset({"user", "assistant", "system"})


def _nested(annotation: Any) -> tuple[str, type[msgspec.Struct]] | None:
    """Where a field's type holds a view of ours: itself (``"one"``) or its items
    (``"list"``); ``None`` for a plain value."""
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, msgspec.Struct):
            return "one", arg
        if get_origin(arg) is list:
            (item,) = get_args(arg)
            if isinstance(item, type) and issubclass(item, msgspec.Struct):
                return "list", item
    return None


_Field = tuple[str, str, Callable[[Any], Any], tuple[str, type[msgspec.Struct]] | None]
_SALVAGE: dict[type[msgspec.Struct], list[_Field]] = {}


def _salvage_fields(view: type[msgspec.Struct]) -> list[_Field]:
    fields = _SALVAGE.get(view)
    if fields is None:
        fields = _SALVAGE[view] = [
            (
                field.encode_name,
                field.name,
                msgspec.json.Decoder(field.type).decode,
                _nested(field.type),
            )
            for field in msgspec.structs.fields(view)
        ]
    return fields


def _salvaged(view: type[S], raw: bytes | msgspec.Raw) -> S | None:
    """``raw`` read as ``view`` with the fields that fit it: a field of another shape is
    read as absent (a view of ours in it is salvaged the same way, item by item).
    ``None`` when ``raw`` is no JSON object. Only for a line the strict decode refused:
    it decodes each field on its own."""
    members = object_keys(raw)
    if members is None:
        return None
    kept: dict[str, Any] = {}
    for encode_name, name, decode, nested in _salvage_fields(view):
        value = members.get(encode_name)
        if value is None:
            continue
        try:
            kept[name] = decode(value)
        except _DECODE_ERRORS:
            if nested is None:
                continue
            how, inner = nested
            if how == "one":
                one = _salvaged(inner, value)
                if one is not None:
                    kept[name] = one
            else:
                items = _decode_items(value)
                if items is not None:
                    kept[name] = [x for x in (_salvaged(inner, i) for i in items) if x]
    return view(**kept)


_decode_items_strict = msgspec.json.Decoder(list[msgspec.Raw]).decode


def _decode_items(raw: msgspec.Raw) -> list[msgspec.Raw] | None:
    try:
        return _decode_items_strict(raw)
    except _DECODE_ERRORS:
        return None


def _shape_of(members: dict[str, msgspec.Raw]) -> str:
    """``type`` or ``type:subtype`` of a record read as raw members."""
    try:
        kind = msgspec.json.decode(members.get("type", b'""'))
        subtype = msgspec.json.decode(members["subtype"]) if "subtype" in members else None
    except msgspec.DecodeError:
        return ""
    return f"{kind}:{subtype}" if isinstance(subtype, str) else str(kind)


def _text_of(content: str | list[_Part] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if p.text)


def dialog_for(tool_name: str, tool_use_id: str, tool_input: dict[str, Any]) -> PendingDialog:
    if tool_name == "ExitPlanMode":
        return PendingDialog(
            kind="plan_approval", tool_use_id=tool_use_id, prompt=str(tool_input.get("plan", ""))
        )
    return question_dialog(tool_use_id, tool_input.get("questions"))


def usage_of(api: _ApiUsage) -> Usage:
    cached = api.cache_read_input_tokens
    return Usage(
        input_tokens=api.input_tokens + api.cache_creation_input_tokens + cached,
        output_tokens=api.output_tokens,
        cached_input_tokens=cached,
        cache_write_tokens=api.cache_creation_input_tokens,
    )


def _has_tokens(usage: Usage) -> bool:
    return bool(usage.input_tokens or usage.output_tokens)


def _minus(usage: Usage, other: Usage) -> Usage:
    """``usage - other``, kind by kind (what replacing ``other`` by ``usage`` adds)."""
    return Usage(
        input_tokens=usage.input_tokens - other.input_tokens,
        output_tokens=usage.output_tokens - other.output_tokens,
        cached_input_tokens=usage.cached_input_tokens - other.cached_input_tokens,
        reasoning_tokens=usage.reasoning_tokens - other.reasoning_tokens,
        cache_write_tokens=usage.cache_write_tokens - other.cache_write_tokens,
    )


def _error_text(line: _Line) -> str:
    """An API error record's text: the error's message (or the API's error body's, or its
    type), its HTTP status, and the retry it led to."""
    try:
        note = _decode_error(line.error) if line.error else None
    except _DECODE_ERRORS:
        note = None
    text, status = "", None
    if isinstance(note, str):
        text = note
    elif note is not None:
        status = note.status
        inner = note.error.error if note.error is not None else None
        text = (
            note.message
            or (note.error.message if note.error is not None else None)
            or (inner.message if inner is not None else None)
            or note.type
            or (inner.type if inner is not None else None)
            or ""
        )
    text = text or line.content or "API error"
    if status:
        text = f"{text} (status {status})"
    if line.retry_attempt and line.max_retries:
        text += f"; retry {line.retry_attempt} of {line.max_retries}"
    return text


def _digest(text: str) -> str:
    """A prompt as the parse state keeps it to match it later: its digest (a Task prompt
    can be pages long, and 2.1.x files keep every call's until the state drops it)."""
    if not text:
        return ""
    return hashlib.blake2b(text.encode(errors="replace"), digest_size=12).hexdigest()


def _prompt_text(message: _ApiMessage | None) -> str:
    """A user record's typed text (its string content, or its text blocks)."""
    if message is None:
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    if not content:
        return ""
    return "\n".join(b.text for b in content if b.type == "text" and b.text)


class TranscriptParser:
    """Parse state for one transcript identity; ``feed`` appended lines in file order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._base = 0
        """Records handed out and let go before ``messages`` (``take``): the next
        record's ``seq`` is ``_base + len(messages) + 1``."""
        self.events: list[ev.Event] = []
        self.usage = Usage()
        self.session_id = ""
        self.cwd = ""
        """The session's working directory, as its first conversation record names it."""
        self.corrupt = 0
        self.unknown = 0
        self.drift = DriftCounter(TRANSCRIPT_FIELDS)
        self.cli_version = ""
        """The latest ``version`` a record names (a resumed session may be a newer CLI's)."""
        self.turn = ""
        self.sidechain: bool | None = None
        self.agent_id = ""
        """Set when this is a subagent's transcript: every message carries it."""
        self.title = ""
        """The session's title as the CLI keeps it (``custom-title`` over ``ai-title``)."""
        self._title_rank = 0
        self.open_tools: dict[str, tuple[str, dict[str, Any]]] = {}
        self.background: dict[str, None] = {}
        """Background agents launched and not yet reported back (insertion-ordered)."""
        self._usage_seen: set[str] = set()
        self._responses: dict[str, Message] = {}
        """message id → the record carrying that response's usage, for the latest
        ``RESPONSES_KEPT`` responses begun (a later line may change their figures)."""
        self._changed: dict[int, Message] = {}
        """Records changed after ``take`` handed them out (``seq`` → the new copy)."""
        self._agent = ""
        """The subagent the record being read belongs to (``""``: the main agent)."""
        self._inline = False
        """The record being read is an inline subagent's (1.0.x, in the main file): it
        is shown under its subagent and is no evidence of the main agent's state."""
        self._side_agents: dict[str, str] = {}
        """uuid → inline subagent of its latest ``SIDE_RECORDS_KEPT`` records."""
        self._inline_agents: dict[str, None] = {}
        self._spawns: dict[str, tuple[str, str]] = {}
        """tool_use_id → (prompt digest, description) of the latest Task calls no inline
        subagent matched."""
        self._unchecked: list[str] = []
        """Shapes met for the first time in the block being read: their fields are
        checked once it is read (a decoded line keeps no bytes; ADR 0014)."""

    def feed(self, block: memoryview) -> None:
        """A block of complete lines (what ``JsonlFollower`` hands on), decoded in one
        call. A block holding a line the decode refuses (corrupt, torn, fields of
        another shape) is read again line by line, so that line alone is counted and
        skipped, or read with the fields that fit."""
        try:
            decoded = _decode_lines(block)
        except _DECODE_ERRORS:
            for raw in split_lines(block):
                self.feed_line(raw)
            return
        for line in decoded:
            self._dispatch(line)
        if self._unchecked:
            self._check_fields(block)

    def feed_line(self, raw: bytes) -> None:
        if raw[:1] != b"{" and not raw.strip():
            return
        try:
            line = _decode_line(raw)
        except msgspec.ValidationError:
            salvaged = _salvaged(_Line, raw)
            if salvaged is None:
                self.corrupt += 1  # JSON, but not an object
                return
            line = salvaged
        except (msgspec.DecodeError, UnicodeDecodeError):
            self.corrupt += 1
            return
        self._dispatch(line)
        if self._unchecked:
            self._check_fields(raw)

    def _dispatch(self, line: _Line) -> None:
        kind = line.type
        if kind in BOOKKEEPING or kind in FOREIGN_TYPES or line.subtype == "stop_hook_summary":
            return  # one summary per turn in the TUI: nothing read, no say on the identity
        self._agent, self._inline = self.agent_id, False
        if kind in _FILE_RECORDS:
            if kind not in self.drift.checked:
                self._first(kind)
            self._file_record(line)
            return
        if (line.is_sidechain is not self.sidechain or not self.session_id) and not self._enter(
            line
        ):
            if self.sidechain is False and kind in _CONVERSATION:
                # A subagent's record in the main file (1.0.x): read as that subagent's.
                self._agent, self._inline = self._inline_agent(line), True
            else:
                if kind == "assistant":
                    self._other_side(line)
                return
        shape = kind if line.subtype is None else f"{kind}:{line.subtype}"
        if shape not in self.drift.checked:
            self._first(shape)
        if line.version:
            self.cli_version = line.version
        if kind == "user":
            self._user(line)
        elif kind == "assistant":
            self._assistant(line)
        elif kind == "system":
            self._system(line)
        elif kind == "progress":
            self._progress(line)
        else:
            self.unknown += 1

    def _emit(self, event: ev.Event) -> None:
        """An event of the main agent's turn: an inline subagent's records make none."""
        if not self._inline:
            self.events.append(event)

    # -- drift (ADR 0014) ------------------------------------------------------------
    def _first(self, shape: str) -> None:
        """A record of a shape whose fields are not checked yet: a shape known here is
        checked once its block is read; an unknown one is counted, every record of it."""
        if shape not in TRANSCRIPT_FIELDS:
            self.drift.unknown_type(shape)
        elif shape not in self._unchecked:
            self._unchecked.append(shape)

    def _check_fields(self, block: bytes | memoryview) -> None:
        """Find the first line of each unchecked shape in the block and check its
        top-level keys: the shape's name is searched as bytes, so only candidate lines
        decode."""
        data = bytes(block)
        for shape in self._unchecked:
            kind, _, subtype = shape.partition(":")
            # The value alone, in whatever spelling the line has; the shape is verified.
            needle = b'"%s"' % (subtype or kind).encode()
            at = data.find(needle)
            while at >= 0:
                start = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                end = len(data) if end < 0 else end
                members = object_keys(data[start:end])
                if members is not None and _shape_of(members) == shape:
                    self.drift.check(shape, members)
                    break
                at = data.find(needle, end)
            else:
                # Not as expected in the bytes (another spelling): the slow way.
                for raw in split_lines(memoryview(data)):
                    members = object_keys(raw)
                    if members is not None and _shape_of(members) == shape:
                        self.drift.check(shape, members)
                        break
        self._unchecked.clear()

    def _enter(self, line: _Line) -> bool:
        """What every conversation record does first; ``False``: not this file's side.
        Nothing to do once the side and the session are known and the record is of the
        same side, so ``_dispatch`` calls it only otherwise."""
        if self.sidechain is None:
            # A subagent's own file (`<session>/subagents/agent-<id>.jsonl`) holds only
            # sidechain records: it is read as that agent's conversation.
            self.sidechain = line.is_sidechain
            self.agent_id = line.agent_id or "" if line.is_sidechain else ""
            self._agent = self.agent_id
        if line.is_sidechain != self.sidechain:
            return False  # 2.1.328 keeps subagent records out of the main file; older CLIs did
        if not self.session_id and line.session_id:
            self.session_id = line.session_id
            # A first record naming no cwd keeps the one an earlier line named (the
            # history's ``_find_cwd``), whichever block the two were read in.
            self.cwd = line.cwd or self.cwd
            self.events.append(
                ev.SessionStarted(
                    epoch=line.session_id,
                    how="transcript",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:first-record",
                )
            )
        return True

    # -- inline subagents (1.0.x) ----------------------------------------------------
    def _inline_agent(self, line: _Line) -> str:
        """The subagent a sidechain record in the main file belongs to: the one its
        parent record belongs to; a record with no parent opens a new one (its prompt is
        a Task call's), named by its ``agentId`` where it has one, else by its uuid."""
        agent = line.agent_id or ""
        if not agent and line.parent_uuid:
            agent = self._side_agents.get(line.parent_uuid, "")
        if not agent:
            agent = line.uuid or f"sidechain-{self._base + len(self.messages) + 1}"
        if agent not in self._inline_agents:
            self._inline_agents[agent] = None
            self._link(agent, line)
        if line.uuid:
            self._side_agents[line.uuid] = agent
            if len(self._side_agents) > SIDE_RECORDS_KEPT:
                del self._side_agents[next(iter(self._side_agents))]
        return agent

    def _link(self, agent: str, line: _Line) -> None:
        """The ``subagent`` record that opens an inline subagent's group: under the Task
        call whose prompt is its first prompt (the CLI names the call nowhere else)."""
        prompt = _digest(_prompt_text(line.message)) if line.type == "user" else ""
        call, description = "", ""
        for tool_use_id, (asked, about) in self._spawns.items():
            if asked and asked == prompt:
                call, description = tool_use_id, about
                break
        if call:
            del self._spawns[call]
        self._agent = agent
        self._add(
            Message(
                id=f"subagent:{agent}",
                kind="subagent",
                role="system",
                text=description,
                timestamp=line.timestamp or "",
                tool_use_id=call,
                parent_id=call,
                agent_id=agent,
                presentation="agent",
            )
        )

    def _other_side(self, line: _Line) -> None:
        """A main-agent response in a subagent's own file: not this conversation, but
        paid for. Its usage is kept on one hidden record per response, so usage counted
        from the records holds it too (ADR 0025)."""
        msg = line.message
        if msg is None or msg.usage is None:
            return
        usage = self._priced(msg.id or "", msg.usage)
        if usage is None:
            return
        record = Message(
            id=self._uid(line),
            kind="text",
            role="assistant",
            timestamp=line.timestamp or "",
            visibility="hidden",
            parent_id=line.parent_uuid or "",
            agent_id=line.agent_id or "",
            usage=usage,
            message_id=msg.id or "",
            model=msg.model or "",
        )
        self._add(record)
        self._carry(msg.id or "", record)

    # -- usage: one count per response, its final figures ----------------------------
    def _priced(self, message_id: str, api: _ApiUsage) -> Usage | None:
        """The usage to put on the first record of this line: the line begins a response
        (or has no id: counted on its own). ``None`` for a later line of a response,
        whose figures replace the ones counted (``_reprice``)."""
        usage = usage_of(api)
        if not message_id or message_id not in self._usage_seen:
            if message_id:
                self._usage_seen.add(message_id)
            self.usage.add(usage)
            return usage
        self._reprice(message_id, usage)
        return None

    def _carry(self, message_id: str, record: Message) -> None:
        if not message_id:
            return
        self._responses[message_id] = record
        if len(self._responses) > RESPONSES_KEPT:
            del self._responses[next(iter(self._responses))]

    def _reprice(self, message_id: str, usage: Usage) -> None:
        """A later line of a response states its usage as of that line: the last one
        with tokens is the response's. Its record is replaced by a copy (what a read
        handed out never changes) in its place, or handed out again (``_changed``)."""
        carrier = self._responses.get(message_id)
        if carrier is None or not _has_tokens(usage) or carrier.usage == usage:
            return
        self.usage.add(_minus(usage, carrier.usage or Usage()))
        priced = msgspec.structs.replace(carrier, usage=usage)
        self._responses[message_id] = priced
        at = priced.seq - 1 - self._base
        if at >= 0:
            self.messages[at] = priced
        else:  # already taken out (``take``): handed out again, changed
            self._changed[priced.seq] = priced

    def _add(self, message: Message) -> None:
        """Appends with the next ``seq`` (the hot handlers build their message with it)."""
        message.seq = self._base + len(self.messages) + 1
        if self._agent:
            message.agent_id = self._agent
        self.messages.append(message)

    def _uid(self, line: _Line) -> str:
        """The record's uuid; for one without, an id from its place in the stream (as
        stable as ``seq`` across re-reads)."""
        return line.uuid or f"line-{self._base + len(self.messages)}"

    # -- records -----------------------------------------------------------------------
    def _file_record(self, line: _Line) -> None:
        """A title the CLI gave the session, or a link it made (a pull request, a
        rendered artifact): about the file, not a link of the conversation chain."""
        rank = TITLE_RANK.get(line.type, 0)
        if rank:
            title = (line.custom_title if rank == 2 else line.ai_title) or ""
            if title and rank >= self._title_rank:
                self.title, self._title_rank = title, rank
            return
        if line.type == "pr-link" and line.pr_url:
            number = f"#{line.pr_number}" if line.pr_number is not None else ""
            text = f"pull request {line.pr_repository or ''}{number}: {line.pr_url}"
        elif line.type == "frame-link" and line.frame_url:
            text = f"{line.title or 'preview'}: {line.frame_url}"
        else:
            return
        self._add(
            Message(
                id=self._uid(line),
                kind="text",
                role="system",
                text=" ".join(text.split()),
                timestamp=line.timestamp or "",
            )
        )

    def _user(self, line: _Line) -> None:
        msg = line.message
        if msg is None:
            return
        at = epoch_seconds(line.timestamp)
        uid = self._uid(line)
        stamp = line.timestamp or ""
        prompt_id = line.prompt_id or ""
        if isinstance(msg.content, list):
            texts: list[str] = []
            for i, block in enumerate(msg.content):
                if block.type == "tool_result":
                    tool_use_id = block.tool_use_id or ""
                    name = self.open_tools.pop(tool_use_id, ("", {}))[0]
                    if name in ("Agent", "Task") and not self._inline:
                        self._launched(line.tool_use_result)
                    content = block.content
                    self.messages.append(
                        Message(
                            seq=self._base + len(self.messages) + 1,
                            id=f"{uid}:{i}",
                            kind="tool_result",
                            role="tool",
                            text=content if isinstance(content, str) else _text_of(content),
                            timestamp=stamp,
                            tool_name=name,
                            tool_use_id=tool_use_id,
                            is_error=bool(block.is_error),
                            parent_id=line.parent_uuid or "",
                            agent_id=self._agent,
                        )
                    )
                    self._emit(
                        ev.ToolFinished(
                            turn_id=prompt_id,
                            tool_use_id=tool_use_id,
                            at=at,
                            source="transcript:tool_result"
                            + (f"({line.tool_denial_kind})" if line.tool_denial_kind else ""),
                        )
                    )
                elif block.type == "text" and block.text:
                    texts.append(block.text)
            text = "\n".join(texts)
        else:
            text = msg.content or ""
        if not text:
            return
        if text.startswith(INTERRUPT_PREFIX):
            self._add(
                Message(
                    id=uid,
                    kind="interrupt",
                    role="user",
                    text=text,
                    timestamp=stamp,
                    parent_id=line.parent_uuid or "",
                )
            )
            self._emit(
                ev.TurnStopped(
                    turn_id=prompt_id or self.turn,
                    outcome="interrupted",
                    at=at,
                    source="transcript:interrupt",
                )
            )
            return
        if text.startswith(TASK_NOTIFICATION) and not self._inline:
            # A background agent reported back (it stopped): its work is over.
            for task_id in _TASK_ID.findall(text):
                self.background.pop(task_id, None)
                self.events.append(
                    ev.BackgroundFinished(
                        task_id=task_id, at=at, source="transcript:task-notification"
                    )
                )
        if line.is_compact_summary:
            self._add(
                Message(
                    id=uid,
                    kind="summary",
                    role="user",
                    text=text,
                    timestamp=stamp,
                    parent_id=line.parent_uuid or "",
                )
            )
            return
        hidden = line.is_meta or text.lstrip().startswith("<system-reminder>")
        self._add(
            Message(
                id=uid,
                kind="text",
                role="user",
                text=text,
                timestamp=stamp,
                visibility="hidden" if hidden else "visible",
                is_meta=line.is_meta,
                parent_id=line.parent_uuid or "",
            )
        )
        local_command = text.lstrip().startswith(("<command-name>", "<local-command-"))
        if (
            local_command
            and not prompt_id
            and not self._inline
            and not hidden
            and text.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>"))
        ):
            # A local command's output (``/context``, ``/cost``): it ran, and the CLI
            # waits on the user again. Versions before ``promptId`` make it a turn of
            # its own, so a session of local commands alone is not "nothing yet";
            # 2.1.328 (``promptId`` on it) reads as before.
            self.events.append(
                ev.TurnStarted(turn_id=uid, at=at, source="transcript:local-command")
            )
            self.events.append(
                ev.TurnStopped(
                    turn_id=uid, outcome="completed", at=at, source="transcript:local-command"
                )
            )
        if not hidden and not local_command and not self._inline:
            # A prompt opens a turn. Versions before ``promptId`` (2.1.4x and older) name
            # it by the record's own uuid: a turn is never left unopened for want of an id.
            self.turn = prompt_id or uid
            self.events.append(
                ev.TurnStarted(turn_id=self.turn, at=at, source="transcript:user-prompt")
            )

    def _assistant(self, line: _Line) -> None:
        msg = line.message
        if msg is None:
            return
        uid = self._uid(line)
        stamp = line.timestamp or ""
        message_id = msg.id or ""
        model = msg.model or ""
        usage = self._priced(message_id, msg.usage) if msg.usage is not None else None
        carrier: Message | None = None
        content = msg.content
        blocks = (
            content
            if isinstance(content, list)
            else [_Block(type="text", text=content)]
            if content
            else []  # no content (of a shape read here): nothing shown
        )
        parent = line.parent_uuid or ""
        kind: MessageKind
        for i, block in enumerate(blocks):
            bid = uid if len(blocks) == 1 else f"{uid}:{i}"
            if line.is_api_error_message:
                kind, text = "error", block.text or ""
            elif block.type == "text":
                kind, text = "text", block.text or ""
            elif block.type == "thinking":
                kind, text = "thinking", block.thinking or ""
            elif block.type == "tool_use":
                record = self._tool_use(
                    block,
                    bid=bid,
                    stamp=stamp,
                    parent=parent,
                    message_id=message_id,
                    usage=usage if carrier is None else None,
                    model=model,
                )
                carrier = carrier or record
                continue
            else:
                continue
            record = Message(
                seq=self._base + len(self.messages) + 1,
                id=bid,
                kind=kind,
                role="assistant",
                text=text,
                timestamp=stamp,
                is_error=kind == "error",
                parent_id=parent,
                agent_id=self._agent,
                usage=usage if carrier is None else None,  # on the response's first record
                message_id=message_id,
                model=model,
            )
            self.messages.append(record)
            carrier = carrier or record
        if usage is not None:
            if carrier is None:
                # Nothing shown of this line (no block of a kind read here), but the
                # response was paid for: its usage on a hidden record of its own.
                carrier = Message(
                    id=uid,
                    kind="text",
                    role="assistant",
                    timestamp=stamp,
                    visibility="hidden",
                    parent_id=parent,
                    usage=usage,
                    message_id=message_id,
                    model=model,
                )
                self._add(carrier)
            self._carry(message_id, carrier)
        if line.is_api_error_message:
            self._emit(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="failed",
                    at=epoch_seconds(stamp),
                    source="transcript:api-error",
                )
            )
        elif msg.stop_reason in ("end_turn", "stop_sequence") and msg.model != "<synthetic>":
            self._emit(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="completed",
                    at=epoch_seconds(stamp),
                    source=f"transcript:stop_reason={msg.stop_reason}",
                    background=self._running(),
                )
            )

    def _tool_use(
        self,
        block: _Block,
        *,
        bid: str,
        stamp: str,
        parent: str,
        message_id: str,
        usage: Usage | None,
        model: str,
    ) -> Message:
        at = epoch_seconds(stamp)
        name, tool_use_id, tool_input = block.name or "", block.id or "", block.input or {}
        self.open_tools[tool_use_id] = (name, tool_input)
        if name in ("Agent", "Task") and not self._inline and tool_use_id:
            self._spawns[tool_use_id] = (
                _digest(str(tool_input.get("prompt") or "")),
                str(tool_input.get("description") or "")[:200],
            )
            if len(self._spawns) > SPAWNS_KEPT:
                del self._spawns[next(iter(self._spawns))]
        record = Message(
            seq=self._base + len(self.messages) + 1,
            id=bid,
            kind="tool_call",
            role="assistant",
            timestamp=stamp,
            tool_name=name,
            tool_use_id=tool_use_id,
            tool_input=tool_input,
            presentation=presentation(name),
            parent_id=parent,
            agent_id=self._agent,
            usage=usage,
            message_id=message_id,
            model=model,
        )
        self.messages.append(record)
        self._emit(
            ev.ToolStarted(
                turn_id=self.turn,
                tool_use_id=tool_use_id,
                tool_name=name,
                at=at,
                source="transcript:tool_use",
            )
        )
        if name in DIALOG_TOOLS:
            # The tool's execution *is* the dialog: while it has no result, the
            # question/plan is on screen (docs/providers/claude-code.md §3.3).
            self._emit(
                ev.InputRequested(
                    turn_id=self.turn,
                    kind="question",
                    tool_use_id=tool_use_id,
                    tool_name=name,
                    tool_input=tool_input,
                    at=at,
                    source="transcript:tool_use",
                    dialog=dialog_for(name, tool_use_id, tool_input),
                )
            )
        return record

    def _launched(self, result: msgspec.Raw) -> None:
        try:
            launch = _decode_launch(result)
        except _DECODE_ERRORS:
            return  # another shape: nothing launched
        if not isinstance(launch, _AsyncLaunch):
            return  # a string result (denied, failed): nothing launched
        if launch.agentId and (launch.isAsync or launch.status == "async_launched"):
            self.background[launch.agentId] = None

    def _running(self) -> tuple[str, ...] | None:
        """The turn ends with these agents still at work; ``None`` (keep what is known)
        when the transcript knows of none. The end-of-turn records can be stamped before
        the ``Stop`` hook that lists the same agents, and a turn is finalized once: the
        first signal of its end must already say the work goes on."""
        return tuple(self.background) or None

    def _progress(self, line: _Line) -> None:
        """A ``progress`` record (2.1.x): a Stop hook ran, so the main agent's turn ended
        — in the real files of 2.1.x whose last response's ``stop_reason`` is ``null``
        (written before the API's final event) it is the only end the transcript shows.
        Other progress (a command's output so far, a subagent's records mirrored, an MCP
        call's) is not read: the tool's result and the subagent's own file hold it."""
        data = line.data
        if data is not None and data.type == "hook_progress" and data.hookEvent == "Stop":
            self._emit(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="completed",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:hook_progress(Stop)",
                    background=self._running(),
                )
            )

    def _system(self, line: _Line) -> None:
        at = epoch_seconds(line.timestamp)
        uid = self._uid(line)
        stamp = line.timestamp or ""
        subtype = line.subtype
        if subtype == "turn_duration":
            self._emit(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="completed",
                    at=at,
                    source="transcript:turn_duration",
                    background=self._running(),
                )
            )
        elif subtype in ("compact_boundary", "microcompact_boundary"):
            # microcompact (2.1.x): older tool results cleared from the context.
            text = line.content or ""
            self._add(Message(id=uid, kind="compaction", role="system", text=text, timestamp=stamp))
        elif subtype in ("api_error", "error", "api_refusal"):
            # A request that failed (retried, or given up) or that the API refused: the
            # turn goes on (a retry) or ends with the synthetic error message after it.
            text = (
                line.api_refusal_explanation or line.content or "refused"
                if subtype == "api_refusal"
                else _error_text(line)
            )
            self._add(
                Message(
                    id=uid,
                    kind="error",
                    role="system",
                    text=text,
                    timestamp=stamp,
                    is_error=True,
                    parent_id=line.parent_uuid or "",
                )
            )
        elif (
            subtype in ("local_command", "informational", "model_refusal_fallback", None)
            and line.content
        ):
            # ``None``: a 1.0.x notice with no subtype ("… limit reached, now using …").
            text = line.content
            self._add(Message(id=uid, kind="text", role="system", text=text, timestamp=stamp))


# -- resuming a parse (the history index, ADR 0022) --------------------------------------

RESUME_VERSION = 2
"""Bump when the parse state below, or what the parser makes of a record, changes: a
state of another version makes the file be parsed again from its first byte."""


class ResumeState(msgspec.Struct, gc=False):
    """What ``HistoryParser`` needs to go on from an offset: exactly the parser's fields
    that shape a later record."""

    version: int
    count: int
    session_id: str = ""
    sidechain: bool | None = None
    agent_id: str = ""
    cli_version: str = ""
    turn: str = ""
    cwd: str = ""
    title: str = ""
    title_rank: int = 0
    open_tools: dict[str, str] = {}
    """tool_use_id → tool name of calls with no result yet (a result names its tool)."""
    usage_seen: list[str] = []
    responses: list[Message] = []
    """The records carrying the latest responses' usage (a later line may change it)."""
    side_agents: dict[str, str] = {}
    inline_agents: list[str] = []
    spawns: dict[str, tuple[str, str]] = {}


class _Cwd(msgspec.Struct, gc=False):
    cwd: str = ""


_encode_state = msgspec.json.Encoder().encode
_decode_state = msgspec.json.Decoder(ResumeState).decode
_decode_cwd = msgspec.json.Decoder(_Cwd).decode


class HistoryParser(TranscriptParser):
    """``TranscriptParser`` for the history index: records are taken out as they are
    parsed (``take``) — with an earlier one again when a later line changes the usage it
    carries — the working directory the records name is noted, and the parse state
    round-trips through ``state``/``resumed``.

    ``file_session``: the session the file is named after (``<session>.jsonl``). The CLI
    names a session's file by its id, while the records of a session continued from
    another (1.0.x ``--continue``) begin with copies that carry the old session's id, and
    a file can hold no record naming one at all (only ``queue-operation`` lines): the
    file's name is the session of a main transcript. A subagent's file names its
    parent's session in its records."""

    def __init__(self, file_session: str = "") -> None:
        super().__init__()
        self.cwd = ""
        self.file_session = file_session

    def feed(self, block: memoryview) -> None:
        if not self.cwd:
            self._find_cwd(block)
        super().feed(block)

    def _find_cwd(self, block: memoryview) -> None:
        data = bytes(block)
        at = data.find(b'"cwd":')
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            try:
                self.cwd = _decode_cwd(data[start : len(data) if end < 0 else end]).cwd
            except _DECODE_ERRORS:
                self.cwd = ""
            if self.cwd or end < 0:
                return
            at = data.find(b'"cwd":', end)

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
        # A subagent's file names its parent's session; a main file is named by its own.
        session_id = self.session_id if self.agent_id else self.file_session or self.session_id
        return TranscriptFacts(
            session_id=session_id,
            agent_id=self.agent_id,
            parent_session_id=self.session_id if self.agent_id else "",
            cwd=self.cwd,
            cli_version=self.cli_version,
            title=self.title,
        )

    def state(self) -> bytes:
        return _encode_state(
            ResumeState(
                version=RESUME_VERSION,
                count=self.count,
                session_id=self.session_id,
                sidechain=self.sidechain,
                agent_id=self.agent_id,
                cli_version=self.cli_version,
                turn=self.turn,
                cwd=self.cwd,
                title=self.title,
                title_rank=self._title_rank,
                open_tools={k: name for k, (name, _) in self.open_tools.items()},
                usage_seen=sorted(self._usage_seen),
                responses=list(self._responses.values()),
                side_agents=self._side_agents,
                inline_agents=list(self._inline_agents),
                spawns=self._spawns,
            )
        )

    @classmethod
    def resumed(cls, state: bytes, file_session: str = "") -> HistoryParser | None:
        """A parser that goes on where ``state`` was taken; ``None`` if it cannot."""
        try:
            saved = _decode_state(state)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if saved.version != RESUME_VERSION:
            return None
        parser = cls(file_session)
        parser._base = saved.count
        parser.session_id = saved.session_id
        parser.sidechain = saved.sidechain
        parser.agent_id = saved.agent_id
        parser.cli_version = saved.cli_version
        parser.turn = saved.turn
        parser.cwd = saved.cwd
        parser.title = saved.title
        parser._title_rank = saved.title_rank
        parser.open_tools = {k: (name, {}) for k, name in saved.open_tools.items()}
        parser._usage_seen = set(saved.usage_seen)
        parser._responses = {m.message_id: m for m in saved.responses}
        parser._side_agents = dict(saved.side_agents)
        parser._inline_agents = dict.fromkeys(saved.inline_agents)
        parser._spawns = {k: (v[0], v[1]) for k, v in saved.spawns.items()}
        return parser
