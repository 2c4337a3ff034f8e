"""The record shapes Codex 0.169.0 writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every field the pinned CLI was seen
writing (tests/live/captures/codex/, docs/providers/codex.md). A rollout line is an
envelope whose ``payload`` carries the record; both are checked, payload fields named
``payload.<field>``. A field or a record type outside these sets is schema drift: counted
in ``Chat.drift``, never fatal.
"""

from __future__ import annotations

ENVELOPE = frozenset({"timestamp", "ordinal", "type", "payload", "metadata"})


def _record(*payload: str) -> frozenset[str]:
    return ENVELOPE | {f"payload.{name}" for name in payload}


_CALL_ITEM = ("type", "id", "status", "call_id", "internal_chat_message_metadata_passthrough")
_TURN_END = ("turn_id", "root_turn_id", "started_at", "completed_at", "duration_ms")

# Rollout shapes: the record type, ``<type>:<payload type>`` where the payload has kinds.
ROLLOUT_FIELDS: dict[str, frozenset[str]] = {
    "session_meta": _record(
        "id",
        "session_id",
        "parent_thread_id",
        "timestamp",
        "cwd",
        "originator",
        "cli_version",
        "source",
        "thread_source",
        "agent_nickname",
        "agent_role",
        "model_provider",
        "history_mode",
        "base_instructions",
        "context_window",
        "git",
        "account_scoped",
        "multi_agent_version",
        "runtime_workspace_roots",
    ),
    "turn_context": _record(
        "turn_id",
        "root_turn_id",
        "cwd",
        "approval_policy",
        "approvals_reviewer",
        "sandbox_policy",
        "permission_profile",
        "active_permission_profile",
        "file_system_sandbox_policy",
        "model",
        "collaboration_mode",
        "effort",
        "summary",
        "multi_agent_version",
        "realtime_active",
        "disabled_plugin_ids",
    ),
    "world_state": _record("full", "state"),
    "token_usage_record": _record(
        "thread_id",
        "session_id",
        "turn_id",
        "root_turn_id",
        "response_id",
        "usage",
        "turn_token_usage",
        "thread_token_usage",
    ),
    "compacted": _record(
        "message",
        "replacement_history",
        "replacement_history_metadata",
        "retained_context",
        "resume_metadata",
        "latest_token_usage_record",
        "compaction_response_id",
        "window_id",
        "previous_window_id",
        "first_window_id",
        "window_number",
    ),
    "retained_context:verified_answer": _record(
        "type", "turn_id", "call_id", "questions", "acceptance_order"
    ),
    "response_item:message": _record(
        "type", "id", "role", "content", "status", "internal_chat_message_metadata_passthrough"
    ),
    "response_item:reasoning": _record(
        "type",
        "id",
        "summary",
        "content",
        "encrypted_content",
        "internal_chat_message_metadata_passthrough",
    ),
    "response_item:function_call": _record(*_CALL_ITEM, "name", "namespace", "arguments"),
    "response_item:custom_tool_call": _record(*_CALL_ITEM, "name", "namespace", "input"),
    "response_item:local_shell_call": _record(*_CALL_ITEM, "action"),
    "response_item:function_call_output": _record(*_CALL_ITEM, "output"),
    "response_item:custom_tool_call_output": _record(*_CALL_ITEM, "output"),
    "event_msg:task_started": _record(
        "type",
        "turn_id",
        "root_turn_id",
        "started_at",
        "model_context_window",
        "collaboration_mode_kind",
        "turn_attribution",
    ),
    "event_msg:task_complete": _record(
        "type", *_TURN_END, "last_agent_message", "time_to_first_token_ms", "error"
    ),
    "event_msg:turn_aborted": _record("type", *_TURN_END, "reason"),
    "event_msg:item_completed": _record(
        "type", "thread_id", "turn_id", "item", "started_at_ms", "completed_at_ms"
    ),
    "event_msg:item_started": _record("type", "thread_id", "turn_id", "item", "started_at_ms"),
    "event_msg:thread_settings_applied": _record("type", "thread_id", "thread_settings"),
    "event_msg:token_count": _record("type", "info", "rate_limits"),
}

_HOOK = frozenset(
    {"session_id", "transcript_path", "cwd", "hook_event_name", "model", "permission_mode"}
)
_TURN_HOOK = _HOOK | {"turn_id", "agent_id", "agent_type"}
_TOOL_HOOK = _TURN_HOOK | {"tool_name", "tool_input", "tool_use_id"}

# Hook payloads per event: the events setup arms (settings-templates/codex.hooks.toml).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "SessionStart": _HOOK | {"source"},
    "SessionEnd": _HOOK | {"reason"},
    "UserPromptSubmit": _TURN_HOOK | {"prompt"},
    "PreModelRequest": _TURN_HOOK,
    "PreToolUse": _TOOL_HOOK,
    "PermissionRequest": _TOOL_HOOK,
    "PostToolUse": _TOOL_HOOK | {"tool_response"},
    "PreCompact": _TURN_HOOK | {"trigger"},
    "PostCompact": _TURN_HOOK | {"trigger"},
    "SubagentStart": _TURN_HOOK,
    "SubagentStop": _TURN_HOOK
    | {"agent_transcript_path", "last_assistant_message", "stop_hook_active"},
    "Interrupt": _TURN_HOOK,
    "Stop": _TURN_HOOK | {"last_assistant_message", "stop_hook_active"},
}
