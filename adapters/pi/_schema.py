"""The record shapes Pi 0.73.1 writes, field by field (ADR 0014).

Every field the pinned CLI was seen writing in a session file, and every field agentspool's
extension spools (tests/live/captures/pi/, docs/providers/pi.md), with the entry types
and fields Pi's own session-format document lists beside them. A field or entry type
outside these sets is schema drift: counted in ``Chat.drift``, never fatal.

Known and read into no canonical record, and why:

* ``model_change``, ``thinking_level_change`` — settings of the session, not the
  conversation (the model a reply came from is on the reply).
* ``custom`` — an extension's own state, never shown nor sent to the model.
* ``label`` — a bookmark on an entry.
* a message's ``bashExecution`` role — the user's own ``!`` commands, run outside the
  agent's turn.
* ``usage.cost`` and ``totalTokens`` — Pi's prices and sum of the counts read one by one.
"""

from __future__ import annotations

_ENTRY = frozenset({"type", "id", "parentId", "timestamp"})

# Top-level members per entry type (a ``message`` entry's ``message`` is checked by role).
ENTRY_FIELDS: dict[str, frozenset[str]] = {
    "session": frozenset({"type", "version", "id", "timestamp", "cwd", "parentSession"}),
    "message": _ENTRY | {"message"},
    "model_change": _ENTRY | {"provider", "modelId"},
    "thinking_level_change": _ENTRY | {"thinkingLevel"},
    "compaction": _ENTRY | {"summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"},
    "branch_summary": _ENTRY | {"fromId", "summary", "details", "fromHook"},
    "custom": _ENTRY | {"customType", "data"},
    "custom_message": _ENTRY | {"customType", "content", "display", "details"},
    "label": _ENTRY | {"targetId", "label"},
    "session_info": _ENTRY | {"name"},
    # A message's members, per role.
    "message:user": frozenset({"role", "content", "timestamp"}),
    "message:assistant": frozenset(
        {
            "role",
            "content",
            "api",
            "provider",
            "model",
            "usage",
            "stopReason",
            "errorMessage",
            "timestamp",
            "responseId",
        }
    ),
    "message:toolResult": frozenset(
        {"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"}
    ),
    "message:bashExecution": frozenset(
        {
            "role",
            "command",
            "output",
            "exitCode",
            "cancelled",
            "truncated",
            "fullOutputPath",
            "excludeFromContext",
            "timestamp",
        }
    ),
    "message:custom": frozenset(
        {"role", "customType", "content", "display", "details", "timestamp"}
    ),
}

_SPOOLED = frozenset({"sessionId"})
_TOOL = _SPOOLED | {"toolCallId", "toolName"}

# Payload members per event agentspool's extension spools.
SPOOL_FIELDS: dict[str, frozenset[str]] = {
    "session_start": _SPOOLED
    | {"reason", "previousSessionFile", "sessionFile", "cwd", "pid", "start"},
    "agent_start": _SPOOLED,
    "agent_end": _SPOOLED | {"stopReason"},
    "tool_execution_start": _TOOL | {"args"},
    "tool_execution_end": _TOOL | {"isError"},
    "permission_asked": _TOOL | {"input"},
    "permission_replied": _SPOOLED | {"toolCallId", "answer"},
    "session_shutdown": _SPOOLED | {"reason", "targetSessionFile"},
}
