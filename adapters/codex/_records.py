"""Codex rollout records as this package reads them: one view per record type, each
declaring only the payload fields read (msgspec skips the rest cheaply), the decoders of
a line, of a block of lines and of the rarer second looks, and the small functions that
turn a view's loose fields (content parts, call arguments, usage) into canonical values.

Grammar: docs/providers/codex.md §6 (the envelope) and §10 (the older releases'
records). The parser that folds these records into messages and events is
``_rollout.RolloutParser``.
"""

from __future__ import annotations

import re
from typing import Any, Union

import msgspec

from agentspool.adapters.codex._schema import IGNORED
from agentspool.adapters.common.dialogs import question_dialog
from agentspool.core.seam import PendingDialog, Usage

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
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "reasoning_text", "summary_text"})


def presentation(name: str, namespace: str = "") -> str:
    if namespace.startswith("mcp") or name.startswith("mcp__"):
        return "mcp"
    return PRESENTATION.get(name, "other")


# -- views: only the fields read here ------------------------------------------------


class ItemMetadata(msgspec.Struct, gc=False):
    compaction_output: bool = False


class SessionMeta(msgspec.Struct, gc=False):
    id: str = ""
    cwd: str = ""
    session_id: str = ""
    parent_thread_id: str | None = None
    forked_from_id: str | None = None
    source: Any = None
    thread_source: str | None = None
    agent_nickname: str | None = None
    cli_version: str = ""


class Part(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None


class Passthrough(msgspec.Struct, gc=False):
    turn_id: str = ""
    content_item_kinds: list[str] = []


class ResponseItem(msgspec.Struct, gc=False):
    type: str = ""
    id: str | None = None
    role: str = ""
    content: list[Part] | str | None = None
    name: str = ""
    namespace: str | None = None
    arguments: Any = None
    """A JSON string as Codex writes it; an object where other writers put one."""
    input: Any = None
    call_id: str = ""
    output: Any = None
    summary: list[Part] | str | None = None
    """``summary_text`` parts of a reasoning item (a caption string in a peer's call)."""
    internal_chat_message_metadata_passthrough: Passthrough | None = None


class RichItem(msgspec.Struct, gc=False):
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


class RichItemLine(msgspec.Struct, gc=False):
    payload: RichItem = msgspec.field(default_factory=RichItem)


class Agent(msgspec.Struct, gc=False):
    thread_id: str = ""
    agent_nickname: str | None = None


class Item(msgspec.Struct, gc=False):
    """An ``item_completed`` item, any type. Only a ``spawn_agent`` call is read, so the
    other fields are untyped here: another item type's ``tool`` or ``prompt`` of any
    shape must not make its line unreadable. ``SpawnAgent`` checks the one read."""

    type: Any = ""
    id: Any = ""
    tool: Any = ""
    receiver_thread_ids: Any = ()
    receiver_agents: Any = ()
    prompt: Any = None


class SpawnAgent(msgspec.Struct, gc=False):
    id: str = ""
    receiver_thread_ids: list[str] = []
    receiver_agents: list[Agent] = []
    prompt: str | None = None


class TokenUsage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0


class TokenInfo(msgspec.Struct, gc=False):
    """``token_count.info``: the thread's running total and the last response's usage
    (either may be missing in older releases and other writers), the model (0.14x)."""

    total_token_usage: TokenUsage | None = None
    last_token_usage: TokenUsage | None = None
    model: str | None = None


class EventMsg(msgspec.Struct, gc=False):
    type: str = ""
    turn_id: str = ""
    reason: str = ""
    error: Any = None
    """``{message, codex_error_info}`` (task_complete); ``{kind, message}`` (error)."""
    item: Item | None = None
    message: Any = None
    """The text of user_message and agent_message (and of error in 0.169's shape)."""
    text: Any = None
    """The text of agent_reasoning, agent_reasoning_raw_content."""
    info: TokenInfo | None = None


class RichEvent(msgspec.Struct, gc=False):
    """The fields of the rare event kinds, read from the line again (see ``RichItem``)."""

    call_id: str = ""
    name: str = ""
    input: Any = None
    new_thread_id: str | None = None
    new_agent_nickname: str | None = None
    prompt: str | None = None
    review_output: Any = None


class RichEventLine(msgspec.Struct, gc=False):
    payload: RichEvent = msgspec.field(default_factory=RichEvent)


class UsageRecord(msgspec.Struct, gc=False):
    turn_id: str = ""
    response_id: str = ""
    usage: TokenUsage | None = None


class Compacted(msgspec.Struct, gc=False):
    message: str | None = None


class Answer(msgspec.Struct, gc=False):
    question: str = ""
    answer: Any = None


class Retained(msgspec.Struct, gc=False):
    type: str = ""
    turn_id: str = ""
    call_id: str = ""
    questions: list[Answer] = []


class Line(msgspec.Struct, tag_field="type", gc=False):
    """A rollout line ``{timestamp, ordinal, type, payload}``: one subclass per
    record type, tagged by ``type``, so one decode reads a line with its payload's view
    (msgspec skips what a view does not declare, cheaply)."""

    timestamp: str = ""
    ordinal: int = -1


class SessionMetaLine(Line, tag="session_meta"):
    payload: SessionMeta = msgspec.field(default_factory=SessionMeta)


class ResponseItemLine(Line, tag="response_item"):
    payload: ResponseItem = msgspec.field(default_factory=ResponseItem)
    metadata: ItemMetadata | None = None


class EventLine(Line, tag="event_msg"):
    payload: EventMsg = msgspec.field(default_factory=EventMsg)


class UsageLine(Line, tag="token_usage_record"):
    payload: UsageRecord = msgspec.field(default_factory=UsageRecord)


class CompactedLine(Line, tag="compacted"):
    payload: Compacted = msgspec.field(default_factory=Compacted)


class RetainedLine(Line, tag="retained_context"):
    payload: Retained = msgspec.field(default_factory=Retained)


class TurnContext(msgspec.Struct, gc=False):
    model: str = ""


class TurnContextLine(msgspec.Struct, tag_field="type", tag="turn_context"):
    """The per-turn settings snapshot: only the model is read (it prices the turn's
    usage)."""

    payload: TurnContext = msgspec.field(default_factory=TurnContext)


class WorldStateLine(msgspec.Struct, tag_field="type", tag="world_state"):
    """Bookkeeping, nothing read."""


class AgentMetadataLine(msgspec.Struct, tag_field="type", tag="inter_agent_communication_metadata"):
    """Bookkeeping (0.146), nothing read."""


class AnyLine(msgspec.Struct, gc=False):
    """Second look at a line the typed decode refused: an unknown type, or a bad one."""

    type: str = ""
    payload: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    """Empty (``not payload``) when the line has none."""


class LegacyLine(msgspec.Struct, gc=False):
    """A line of the pre-envelope format (no ``type``): the session header first (the
    thread's ``id``, its ``timestamp``), then ``record_type`` state snapshots. A bare
    response item (``type`` its own kind, no ``payload``) is read as one."""

    id: Any = ""
    timestamp: Any = ""
    record_type: Any = None


LINE_TYPES = (
    SessionMetaLine,
    ResponseItemLine,
    EventLine,
    UsageLine,
    CompactedLine,
    RetainedLine,
    TurnContextLine,
    WorldStateLine,
    AgentMetadataLine,
)
line_decoder = msgspec.json.Decoder(Union[LINE_TYPES])  # noqa: UP007
decode_line = line_decoder.decode
decode_lines = line_decoder.decode_lines
decode_any_line = msgspec.json.Decoder(AnyLine).decode
decode_legacy_line = msgspec.json.Decoder(LegacyLine).decode
decode_bare_item = msgspec.json.Decoder(ResponseItem).decode
decode_rich_item = msgspec.json.Decoder(RichItemLine).decode
decode_rich_bare_item = msgspec.json.Decoder(RichItem).decode
decode_rich_event = msgspec.json.Decoder(RichEventLine).decode
KNOWN_TYPES = frozenset(cls.__struct_config__.tag for cls in LINE_TYPES)

DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
BARE_ITEMS = frozenset({"message", "reasoning", "web_search_call", *CALLS, *OUTPUTS})
"""Response item kinds: a line with one of them as its ``type`` and no ``payload`` is a
bare item of the pre-envelope format."""
COPIES_KEPT = 64
"""Texts remembered per channel for their echo (an echo follows within the turn)."""


def injected(text: str) -> bool:
    return text.startswith(INJECTED_HEADINGS)


def part_texts(content: list[Part] | str | None) -> list[str]:
    if isinstance(content, list):
        return [p.text for p in content if p.text and p.type in TEXT_PARTS]
    return []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def thread_spawn(source: Any) -> dict[str, Any]:
    """``source.subagent.thread_spawn`` of a sub-agent's session_meta (0.200)."""
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return spawn if isinstance(spawn, dict) else {}


def tool_names(tools: Any) -> str:
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


def error_text(error: Any) -> str | None:
    """An error object's message (``{message, …}``), ``None`` for no error."""
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or "")
    return str(error)


def usage_of(u: TokenUsage) -> Usage:
    return Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cached_input_tokens=u.cached_input_tokens,
        reasoning_tokens=u.reasoning_output_tokens,
        cache_write_tokens=u.cache_write_input_tokens,
    )


def text_of(content: list[Part] | str | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if len(content) == 1:  # nearly always
        part = content[0]
        return part.text if part.text and part.type in TEXT_PARTS else ""
    return "\n".join(p.text for p in content if p.text and p.type in TEXT_PARTS)


def output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            str(p.get("text", "")) for p in output if isinstance(p, dict) and p.get("text")
        )
    if isinstance(output, dict):
        return str(output.get("content", "") or output.get("text", ""))
    return "" if output is None else str(output)


_decode_json = msgspec.json.Decoder().decode


def arguments_of(raw: Any) -> dict[str, Any]:
    """A call's JSON ``arguments`` string as a dict (an object as it is); anything else
    kept under ``input``."""
    if isinstance(raw, str):  # what Codex writes: tested first
        if not raw:
            return {}
        try:
            value = _decode_json(raw)
        except DECODE_ERRORS:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    if isinstance(raw, dict):
        return raw
    return {"input": raw} if raw else {}


def dialog_for(tool_use_id: str, arguments: dict[str, Any]) -> PendingDialog:
    """``request_user_input``'s ``questions[{id, header, question, options[{label,
    description}]}]`` as the dialog the operator sees."""
    return question_dialog(tool_use_id, arguments.get("questions"))
