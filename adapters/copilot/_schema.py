"""The record shapes GitHub Copilot CLI 1.0.102 writes, field by field (ADR 0014).

Every field the pinned CLI was seen writing in ``events.jsonl`` and in its hook payloads
(tests/live/captures/copilot/, docs/providers/copilot.md). A field or record type outside
these sets is schema drift: counted in ``Chat.drift``, never fatal.

Known and read into no canonical record, and why:

* ``system.message`` — the whole system prompt (25 KB a session), not the conversation.
* ``hook.start`` / ``hook.end`` — our own hooks' runs, written only when hooks are armed;
  the spool holds what they said.
* ``session.model_change``, ``human_response.recorded`` (the answer the
  ``tool.execution_complete`` after it restates), ``session.shutdown``'s metrics (the
  CLI's own sums of the ``session.usage_record`` lines, which the records carry one by
  one).
* ``permission.requested``'s ``promptRequest`` (how the dialog is drawn), a tool call's
  ``toolTitle``, ``intentionSummary``, ``shellToolInfo`` (the TUI's drawing of a call).
"""

from __future__ import annotations

_ENVELOPE = frozenset({"type", "data", "id", "timestamp", "parentId", "ephemeral"})

# ``data`` members per record type (the envelope is checked apart as ``record``).
EVENT_FIELDS: dict[str, frozenset[str]] = {
    "record": _ENVELOPE,
    "session.start": frozenset(
        {
            "sessionId",
            "version",
            "producer",
            "copilotVersion",
            "startTime",
            "selectedModel",
            "context",
            "contextTier",
            "alreadyInUse",
            "remoteSteerable",
        }
    ),
    "session.model_change": frozenset(
        {"source", "contextTier", "newModel", "previousModel", "reasoningEffort"}
    ),
    "system.message": frozenset({"role", "content", "interactionId", "metadata"}),
    "user.message": frozenset(
        {
            "content",
            "transformedContent",
            "messageId",
            "interactionId",
            "turnId",
            "delivery",
            "parentAgentTaskId",
            "supportedNativeDocumentMimeTypes",
            "attachments",
        }
    ),
    "assistant.turn_start": frozenset({"turnId", "interactionId"}),
    "assistant.turn_end": frozenset({"turnId"}),
    "assistant.message": frozenset(
        {
            "messageId",
            "originatingMessageId",
            "model",
            "content",
            "toolRequests",
            "interactionId",
            "turnId",
            "apiCallId",
            "rte",
            "reasoningText",
        }
    ),
    "session.usage_record": frozenset({"usage"}),
    "tool.execution_start": frozenset(
        {"toolCallId", "toolName", "arguments", "turnId", "model", "toolTitle", "shellToolInfo"}
    ),
    "tool.execution_complete": frozenset(
        {
            "toolCallId",
            "model",
            "interactionId",
            "turnId",
            "rte",
            "shellExecution",
            "success",
            "result",
            "error",
            "toolTelemetry",
        }
    ),
    "permission.requested": frozenset(
        {
            "requestId",
            "permissionRequest",
            "promptRequest",
            "agentMode",
            "permissionMode",
            "ownerSessionId",
        }
    ),
    "permission.completed": frozenset({"requestId", "toolCallId", "result", "decisionSource"}),
    "human_response.recorded": frozenset({"requestId", "toolCallId", "response", "actor"}),
    "abort": frozenset({"reason"}),
    "hook.start": frozenset({"hookInvocationId", "hookType", "input"}),
    "hook.end": frozenset({"hookInvocationId", "hookType", "success", "error"}),
    "session.shutdown": frozenset(
        {
            "accountingSnapshot",
            "agentMetrics",
            "codeChanges",
            "conversationTokens",
            "currentModel",
            "currentTokens",
            "eventsFileSizeBytes",
            "modelMetrics",
            "providerModelMetrics",
            "sessionStartTime",
            "shutdownType",
            "systemTokens",
            "toolDefinitionsTokens",
            "totalApiDurationMs",
            "totalNanoAiu",
            "totalPremiumRequests",
            "usageAccountingWatermarks",
        }
    ),
}

_HOOK = frozenset({"sessionId", "timestamp", "cwd"})

# Hook payload members per event (camelCase: the names ``setup`` and ``install`` arm).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "sessionStart": _HOOK | {"source", "initialPrompt"},
    "userPromptSubmitted": _HOOK | {"prompt"},
    "preToolUse": _HOOK | {"toolName", "toolArgs"},
    "postToolUse": _HOOK | {"toolName", "toolArgs", "toolResult"},
    "permissionRequest": _HOOK | {"hookName", "toolName", "toolInput", "permissionSuggestions"},
    "notification": _HOOK | {"message", "title", "hook_event_name", "notification_type"},
    "agentStop": _HOOK | {"transcriptPath", "stopReason", "stop_hook_active"},
    "sessionEnd": _HOOK | {"reason"},
}
