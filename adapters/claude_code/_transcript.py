"""Claude Code transcript (``~/.claude/projects/<slug>/<session>.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: docs/providers/claude-code.md §4. One JSONL line per record; one line per
content block of an API message (all sharing ``message.id``). Every line is decoded
through one small view that declares only the fields read here (msgspec skips the rest
cheaply), a block of lines in one call (ADR 0009). A line that fails to decode is
counted (``corrupt``) and skipped, a record type not known here is counted
(``unknown``), a torn last line is left for the next read. ``TranscriptParser.feed``
takes appended lines only, so a re-read costs what was appended, not the file.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agentspool.adapters.claude_code._schema import TRANSCRIPT_FIELDS
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import DriftCounter, object_keys
from agentspool.adapters.common.jsonl import split_lines
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, PendingDialog, TranscriptFacts, Usage

# Records the CLI writes for its own bookkeeping; never conversation, never shown.
BOOKKEEPING = frozenset(
    {
        "queue-operation",
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
        "summary",
        "custom-title",
        "tag",
        "agent-name",
    }
)
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


class _AnyLine(msgspec.Struct, rename="camel", gc=False):
    """Second look at a line that does not fit ``_Line``: a record type not known here
    (counted ``unknown``) or a bookkeeping record (skipped) whose fields have other
    shapes, or a damaged conversation record (counted ``corrupt``)."""

    type: str = ""
    is_sidechain: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    timestamp: str | None = None


class _AsyncLaunch(msgspec.Struct, gc=False):
    """``toolUseResult`` of an ``Agent`` call: ``{"isAsync": true, "status":
    "async_launched", "agentId": …}`` when the agent runs in the background."""

    isAsync: bool = False  # noqa: N815 - the CLI's field names
    status: str = ""
    agentId: str = ""  # noqa: N815


_line_decoder = msgspec.json.Decoder(_Line)
_decode_line = _line_decoder.decode
_decode_lines = _line_decoder.decode_lines
_decode_any_line = msgspec.json.Decoder(_AnyLine).decode
_decode_launch = msgspec.json.Decoder(_AsyncLaunch | str | None).decode
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
_CONVERSATION = frozenset({"user", "assistant", "system"})


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
        self.open_tools: dict[str, tuple[str, dict[str, Any]]] = {}
        self.background: dict[str, None] = {}
        """Background agents launched and not yet reported back (insertion-ordered)."""
        self._usage_seen: set[str] = set()
        self._unchecked: list[str] = []
        """Shapes met for the first time in the block being read: their fields are
        checked once it is read (a decoded line keeps no bytes; ADR 0014)."""

    def feed(self, block: memoryview) -> None:
        """A block of complete lines (what ``JsonlFollower`` hands on), decoded in one
        call. A block holding a line the decode refuses (corrupt, torn, fields of
        another shape) is read again line by line, so that line alone is counted and
        skipped."""
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
            self._misfit(raw)
            return
        except (msgspec.DecodeError, UnicodeDecodeError):
            self.corrupt += 1
            return
        self._dispatch(line)
        if self._unchecked:
            self._check_fields(raw)

    def _dispatch(self, line: _Line) -> None:
        kind = line.type
        if kind in BOOKKEEPING or line.subtype == "stop_hook_summary":
            return  # one summary per turn in the TUI: nothing read, no say on the identity
        if (line.is_sidechain is not self.sidechain or not self.session_id) and not self._enter(
            line
        ):
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
        else:
            self.unknown += 1

    def _misfit(self, raw: bytes) -> None:
        """A JSON line that does not fit ``_Line``: a conversation record is corrupt;
        a bookkeeping record or one of a type not known here is taken as any line of
        theirs (their fields are not read, whatever their shape)."""
        try:
            line = _decode_any_line(raw)
        except _DECODE_ERRORS:
            self.corrupt += 1  # not even an object with a string type
            return
        if line.type in _CONVERSATION:
            self.corrupt += 1
        elif line.type not in BOOKKEEPING and self._enter(line):
            self.unknown += 1
            self.drift.unknown_type(line.type)

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

    def _enter(self, line: _Line | _AnyLine) -> bool:
        """What every conversation record does first; ``False``: not this file's.
        Nothing to do once the side and the session are known and the record is of the
        same side, so ``_dispatch`` calls it only otherwise."""
        if self.sidechain is None:
            # A subagent's own file (`<session>/subagents/agent-<id>.jsonl`) holds only
            # sidechain records: it is read as that agent's conversation.
            self.sidechain = line.is_sidechain
            self.agent_id = line.agent_id or "" if line.is_sidechain else ""
        if line.is_sidechain != self.sidechain:
            return False  # 2.1.328 keeps subagent records out of the main file; older CLIs did
        if not self.session_id and line.session_id:
            self.session_id = line.session_id
            self.cwd = getattr(line, "cwd", None) or ""
            self.events.append(
                ev.SessionStarted(
                    epoch=line.session_id,
                    how="transcript",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:first-record",
                )
            )
        return True

    def _other_side(self, line: _Line) -> None:
        """A response on the other side of this file: a subagent's, which CLIs before
        the subagent files (``<session>/subagents/``) wrote into the main file. It is not
        this conversation, but it was paid for: its usage is kept on one hidden record
        per response, so usage counted from the records holds it too (ADR 0025)."""
        msg = line.message
        if msg is None or msg.usage is None or not msg.id or msg.id in self._usage_seen:
            return
        self._usage_seen.add(msg.id)
        usage = usage_of(msg.usage)
        self.usage.add(usage)
        self._add(
            Message(
                id=self._uid(line),
                kind="text",
                role="assistant",
                timestamp=line.timestamp or "",
                visibility="hidden",
                parent_id=line.parent_uuid or "",
                agent_id=line.agent_id or "",
                usage=usage,
                message_id=msg.id,
                model=msg.model or "",
            )
        )

    def _add(self, message: Message) -> None:
        """Appends with the next ``seq`` (the hot handlers build their message with it)."""
        message.seq = self._base + len(self.messages) + 1
        if self.agent_id:
            message.agent_id = self.agent_id
        self.messages.append(message)

    def _uid(self, line: _Line) -> str:
        """The record's uuid; for one without, an id from its place in the stream (as
        stable as ``seq`` across re-reads)."""
        return line.uuid or f"line-{self._base + len(self.messages)}"

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
                    if name in ("Agent", "Task"):
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
                            agent_id=self.agent_id,
                        )
                    )
                    self.events.append(
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
            self.events.append(
                ev.TurnStopped(
                    turn_id=prompt_id or self.turn,
                    outcome="interrupted",
                    at=at,
                    source="transcript:interrupt",
                )
            )
            return
        if text.startswith(TASK_NOTIFICATION):
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
        if prompt_id and not hidden and not local_command:
            self.turn = prompt_id
            self.events.append(
                ev.TurnStarted(turn_id=prompt_id, at=at, source="transcript:user-prompt")
            )

    def _assistant(self, line: _Line) -> None:
        msg = line.message
        if msg is None:
            return
        uid = self._uid(line)
        stamp = line.timestamp or ""
        message_id = msg.id or ""
        model = msg.model or ""
        usage = None
        if msg.usage is not None and message_id and message_id not in self._usage_seen:
            # One count per API message: every content-block line repeats the final usage.
            self._usage_seen.add(message_id)
            usage = usage_of(msg.usage)
            self.usage.add(usage)
        blocks = (
            msg.content
            if isinstance(msg.content, list)
            else [_Block(type="text", text=msg.content or "")]
        )
        parent = line.parent_uuid or ""
        kind: MessageKind
        for i, block in enumerate(blocks):
            bid = uid if len(blocks) == 1 else f"{uid}:{i}"
            block_usage, usage = usage, None  # on the message's first block only
            if line.is_api_error_message:
                kind, text = "error", block.text or ""
            elif block.type == "text":
                kind, text = "text", block.text or ""
            elif block.type == "thinking":
                kind, text = "thinking", block.thinking or ""
            elif block.type == "tool_use":
                self._tool_use(
                    block,
                    bid=bid,
                    stamp=stamp,
                    parent=parent,
                    message_id=message_id,
                    usage=block_usage,
                    model=model,
                )
                continue
            else:
                continue
            self.messages.append(
                Message(
                    seq=self._base + len(self.messages) + 1,
                    id=bid,
                    kind=kind,
                    role="assistant",
                    text=text,
                    timestamp=stamp,
                    is_error=kind == "error",
                    parent_id=parent,
                    agent_id=self.agent_id,
                    usage=block_usage,
                    message_id=message_id,
                    model=model,
                )
            )
        if line.is_api_error_message:
            self.events.append(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="failed",
                    at=epoch_seconds(stamp),
                    source="transcript:api-error",
                )
            )
        elif msg.stop_reason in ("end_turn", "stop_sequence") and msg.model != "<synthetic>":
            self.events.append(
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
    ) -> None:
        at = epoch_seconds(stamp)
        name, tool_use_id, tool_input = block.name or "", block.id or "", block.input or {}
        self.open_tools[tool_use_id] = (name, tool_input)
        self.messages.append(
            Message(
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
                agent_id=self.agent_id,
                usage=usage,
                message_id=message_id,
                model=model,
            )
        )
        self.events.append(
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
            self.events.append(
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

    def _system(self, line: _Line) -> None:
        at = epoch_seconds(line.timestamp)
        uid = self._uid(line)
        if line.subtype == "turn_duration":
            self.events.append(
                ev.TurnStopped(
                    turn_id=self.turn,
                    outcome="completed",
                    at=at,
                    source="transcript:turn_duration",
                    background=self._running(),
                )
            )
        elif line.subtype == "compact_boundary":
            self._add(
                Message(
                    id=uid,
                    kind="compaction",
                    role="system",
                    text=line.content or "",
                    timestamp=line.timestamp or "",
                )
            )
        elif line.subtype in ("local_command", "informational") and line.content:
            self._add(
                Message(
                    id=uid,
                    kind="text",
                    role="system",
                    text=line.content,
                    timestamp=line.timestamp or "",
                )
            )


# -- resuming a parse (the history index, ADR 0022) --------------------------------------

RESUME_VERSION = 1
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
    open_tools: dict[str, str] = {}
    """tool_use_id → tool name of calls with no result yet (a result names its tool)."""
    usage_seen: list[str] = []


class _Cwd(msgspec.Struct, gc=False):
    cwd: str = ""


_encode_state = msgspec.json.Encoder().encode
_decode_state = msgspec.json.Decoder(ResumeState).decode
_decode_cwd = msgspec.json.Decoder(_Cwd).decode


class HistoryParser(TranscriptParser):
    """``TranscriptParser`` for the history index: records are taken out as they are
    parsed (``take``), the working directory the records name is noted, and the parse
    state round-trips through ``state``/``resumed``."""

    def __init__(self) -> None:
        super().__init__()
        self.cwd = ""

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
        taken = self.messages
        self._base += len(taken)
        self.messages = []
        return taken

    def facts(self) -> TranscriptFacts:
        return TranscriptFacts(
            session_id=self.session_id,
            agent_id=self.agent_id,
            parent_session_id=self.session_id if self.agent_id else "",
            cwd=self.cwd,
            cli_version=self.cli_version,
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
                open_tools={k: name for k, (name, _) in self.open_tools.items()},
                usage_seen=sorted(self._usage_seen),
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
        parser = cls()
        parser._base = saved.count
        parser.session_id = saved.session_id
        parser.sidechain = saved.sidechain
        parser.agent_id = saved.agent_id
        parser.cli_version = saved.cli_version
        parser.turn = saved.turn
        parser.cwd = saved.cwd
        parser.open_tools = {k: (name, {}) for k, name in saved.open_tools.items()}
        parser._usage_seen = set(saved.usage_seen)
        return parser
