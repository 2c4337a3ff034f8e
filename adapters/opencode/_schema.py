"""The shapes OpenCode 1.18.33 writes, field by field (ADR 0014).

Every field the pinned CLI was seen writing (tests/live/captures/opencode/,
docs/providers/opencode.md), plus what the parsers read. A row of the session log is
checked at three levels: the row's type (``message.updated.1``), the info or part inside
it (``message:<role>``, ``part:<type>``, ``session``), and for the plugin spool each
event's properties. A type or field outside these sets is schema drift: counted in
``Chat.drift``, never fatal.
"""

from __future__ import annotations

_PART = frozenset({"id", "messageID", "sessionID", "type"})

LOG_FIELDS: dict[str, frozenset[str]] = {
    # The log's rows: the envelope around an info or a part.
    "session.created.1": frozenset({"sessionID", "info"}),
    "session.updated.1": frozenset({"sessionID", "info"}),
    "message.updated.1": frozenset({"sessionID", "info"}),
    "message.part.updated.1": frozenset({"sessionID", "part", "time"}),
    "message.removed.1": frozenset({"sessionID", "messageID"}),
    "message.part.removed.1": frozenset({"sessionID", "messageID", "partID"}),
    # What they carry.
    "session": frozenset(
        {
            "id",
            "slug",
            "projectID",
            "workspaceID",
            "parentID",
            "directory",
            "path",
            "title",
            "version",
            "agent",
            "model",
            "permission",
            "summary",
            "cost",
            "tokens",
            "revert",
            "share",
            "time",
        }
    ),
    "message:user": frozenset(
        {"id", "sessionID", "role", "time", "agent", "model", "summary", "system", "tools"}
    ),
    "message:assistant": frozenset(
        {
            "id",
            "sessionID",
            "role",
            "parentID",
            "mode",
            "agent",
            "path",
            "cost",
            "tokens",
            "modelID",
            "providerID",
            "time",
            "finish",
            "error",
            "summary",
        }
    ),
    "part:text": _PART | {"text", "time", "synthetic", "ignored", "metadata"},
    "part:reasoning": _PART | {"text", "time", "metadata"},
    "part:tool": _PART | {"tool", "callID", "state", "metadata"},
    "part:step-start": _PART | {"snapshot"},
    "part:step-finish": _PART | {"reason", "snapshot", "tokens", "cost"},
    "part:patch": _PART | {"hash", "files"},
    "part:snapshot": _PART | {"snapshot"},
    "part:compaction": _PART | {"auto", "overflow"},
    "part:file": _PART | {"mime", "filename", "url", "source"},
    "part:agent": _PART | {"name", "source"},
    "part:subtask": _PART | {"prompt", "description", "agent", "model", "command"},
    "part:retry": _PART | {"attempt", "error", "time"},
}

# The plugin spool (settings-templates/opencode-plugin.js): its own start record, and the
# bus events it keeps, named with ``_`` for ``.``.
SPOOL_FIELDS: dict[str, frozenset[str]] = {
    "start": frozenset({"pid", "start", "directory", "worktree", "serverUrl", "database"}),
    "session_created": frozenset({"sessionID", "info"}),
    "session_status": frozenset({"sessionID", "status"}),
    "session_idle": frozenset({"sessionID"}),
    "session_error": frozenset({"sessionID", "error"}),
    "session_compacted": frozenset({"sessionID"}),
    "permission_asked": frozenset(
        {"id", "sessionID", "permission", "patterns", "metadata", "always", "tool"}
    ),
    "permission_replied": frozenset({"sessionID", "requestID", "reply"}),
    "question_asked": frozenset({"id", "sessionID", "questions", "tool"}),
    "question_replied": frozenset({"sessionID", "requestID", "answers"}),
    "question_rejected": frozenset({"sessionID", "requestID"}),
}

PRESENTATION = {
    "bash": "shell",
    "edit": "edit",
    "write": "edit",
    "patch": "edit",
    "multiedit": "edit",
    "apply_patch": "edit",
    "read": "read",
    "list": "search",
    "glob": "search",
    "grep": "search",
    "codesearch": "search",
    "webfetch": "web",
    "websearch": "web",
    "task": "agent",
    "question": "question",
    "plan_enter": "plan",
    "plan_exit": "plan",
    "todowrite": "todo",
    "todoread": "todo",
}


def presentation(tool: str) -> str:
    """A tool's presentation class; an MCP tool (``<server>_<tool>``) is ``mcp``."""
    found = PRESENTATION.get(tool)
    if found is not None:
        return found
    return "mcp" if "_" in tool else "other"
