"""The record shapes Claude Code 2.1.328 writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every top-level field the pinned CLI
was seen writing (tests/live/captures/claude-code/, docs/providers/claude-code.md). A
field outside these sets, or a record type outside them, is schema drift: counted in
``Chat.drift``, never fatal. Bookkeeping records (``_transcript.BOOKKEEPING``) are not
read and not checked.
"""

from __future__ import annotations

# Every conversation-chain record (user, assistant, system) carries these.
_CHAIN = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "isSidechain",
        "sessionId",
        "session_id",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "entrypoint",
        "agentId",
        "slug",
    }
)
_SYSTEM = _CHAIN | {"subtype", "level", "isMeta", "content"}

TRANSCRIPT_FIELDS: dict[str, frozenset[str]] = {
    "user": _CHAIN
    | {
        "message",
        "promptId",
        "permissionMode",
        "origin",
        "promptSource",
        "turnOrigin",
        "turnPosition",
        "isMeta",
        "isCompactSummary",
        "repeatsCompactSummary",
        "isVisibleInTranscriptOnly",
        "turnCompanion",
        "queueSkipAttachments",
        "sourceToolAssistantUUID",
        "toolUseResult",
        "permissionDecision",
        "sandboxed",
        "toolDenialKind",
        "toolDenialBeforeRun",
        "interruptedMessageId",
    },
    "assistant": _CHAIN
    | {
        "message",
        "requestId",
        "requestRef",
        "apiBlockIndex",
        "requestedModel",
        "effort",
        "perTurnEffort",
        "madeBy",
        "promptCacheRequested",
        "toolInputStreamMs",
        "thinkingDisplay",
        "thinkingDurationMs",
        "isAbortedMidStream",
        "isApiErrorMessage",
        "apiErrorStatus",
        "apiErrorType",
        "error",
        "failedResponseHadNoToolCall",
        "serverClassifierRequest",
        "attributionAgent",
    },
    "system:turn_duration": _SYSTEM | {"durationMs", "messageCount", "pendingBackgroundAgentCount"},
    "system:compact_boundary": _SYSTEM | {"logicalParentUuid", "compactMetadata"},
    "system:local_command": _SYSTEM | {"commandRun"},
    "system:informational": _SYSTEM | {"preventContinuation", "promptSubmitEnding", "toolUseID"},
    "system:stop_hook_summary": _SYSTEM
    | {
        "hookCount",
        "hookInfos",
        "hookErrors",
        "hookAdditionalContext",
        "failedHookErrorIndexes",
        "preventedContinuation",
        "stopReason",
        "hasOutput",
        "toolUseID",
    },
}

_HOOK = frozenset(
    {"session_id", "transcript_path", "cwd", "hook_event_name", "prompt_id", "permission_mode"}
)
_TOOL_HOOK = _HOOK | {"tool_name", "tool_input", "tool_use_id", "agent_id", "agent_type", "effort"}
_STOP_HOOK = _HOOK | {
    "stop_hook_active",
    "last_assistant_message",
    "background_tasks",
    "session_crons",
    "effort",
}

# Hook payloads per event: the events setup arms (settings-templates/claude-code.settings.json).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "SessionStart": _HOOK | {"source", "model", "agent_type"},
    "UserPromptSubmit": _HOOK | {"prompt"},
    "PreToolUse": _TOOL_HOOK,
    "PermissionRequest": _TOOL_HOOK | {"permission_suggestions"},
    "PermissionDenied": _TOOL_HOOK | {"reason"},
    "PostToolUse": _TOOL_HOOK | {"tool_response", "duration_ms"},
    "PostToolUseFailure": _TOOL_HOOK | {"error", "is_interrupt", "duration_ms"},
    "PostToolBatch": _HOOK | {"tool_calls", "agent_id", "agent_type", "effort"},
    "Notification": _HOOK | {"message", "title", "notification_type"},
    "Stop": _STOP_HOOK,
    "StopFailure": _HOOK | {"error", "error_details", "last_assistant_message", "effort"},
    "SubagentStart": _HOOK | {"agent_id", "agent_type"},
    "SubagentStop": _STOP_HOOK | {"agent_id", "agent_type", "agent_transcript_path"},
    "PreCompact": _HOOK | {"trigger", "custom_instructions"},
    "PostCompact": _HOOK | {"trigger", "compact_summary"},
    "SessionEnd": _HOOK | {"reason"},
}

# ~/.claude/sessions/<pid>.json
NATIVE_FIELDS = frozenset(
    {
        "pid",
        "sessionId",
        "cwd",
        "startedAt",
        "procStart",
        "version",
        "peerProtocol",
        "peerFeatures",
        "kind",
        "entrypoint",
        "pidDomain",
        "tmux",
        "messagingSocketPath",
        "name",
        "nameSince",
        "nameSource",
        "asksForConvertedSkills",
        "status",
        "waitingFor",
        "updatedAt",
        "statusUpdatedAt",
    }
)
NATIVE_STATUSES = frozenset({"busy", "idle", "waiting"})
# The binary's own list (it maps each to a permission or a question).
NATIVE_WAITS = frozenset(
    {
        "permission prompt",
        "input needed",
        "dialog open",
        "sandbox request",
        "goal proposal",
        "worker request",
    }
)
