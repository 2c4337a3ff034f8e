"""Claude Code transcript records as this package reads them: the record types known
and not read, one small view of a line declaring only the fields read here (msgspec
skips the rest cheaply), the salvage of a line whose fields have other shapes than the
view expects, and the small functions that turn a view's loose fields (content, usage,
an error note) into canonical values (docs/providers/claude-code.md §4, §9).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, get_args, get_origin

import msgspec

from agentspool.adapters.common.calls import FormReader
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import object_keys
from agentspool.core.seam import PendingDialog, Usage

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
FILE_RECORDS = frozenset({"ai-title", "custom-title", "pr-link", "frame-link"})
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
TASK_ID = re.compile(r"<task-id>([^<]+)</task-id>")
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


class Part(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None


class BlockKind(msgspec.Struct, gc=False):
    """A content block's type, and a text block's text: whether it makes a record."""

    type: str = ""
    text: str | None = None


class Block(BlockKind, gc=False):
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: str | list[Part] | None = None
    is_error: bool | None = None


class ApiUsage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class CountedMessage(msgspec.Struct, gc=False):
    """What counting a response's usage reads of its message."""

    id: str | None = None
    model: str | None = None
    usage: ApiUsage | None = None


class ShownMessage(CountedMessage, gc=False):
    """And what says whether the message makes a record: its content's kinds."""

    content: str | Sequence[BlockKind] | None = None


class ApiMessage(ShownMessage, gc=False):
    role: str = ""
    content: str | list[Block] | None = None
    stop_reason: str | None = None


class Progress(msgspec.Struct, gc=False):
    """``data`` of a ``progress`` record: what made progress (a hook: which event)."""

    type: str = ""
    hookEvent: str = ""  # noqa: N815 - the CLI's field name


class CountedLine(msgspec.Struct, rename="camel", gc=False):
    """What a line says that counting usage reads anywhere in a file: a response's usage
    (all a usage scan reads between a file's head and tail, ``_usage_view``). Its
    content, by far most of its bytes, is skipped unbuilt."""

    type: str = ""
    subtype: str | None = None
    timestamp: str | None = None
    message: CountedMessage | None = None


class ShownLine(CountedLine, rename="camel", gc=False):
    """And its side, its session, and whether it makes a record (the usage view)."""

    message: ShownMessage | None = None
    is_sidechain: bool = False
    is_api_error_message: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    version: str | None = None
    content: str | None = None
    """A system record's text (a conversation record's is in ``message``)."""
    pr_url: str | None = None
    frame_url: str | None = None


class Line(ShownLine, rename="camel", gc=False):
    """Every record type through one view: the CLI writes ``type`` after the payload
    of assistant and attachment records, and a tagged union (as the Codex rollout is
    read) would scan that payload twice, once to find the tag (ADR 0009). Bookkeeping
    records fit this view too; their few shared fields are read and dropped."""

    message: ApiMessage | None = None
    ai_title: str | None = None
    custom_title: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    prompt_id: str | None = None
    is_meta: bool = False
    is_compact_summary: bool = False
    tool_denial_kind: str | None = None
    tool_use_result: msgspec.Raw = msgspec.Raw()
    """Read only behind an ``Agent`` call (``AsyncLaunch``): often large (a Bash result
    repeats its whole output there, an Edit the whole file), so it stays undecoded."""
    data: Progress | None = None
    error: msgspec.Raw = msgspec.Raw()
    """``system:api_error``'s error, of many shapes (``error_text``)."""
    retry_attempt: int | None = None
    max_retries: int | None = None
    api_refusal_explanation: str | None = None
    pr_number: int | None = None
    pr_repository: str | None = None
    title: str | None = None


class AsyncLaunch(msgspec.Struct, gc=False):
    """``toolUseResult`` of an ``Agent`` call: ``{"isAsync": true, "status":
    "async_launched", "agentId": …}`` when the agent runs in the background."""

    isAsync: bool = False  # noqa: N815 - the CLI's field names
    status: str = ""
    agentId: str = ""  # noqa: N815


class ErrorNote(msgspec.Struct, gc=False):
    """What an API error's ``error`` says, in the shapes 2.1.x writes: a message and a
    status, or the API's own error body nested under ``error.error``."""

    message: str | None = None
    status: int | None = None
    error: ErrorNote | None = None
    type: str | None = None


line_decoder = msgspec.json.Decoder(Line)
decode_line = line_decoder.decode
decode_lines = line_decoder.decode_lines
decode_launch = msgspec.json.Decoder(AsyncLaunch | str | None).decode
decode_error = msgspec.json.Decoder(ErrorNote | str | None).decode
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
CONVERSATION = frozenset({"user", "assistant", "system"})


def nested(annotation: Any) -> tuple[str, type[msgspec.Struct]] | None:
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


Field = tuple[str, str, Callable[[Any], Any], tuple[str, type[msgspec.Struct]] | None]
SALVAGE: dict[type[msgspec.Struct], list[Field]] = {}


def salvage_fields(view: type[msgspec.Struct]) -> list[Field]:
    fields = SALVAGE.get(view)
    if fields is None:
        fields = SALVAGE[view] = [
            (
                field.encode_name,
                field.name,
                msgspec.json.Decoder(field.type).decode,
                nested(field.type),
            )
            for field in msgspec.structs.fields(view)
        ]
    return fields


def salvaged(view: type[S], raw: bytes | msgspec.Raw) -> S | None:
    """``raw`` read as ``view`` with the fields that fit it: a field of another shape is
    read as absent (a view of ours in it is salvaged the same way, item by item).
    ``None`` when ``raw`` is no JSON object. Only for a line the strict decode refused:
    it decodes each field on its own."""
    members = object_keys(raw)
    if members is None:
        return None
    kept: dict[str, Any] = {}
    for encode_name, name, decode, nested in salvage_fields(view):
        value = members.get(encode_name)
        if value is None:
            continue
        try:
            kept[name] = decode(value)
        except DECODE_ERRORS:
            if nested is None:
                continue
            how, inner = nested
            if how == "one":
                one = salvaged(inner, value)
                if one is not None:
                    kept[name] = one
            else:
                items = decode_items(value)
                if items is not None:
                    kept[name] = [x for x in (salvaged(inner, i) for i in items) if x]
    return view(**kept)


decode_items_strict = msgspec.json.Decoder(list[msgspec.Raw]).decode


def decode_items(raw: msgspec.Raw) -> list[msgspec.Raw] | None:
    try:
        return decode_items_strict(raw)
    except DECODE_ERRORS:
        return None


def shape_of(members: dict[str, msgspec.Raw]) -> str:
    """``type`` or ``type:subtype`` of a record read as raw members."""
    try:
        kind = msgspec.json.decode(members.get("type", b'""'))
        subtype = msgspec.json.decode(members["subtype"]) if "subtype" in members else None
    except msgspec.DecodeError:
        return ""
    return f"{kind}:{subtype}" if isinstance(subtype, str) else str(kind)


def text_of(content: str | list[Part] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if p.text)


def _question_form(tool_use_id: str, tool_input: dict[str, Any]) -> PendingDialog:
    return question_dialog(tool_use_id, tool_input.get("questions"))


def _plan_form(tool_use_id: str, tool_input: dict[str, Any]) -> PendingDialog:
    return PendingDialog(
        kind="plan_approval", tool_use_id=tool_use_id, prompt=str(tool_input.get("plan", ""))
    )


FORMS: dict[str, FormReader] = {"AskUserQuestion": _question_form, "ExitPlanMode": _plan_form}
"""The tools whose call is a dialog on screen while it runs, each with the dialog its
input makes."""
DIALOG_TOOLS = frozenset(FORMS)


def usage_of(api: ApiUsage, kind: type[Usage] = Usage) -> Usage:
    """The usage of a response as the API wrote it; ``kind``: ``PackedUsage`` for what
    the store keeps (the usage view)."""
    cached = api.cache_read_input_tokens
    return kind(
        input_tokens=api.input_tokens + api.cache_creation_input_tokens + cached,
        output_tokens=api.output_tokens,
        cached_input_tokens=cached,
        cache_write_tokens=api.cache_creation_input_tokens,
    )


def has_tokens(usage: Usage) -> bool:
    return bool(usage.input_tokens or usage.output_tokens)


def minus(usage: Usage, other: Usage) -> Usage:
    """``usage - other``, kind by kind (what replacing ``other`` by ``usage`` adds)."""
    return Usage(
        input_tokens=usage.input_tokens - other.input_tokens,
        output_tokens=usage.output_tokens - other.output_tokens,
        cached_input_tokens=usage.cached_input_tokens - other.cached_input_tokens,
        reasoning_tokens=usage.reasoning_tokens - other.reasoning_tokens,
        cache_write_tokens=usage.cache_write_tokens - other.cache_write_tokens,
    )


def error_text(line: Line) -> str:
    """An API error record's text: the error's message (or the API's error body's, or its
    type), its HTTP status, and the retry it led to."""
    try:
        note = decode_error(line.error) if line.error else None
    except DECODE_ERRORS:
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


def digest(text: str) -> str:
    """A prompt as the parse state keeps it to match it later: its digest (a Task prompt
    can be pages long, and 2.1.x files keep every call's until the state drops it)."""
    if not text:
        return ""
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every command)

    return hashlib.blake2b(text.encode(errors="replace"), digest_size=12).hexdigest()


def prompt_text(message: ApiMessage | None) -> str:
    """A user record's typed text (its string content, or its text blocks)."""
    if message is None:
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    if not content:
        return ""
    return "\n".join(b.text for b in content if b.type == "text" and b.text)
