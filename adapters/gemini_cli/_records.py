"""Gemini CLI chat records as this package reads them: the tool names of 0.61.0 read
here, one view of a line declaring only the fields read (msgspec skips the rest
cheaply), the small functions that turn a record's loose parts (content, function
calls and responses, thoughts) into text, and the quick looks at a chat file that need
no parse (its session id, a subagent's progress). Grammar:
docs/providers/gemini-cli.md §4; the parser that folds these records is
``_chat.ChatParser``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agentspool.adapters.common.dialogs import question_dialog
from agentspool.adapters.common.drift import object_keys
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core.seam import PendingDialog
from agentspool.spool.files import open_regular

SHELL_TOOL = "run_shell_command"
SUBAGENT_TOOL = "invoke_agent"
SUBAGENT_DONE = "complete_task"
"""The call a subagent ends its work with (``result: {response}``)."""
QUESTION_TOOL = "ask_user"
CANCELLED = "Request cancelled."
CONTEXT_PREFIX = "<session_context>"
MESSAGE_TYPES = ("user", "gemini", "model", "info", "error", "warning")
"""Message record types: ``model`` is read as ``gemini`` (``_schema``)."""
# The CLI's own notice names the version running: "Gemini CLI update available! 0.24.5
# → 0.25.1" (seen in sessions of 0.23 and 0.24); a chat file names no version else.
UPDATE_NOTICE = re.compile(r"Gemini CLI update available! (\S+) \u2192 ")
PRESENTATION = {
    SHELL_TOOL: "shell",
    "replace": "edit",
    "write_file": "edit",
    "read_file": "read",
    "read_many_files": "read",
    "list_directory": "read",
    "glob": "search",
    "grep_search": "search",
    "search_file_content": "search",
    "google_web_search": "web",
    "web_fetch": "web",
    "ask_user": "question",
    "enter_plan_mode": "plan",
    "exit_plan_mode": "plan",
    "write_todos": "todo",
    SUBAGENT_TOOL: "agent",
}
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)


def presentation(name: str) -> str:
    if "__" in name and not name.startswith(tuple(PRESENTATION)):
        return "mcp"  # an MCP server's tool: <server>__<tool>
    return PRESENTATION.get(name, "other")


def dialog_for(tool_use_id: str, tool_input: dict[str, Any]) -> PendingDialog:
    """``ask_user``'s ``questions[{question, header, type, options[{label, description}],
    multiSelect}]`` as the dialog the operator sees."""
    return question_dialog(tool_use_id, tool_input.get("questions"))


# -- views: only the fields read here ------------------------------------------------


class Tokens(msgspec.Struct, gc=False):
    input: int = 0
    output: int = 0
    cached: int = 0
    thoughts: int = 0
    tool: int = 0


class ToolCall(msgspec.Struct, gc=False):
    id: str = ""
    name: str = ""
    args: Any = None
    result: Any = None
    status: str = ""
    timestamp: str = ""
    # An invoke_agent call's subagent (its session id); optional in type too, so that a
    # null from another release loses the link, not the whole record.
    agentId: str | None = None  # noqa: N815


class Record(msgspec.Struct, gc=False):
    """A message record (``type`` and ``id`` set), or a line of another shape."""

    id: str = ""
    timestamp: str = ""
    type: str = ""
    content: Any = None
    parts: Any = None
    """A ``model`` record's API parts, where a ``gemini`` record has ``content``."""
    toolCalls: list[ToolCall] | None = None  # noqa: N815 - the CLI's own key
    thoughts: Any = None
    tokens: Tokens | None = None
    model: str | None = None


class Set(msgspec.Struct, gc=False):
    messages: list[Record] | None = None
    sessionId: str | None = None  # noqa: N815


class Line(Record, gc=False):
    sessionId: str = ""  # noqa: N815 - the metadata line
    startTime: str = ""  # noqa: N815
    kind: str | None = None
    set: Set | None = msgspec.field(default=None, name="$set")
    rewind_to: str | None = msgspec.field(default=None, name="$rewindTo")


decode_line = msgspec.json.Decoder(Line).decode


def text_parts(parts: list[Any]) -> list[str]:
    """The text parts; a bare string in the list is a text part too (the API's
    ``PartListUnion``: a fixture of the older document holds ``content: ["…"]``)."""
    return [
        p if isinstance(p, str) else p["text"]
        for p in parts
        if isinstance(p, str)
        or (isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"))
    ]


def parts_of(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"text": content}]
    return content if isinstance(content, list) else []


def calls_in(parts: list[Any], key: str) -> list[dict[str, Any]]:
    return [p[key] for p in parts if isinstance(p, dict) and isinstance(p.get(key), dict)]


def result_text(response: Any) -> str:
    """A function response's ``{"output": …}`` / ``{"error": …}`` as text."""
    if isinstance(response, dict):
        for key in ("output", "error", "llmContent"):
            value = response.get(key)
            if isinstance(value, str):
                return value
        return msgspec.json.encode(response).decode()
    return "" if response is None else str(response)


def entry_result(result: Any) -> tuple[str, bool]:
    """A tool call's ``result`` (function response parts): its text, and whether it is an
    error. A result of another shape (a fixture's ``{"content": …}``, a string) is shown
    as it is."""
    parts = result if isinstance(result, list) else [result]
    for response in calls_in(parts, "functionResponse"):
        body = response.get("response")
        return result_text(body), isinstance(body, dict) and "error" in body
    if isinstance(result, (dict, str)):
        return result_text(result), False
    return "", False


def thought_text(thought: Any) -> str:
    if isinstance(thought, dict):
        subject, description = thought.get("subject"), thought.get("description")
        return "\n".join(str(s) for s in (subject, description) if s)
    return thought if isinstance(thought, str) else ""


def member_keys(raw: bytes, key: str) -> list[str]:
    outer = object_keys(raw) or {}
    inner = object_keys(outer[key]) if key in outer else None
    return list(inner or ())


def first_tool_call_keys(raw: bytes) -> list[str]:
    outer = object_keys(raw) or {}
    if "toolCalls" not in outer:
        return []
    try:
        calls = msgspec.json.decode(outer["toolCalls"], type=list[dict[str, msgspec.Raw]])
    except DECODE_ERRORS:
        return []
    return list(calls[0]) if calls else []


class Metadata(msgspec.Struct, gc=False):
    sessionId: str = ""  # noqa: N815 - the CLI's own keys
    startTime: str = ""  # noqa: N815
    kind: str = ""
    type: str = ""


decode_metadata = msgspec.json.Decoder(Metadata).decode


def session_id_of(path: str) -> str:
    """The session id a chat file's metadata line names; ``""`` if the file is not one
    (its first line is not ``{sessionId, startTime, kind, …}``: another CLI's JSONL can
    carry a ``sessionId`` too, in a record with a ``type``)."""
    try:
        with open_regular(path) as fh:
            first = fh.readline(1 << 16)
        meta = decode_metadata(first)
    except (OSError, *DECODE_ERRORS):
        return ""
    if meta.type or not (meta.startTime and meta.kind):
        return ""
    return meta.sessionId


def subagent_progress(path: str) -> tuple[list[float], bool]:
    """A subagent's chat file, as far as ``lifecycle_caller`` needs it: when each model
    answer was recorded (epoch seconds; the record is written when the answer arrives,
    before its calls run), and whether the subagent finished (its ``complete_task``
    call completed). ``([], False)`` for a file that cannot be read."""
    answers: list[float] = []
    finished = False
    try:
        with open_regular(path) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return [], False
    for raw in lines:
        try:
            line = decode_line(raw)
        except DECODE_ERRORS:
            continue
        if line.type != "gemini":
            continue
        answers.append(epoch_seconds(line.timestamp))
        finished = finished or any(
            c.name == SUBAGENT_DONE and c.status == "success" for c in line.toolCalls or ()
        )
    return answers, finished
