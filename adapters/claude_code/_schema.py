"""The record shapes Claude Code writes, field by field (ADR 0014).

What the parsers know, beyond the fields they read: every top-level field the pinned CLI
(2.1.328) was seen writing (tests/live/captures/claude-code/, docs/providers/claude-code.md),
and every field older versions wrote in the real transcripts of docs/providers/claude-code.md
§9 — each listed below with why nothing reads it. A field outside these sets, or a
record type outside them, is schema drift: counted in ``Chat.drift``, never fatal.
Bookkeeping records (``_transcript.BOOKKEEPING``) are not read and not checked.
"""

from __future__ import annotations

# Every conversation-chain record (user, assistant, system, progress) carries these.
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

# Fields other tools' hand-written test fixtures put on records shaped like Claude Code's
# (no Claude Code version writes them): nothing in them is evidence of what Claude Code
# did, so they are read as nothing.
FOREIGN_FIELDS: dict[str, str] = {
    "workspace": "a peer tool's name for cwd",
    "agent": "a peer tool's name of the agent that wrote the file",
    "agentSlug": "a peer tool's name of the agent that wrote the file",
    "comment": "a fixture's note to its reader",
    "model": "the model beside message.model (message.model is read)",
    "inputTokens": "usage beside message.usage (message.usage is read)",
    "outputTokens": "usage beside message.usage (message.usage is read)",
    "cacheCreationInputTokens": "usage beside message.usage (message.usage is read)",
    "cacheReadInputTokens": "usage beside message.usage (message.usage is read)",
    "project": "a peer tool's name for the project dir",
}

# Fields of user records that older (or newer) versions wrote and nothing here reads.
USER_IGNORED: dict[str, str] = {
    "todos": "the todo list as of the prompt (1.0 to 2.1.4x); each TodoWrite call's input shows it",
    "thinkingMetadata": "the thinking settings for the turn (level, triggers): not conversation",
    "planContent": "the approved plan, which the record's own text repeats (2.1.3x)",
    "imagePasteIds": "ids of pasted images; the images are in the content",
    "sourceToolUseID": "the call a skill's or command's expansion belongs to (its record is meta)",
    "toolEndsTurn": "a flag on a tool's result record (2.1.2xx); the turn's end is read elsewhere",
    "mcpMeta": "an MCP server's metadata on its result",
    "classifierMetaLines": "the permission classifier's notes",
    "interruptedByShutdown": "a flag on a prompt cut by the CLI's exit; the interrupt is read",
    "sessionKind": "the kind of session (2.1.2xx); one kind per file",
}

# Fields of assistant records that older (or newer) versions wrote and nothing here reads.
ASSISTANT_IGNORED: dict[str, str] = {
    "costUSD": "the response's cost as 0.2 to 1.0 priced it; usage is counted from message.usage",
    "durationMs": "how long the response took (0.2 to 1.0)",
    "attributionPlugin": "the plugin the response is attributed to (2.1.1xx)",
    "attributionSkill": "the skill the response is attributed to (2.1.1xx)",
    "attributionMcpServer": "the MCP server the response is attributed to (2.1.1xx)",
    "attributionMcpTool": "the MCP tool the response is attributed to (2.1.1xx)",
    "errorDetails": "details of a response cut mid-stream (isAbortedMidStream is read)",
    "supersedesUuids": "records a retried response replaces; seen only in a peer's fixture, "
    "so which records it names is not established",
    "sessionKind": "the kind of session (2.1.2xx); one kind per file",
}

_SYSTEM = _CHAIN | {"subtype", "level", "isMeta", "content", "sessionKind"}
_API_ERROR = _SYSTEM | {
    "error",
    "retryInMs",
    "retryAttempt",
    "maxRetries",
    "source",
    "cause",
    "requestId",
}
_REFUSAL = _SYSTEM | {
    "apiRefusalCategory",
    "apiRefusalExplanation",
    "refusedUserMessageUuid",
    "retractedMessageUuids",
    "requestId",
    "source",
    "direction",
}

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
    }
    | frozenset(USER_IGNORED)
    | frozenset(FOREIGN_FIELDS),
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
    }
    | frozenset(ASSISTANT_IGNORED)
    | frozenset(FOREIGN_FIELDS),
    # 1.0.x: a notice with no subtype ("Claude Opus 4 limit reached, now using Sonnet 4").
    "system": _SYSTEM | {"message"} | frozenset(FOREIGN_FIELDS),
    "system:turn_duration": _SYSTEM | {"durationMs", "messageCount", "pendingBackgroundAgentCount"},
    "system:compact_boundary": _SYSTEM
    | {"logicalParentUuid", "compactMetadata", "trigger", "originalModel", "fallbackModel"},
    "system:microcompact_boundary": _SYSTEM | {"microcompactMetadata"},
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
    "system:api_error": _API_ERROR,
    "system:error": _API_ERROR,
    "system:api_refusal": _REFUSAL,
    "system:model_refusal_fallback": _REFUSAL
    | {"scope", "trigger", "originalModel", "fallbackModel"},
    # 2.1.2xx: a meta record opening the session; the first conversation record does that.
    "system:session_start": _API_ERROR | {"durationMs", "messageCount"},
    # A hook's, a command's, an MCP call's or a subagent's progress (2.1.x): only a Stop
    # hook's is read (the main turn ended). ``data`` of an ``agent_progress`` mirrors the
    # subagent's records, which the CLI keeps in the subagent's own file.
    "progress": _CHAIN | {"data", "parentToolUseID", "toolUseID"},
    "ai-title": frozenset({"type", "sessionId", "aiTitle", "timestamp"}),
    "custom-title": frozenset({"type", "sessionId", "customTitle", "timestamp"}),
    "pr-link": frozenset({"type", "sessionId", "prNumber", "prUrl", "prRepository", "timestamp"}),
    "frame-link": frozenset({"type", "sessionId", "path", "frameUrl", "title", "timestamp"}),
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
