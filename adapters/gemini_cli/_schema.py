"""The record shapes Gemini CLI writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every field the pinned CLI (0.61.0)
was seen writing (tests/live/captures/gemini-cli/, docs/providers/gemini-cli.md), plus
the few its chat record types name that no capture happened to hold
(``displayContent``, ``directories``, ``summary``, ``memoryScratchpad``); and the older
chat file, one JSON document (docs/providers/gemini-cli.md §7), as real users' files
and other tools' fixtures of it hold it. A field or a record shape outside these sets is
schema drift: counted in ``Chat.drift``, never fatal.
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
    # A record typed ``model`` (the Gemini API's name for the model's turn) with the API's
    # ``parts`` in place of ``content``: no Gemini CLI release is known to write one, but
    # hand-written fixtures of the older document do; read as a ``gemini`` record.
    "model": _MESSAGE | {"toolCalls", "thoughts", "tokens", "model", "parts"},
    # The older chat file, one JSON document (§7): the metadata and ``messages``, each a
    # message record of the shapes above. ``summary`` is the CLI's one-line summary of the
    # session (read as a ``summary`` record). Known and ignored: ``meta`` — a
    # hand-written fixture's own ``{model}``; no release is known to write it, and the
    # model that prices a response is its record's own ``model``.
    "document": _METADATA | {"messages", "summary", "memoryScratchpad", "meta"},
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
