"""The record shapes Gemini CLI 0.61.0 writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every field the pinned CLI was seen
writing (tests/live/captures/gemini-cli/, docs/providers/gemini-cli.md), plus the few its
chat record types name that no capture happened to hold (``displayContent``,
``directories``, ``summary``, ``memoryScratchpad``). A field or a record shape outside
these sets is schema drift: counted in ``Chat.drift``, never fatal.
"""

from __future__ import annotations

_MESSAGE = frozenset({"id", "timestamp", "type", "content", "displayContent"})
_METADATA = frozenset(
    {"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories"}
)

# Chat-file shapes: the metadata line, ``$set`` and ``$rewindTo`` lines, and one shape per
# message ``type``; ``$set`` members are named ``$set.<key>``, a tool call's
# ``toolCalls.<key>``.
CHAT_FIELDS: dict[str, frozenset[str]] = {
    "metadata": _METADATA | {"summary", "memoryScratchpad"},
    "$set": frozenset(
        {
            "$set",
            "$set.lastUpdated",
            "$set.messages",
            "$set.sessionId",
            "$set.summary",
            "$set.directories",
            "$set.memoryScratchpad",
        }
    ),
    "$rewindTo": frozenset({"$rewindTo"}),
    "user": _MESSAGE,
    "gemini": _MESSAGE | {"toolCalls", "thoughts", "tokens", "model"},
    "info": _MESSAGE,
    "error": _MESSAGE,
    "warning": _MESSAGE,
    "toolCall": frozenset(
        {
            "id",
            "name",
            "args",
            "result",
            "status",
            "timestamp",
            "resultDisplay",
            "description",
            "displayName",
            "renderOutputAsMarkdown",
            "agentId",
        }
    ),
}

_HOOK = frozenset({"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"})
_TOOL_HOOK = _HOOK | {"tool_name", "tool_input"}

# Hook payloads per event: the events setup arms (settings-templates/gemini-cli.settings.json).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "SessionStart": _HOOK | {"source"},
    "SessionEnd": _HOOK | {"reason"},
    "BeforeAgent": _HOOK | {"prompt"},
    "AfterAgent": _HOOK | {"prompt", "prompt_response", "stop_hook_active"},
    "BeforeTool": _TOOL_HOOK,
    "AfterTool": _TOOL_HOOK | {"tool_response"},
    "Notification": _HOOK | {"notification_type", "message", "details"},
}
