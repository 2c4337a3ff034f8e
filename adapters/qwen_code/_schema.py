"""The record shapes Qwen Code 0.24.4 writes, field by field (ADR 0014).

Every field the pinned CLI was seen writing (tests/live/captures/qwen-code/,
docs/providers/qwen-code.md). A field or a record shape outside these sets is schema
drift: counted in ``Chat.drift``, never fatal.

Known and read into no canonical record, and why:

* ``parentUuid`` — the chain of records; the file is already in that order.
  ``provenance`` — repeats ``type`` (``real_user``, ``assistant_output``, …).
  ``gitBranch``, ``version`` — the branch and the CLI version at each record; the
  version is read once, as ``Chat.drift.cli_version``.
* ``system`` records: ``attribution_snapshot`` and ``file_history_snapshot`` are the
  CLI's undo bookkeeping; ``ui_telemetry`` logs every API call and tool decision, the
  CLI's own side requests (a memory pass, a next-prompt suggestion) too. The
  conversation's usage is its answers' ``usageMetadata``.
* ``toolCallResult.resultDisplay`` — how the TUI draws the result; the
  ``functionResponse`` part is what the model was given.
* ``usageMetadata.totalTokenCount`` — the sum of the others.
"""

from __future__ import annotations

_RECORD = frozenset(
    {
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "type",
        "provenance",
        "cwd",
        "version",
        "gitBranch",
    }
)

CHAT_FIELDS: dict[str, frozenset[str]] = {
    "user": _RECORD | {"message"},
    "assistant": _RECORD | {"message", "model", "usageMetadata"},
    "tool_result": _RECORD | {"message", "toolCallResult"},
    "system": _RECORD | {"subtype", "systemPayload"},
    "usageMetadata": frozenset(
        {
            "promptTokenCount",
            "candidatesTokenCount",
            "cachedContentTokenCount",
            "thoughtsTokenCount",
            "totalTokenCount",
        }
    ),
}
SYSTEM_SUBTYPES = frozenset({"attribution_snapshot", "file_history_snapshot", "ui_telemetry"})

_HOOK = frozenset(
    {
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "timestamp",
        "permission_mode",
        "prompt_id",
    }
)
_TOOL = _HOOK | {"tool_name", "tool_input"}

# Hook payloads per event: the events setup arms (settings-templates/qwen-code.settings.json).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "SessionStart": _HOOK | {"source", "model"},
    "SessionEnd": _HOOK | {"reason"},
    "UserPromptSubmit": _HOOK | {"prompt", "submitted_prompt"},
    "PreToolUse": _TOOL | {"tool_use_id", "tool_call_id"},
    "PostToolUse": _TOOL | {"tool_use_id", "tool_call_id", "tool_response", "duration_ms"},
    "PostToolUseFailure": _TOOL | {"tool_use_id", "tool_call_id", "error", "is_interrupt"},
    "PostToolBatch": _HOOK | {"tool_calls"},
    "PermissionRequest": _TOOL | {"permission_suggestions"},
    "Notification": _HOOK | {"notification_type", "title", "message"},
    "Stop": _HOOK
    | {
        "stop_hook_active",
        "last_assistant_message",
        "background_tasks",
        "crons",
        "context_usage",
        "context_limit",
        "input_tokens",
    },
    "StopFailure": _HOOK | {"error", "error_details", "last_assistant_message"},
}
