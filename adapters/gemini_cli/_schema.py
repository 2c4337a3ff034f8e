"""The record shapes Gemini CLI writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every field the pinned CLI (0.61.0)
was seen writing (tests/live/captures/gemini-cli/, docs/providers/gemini-cli.md), plus
the few its chat record types name that no capture happened to hold
(``displayContent``, ``directories``, ``summary``, ``memoryScratchpad``); and the older
chat file, one JSON document (docs/providers/gemini-cli.md §7), as real users' files
and other tools' fixtures of it hold it. A field or a record shape outside these sets is
schema drift: counted in ``Chat.drift``, never fatal.

Known and read into no canonical record, and why:

* ``projectHash`` — a hash of the project's path; ``tmp/<project>/.project_root`` names
  the project itself. ``lastUpdated`` — the file's own last write; every record carries
  its time. ``directories``, ``memoryScratchpad`` — the workspace's extra directories and
  the CLI's notes to itself, not the conversation. ``kind`` — read only as ``subagent``.
* ``displayContent`` — the prompt as the TUI showed it; ``content`` is what the model was
  given, and what the records hold.
* a tool call's ``resultDisplay``, ``description``, ``displayName``,
  ``renderOutputAsMarkdown`` — how the TUI draws the call; ``name``, ``args`` and
  ``result`` are the call.
* ``tokens.total`` (a sum of the others) — not a field the drift check sees (it checks a
  record's own members), named here for completeness; a thought's ``timestamp`` too.
* the log's ``summary`` (metadata, ``$set``) — the captures hold one only in a subagent's
  file, where it repeats the final answer its ``complete_task`` call holds; a main
  session's is not read yet (no capture shows one). The older document's is read.
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
