"""The record shapes Codex writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every field the pinned CLI (0.169.0)
was seen writing (tests/live/captures/codex/, docs/providers/codex.md), then the fields
older releases (0.34 to 0.146) and other tools' copies of the format add
(docs/providers/codex.md §10). A rollout line is an envelope whose ``payload`` carries
the record; both are checked, payload fields named ``payload.<field>``. A field or a
record type outside these sets, and not in ``IGNORED``, is schema drift: counted in
``Chat.drift``, never fatal.
"""

from __future__ import annotations

ENVELOPE = frozenset({"timestamp", "ordinal", "type", "payload", "metadata"})


def _record(*payload: str) -> frozenset[str]:
    return ENVELOPE | {f"payload.{name}" for name in payload}


_CALL_ITEM = ("type", "id", "status", "call_id", "internal_chat_message_metadata_passthrough")
_TURN_END = ("turn_id", "root_turn_id", "started_at", "completed_at", "duration_ms")

# Rollout shapes: the record type, ``<type>:<payload type>`` where the payload has kinds.
_PINNED: dict[str, frozenset[str]] = {
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

# What older releases, and other tools' copies of the format, add to the pinned shapes
# (the real-world corpus: real rollouts of Codex 0.34 to 0.146 and peers' fixtures;
# docs/providers/codex.md §10). Nothing here is read unless the parser names it.
_OLDER: dict[str, tuple[str, ...]] = {
    # ``instructions`` (0.34-0.77: the user's instructions, before ``base_instructions``),
    # ``forked_from_id`` (a fork names the thread it copied), ``memory_mode``,
    # ``dynamic_tools``, ``agent_path`` (0.146).
    "session_meta": (
        "instructions",
        "forked_from_id",
        "memory_mode",
        "dynamic_tools",
        "agent_path",
    ),
    # The per-request settings snapshot grew and shrank by release; only ``model`` is read.
    "turn_context": (
        "user_instructions",
        "developer_instructions",
        "base_instructions",
        "personality",
        "truncation_policy",
        "current_date",
        "timezone",
        "workspace_roots",
        "comp_hash",
        "multi_agent_mode",
        "model_provider",
        "final_output_json_schema",
        "turn_context",
    ),
    # ``phase`` (0.146: input, output, commentary, final answer), ``metadata`` (0.146: the
    # turn again); ``timestamp``, ``function_call`` and ``name`` only in peers' fixtures
    # (a chat-completions shape: an assistant message carrying a call, a ``function``
    # role carrying its result), read as the call and the result they are.
    "response_item:message": ("phase", "metadata", "timestamp", "function_call", "name"),
    "response_item:reasoning": ("metadata",),
    # ``summary`` only in a peer's fixture (a caption of the call), not read.
    "response_item:function_call": ("metadata", "summary"),
    "response_item:custom_tool_call": ("metadata",),
    # ``context`` (0.200 in a peer's fixture); ``input_tokens``/``output_tokens`` flat on
    # the payload only in a peer's fixture, with no ``info``: no usage is read from them.
    "event_msg:token_count": ("context", "input_tokens", "output_tokens"),
}

# Shapes no 0.169.0 capture holds, read here (docs/providers/codex.md §10).
_READ_ELSEWHERE: dict[str, frozenset[str]] = {
    # The UI events Codex 0.34-0.146 wrote beside the response items: the same prompt,
    # answer and reasoning again (echoes, shown once), or the only record of them where
    # the item was never written (a streamed answer cut off).
    "event_msg:user_message": _record(
        "type",
        "message",
        "kind",
        "images",
        "local_images",
        "text_elements",
        "audio",
        "local_audio",
        "client_id",
    ),
    "event_msg:agent_message": _record("type", "message", "phase", "memory_citation"),
    "event_msg:agent_reasoning": _record("type", "text"),
    "event_msg:agent_reasoning_raw_content": _record("type", "text"),
    "event_msg:error": _record("type", "message", "codex_error_info", "error"),
    "event_msg:collab_agent_spawn_end": _record(
        "type",
        "call_id",
        "sender_thread_id",
        "new_thread_id",
        "new_agent_nickname",
        "new_agent_role",
        "prompt",
        "model",
        "reasoning_effort",
        "status",
        "completed_at_ms",
    ),
    "event_msg:exited_review_mode": _record("type", "turn_id", "item_id", "review_output"),
    # A call as a UI event only (a peer's fixture): read as the call.
    "event_msg:tool_call": _record("type", "call_id", "name", "input"),
    "response_item:tool_search_call": _record(*_CALL_ITEM, "execution", "arguments", "metadata"),
    "response_item:tool_search_output": _record(*_CALL_ITEM, "execution", "tools"),
    "response_item:web_search_call": _record(*_CALL_ITEM, "action", "metadata"),
    "response_item:image_generation_call": _record(*_CALL_ITEM, "revised_prompt", "result"),
    "response_item:agent_message": _record(
        "type", "id", "author", "recipient", "content", "internal_chat_message_metadata_passthrough"
    ),
    # Calls and results in shapes only peers' fixtures hold: read as what they say.
    "response_item:tool_call": _record("type", "function", "arguments"),
    "response_item:tool_result": _record("type", "name", "result"),
}

ROLLOUT_FIELDS: dict[str, frozenset[str]] = {
    **{
        shape: fields | {f"payload.{name}" for name in _OLDER.get(shape, ())}
        for shape, fields in _PINNED.items()
    },
    **_READ_ELSEWHERE,
}

# Record types known and deliberately not read, each with the reason. A shape here is
# neither drift nor a record.
IGNORED: dict[str, str] = {
    "world_state": "Codex's snapshot of the context it sent the model (0.169: agents_md,"
    " environments, permissions), not conversation",
    "inter_agent_communication_metadata": "multi-agent bookkeeping (0.146): whether a"
    " message to another agent starts a turn",
    "response_item:ghost_snapshot": "the git commit Codex made of the work tree for /undo"
    " (0.58+), not conversation",
    "response_item:token_count": "usage in a shape only a peer's fixture holds; Codex writes"
    " usage as event_msg token_count and token_usage_record",
    "event_msg:thread_settings_applied": "the thread's settings as applied (0.169)",
    "event_msg:item_started": "an item began; its item_completed and response item follow",
    "event_msg:context_compacted": "the UI notice of a compaction; the compacted record"
    " carries the summary",
    "event_msg:thread_name_updated": "a name given to the thread (/rename); agentspool"
    " titles a session by its first prompt",
    "event_msg:thread_goal_updated": "the goal's new state; the goal tools' calls are"
    " response items",
    "event_msg:sub_agent_activity": "a sub-agent's progress; its own rollout holds its work",
    "event_msg:guardian_assessment": "auto-review's verdict on an action; the action's call"
    " and output are response items",
    "event_msg:entered_review_mode": "/review began; its prompt is the turn's user message",
    "event_msg:undo_completed": "/undo's outcome (a ghost snapshot restored)",
    "event_msg:exec_command_end": "the UI event of a shell call; its function_call and"
    " output are response items",
    "event_msg:patch_apply_end": "the UI event of apply_patch; its call and output are"
    " response items",
    "event_msg:mcp_tool_call_end": "the UI event of an MCP call; its call and output are"
    " response items",
    "event_msg:view_image_tool_call": "the UI event of view_image; its call is a response item",
    "event_msg:dynamic_tool_call_request": "the UI event of a dynamic tool's call; the call"
    " is a response item",
    "event_msg:dynamic_tool_call_response": "the UI event of a dynamic tool's result; the"
    " output is a response item",
    "event_msg:web_search_end": "the UI event of a web search (the results the TUI shows);"
    " the search is its web_search_call item",
    "event_msg:image_generation_end": "the UI event of an image generation; the call is its"
    " image_generation_call item",
    "event_msg:collab_agent_interaction_end": "the UI event of send_input to a sub-agent;"
    " the call is a response item",
    "event_msg:collab_waiting_end": "the UI event of wait_agent; the call is a response item",
    "event_msg:collab_close_end": "the UI event of close_agent; the call is a response item",
    "event_msg:account/rateLimits/updated": "the account's rate limits (an app-server"
    " notification in a peer's fixture)",
    "event_msg:codex/event/raw_item": "stream fragments (an app-server notification in a"
    " peer's fixture): nothing complete",
    "event_msg:turn.completed": "`codex exec --json`'s event name in a peer's fixture: no"
    " rollout record; its usage is not counted (token_count is the rollout's usage)",
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
