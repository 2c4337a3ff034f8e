"""The records Kimi Code 2.1.0 writes, by type (ADR 0014): what the parser reads, what it
knows and leaves, and why. Everything else is schema drift, counted in ``Chat.drift``.

Known and read into no canonical record (tests/live/captures/kimi-code/tui-session/):

* ``runtime.set_binding``, ``profile.bind`` (the whole system prompt),
  ``llm.tools_snapshot``, ``llm.request`` — what the model was configured and sent;
  ``permission.set_mode`` — the session's approval mode.
* ``agent.message.appended``, ``agent.turn.started``, ``agent.turn.ended`` — the same
  messages and turn bounds again, assembled for the CLI's own views.
* ``prompt.completed``, ``prompt.aborted``, ``turn.cancel``, ``turn.step.interrupted``
  — the prompt's and the step's side of a turn end that ``turn.ended`` states.
* ``permission.record_approval_result`` — repeats ``interaction.resolved``.
* ``token_counting.*`` — the context window's size; ``plugin.session_start``.
"""

from __future__ import annotations

WIRE_TYPES = frozenset(
    {
        "metadata",
        "turn.prompt",
        "turn.ended",
        "context.append_message",
        "context.append_loop_event",
        "interaction.request",
        "interaction.resolved",
        "usage.record",
    }
)
IGNORED = frozenset(
    {
        "runtime.set_binding",
        "profile.bind",
        "llm.tools_snapshot",
        "llm.request",
        "permission.set_mode",
        "agent.message.appended",
        "agent.turn.started",
        "agent.turn.ended",
        "prompt.completed",
        "prompt.aborted",
        "turn.cancel",
        "turn.step.interrupted",
        "permission.record_approval_result",
        "token_counting.measured",
        "token_counting.turn_recorded",
        "plugin.session_start",
    }
)

_HOOK = frozenset({"hook_event_name", "session_id", "session_title", "cwd", "client_type"})
_PERMISSION = _HOOK | {
    "id",
    "agent_id",
    "turn_id",
    "tool_call_id",
    "tool_name",
    "tool_input",
    "action",
    "display",
}

# Hook payloads per event: the events ``install`` arms (settings-templates/kimi-code.hooks.toml).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "SessionStart": _HOOK | {"source", "model", "profile"},
    "UserPromptSubmit": _HOOK | {"prompt", "is_steer"},
    "PermissionRequest": _PERMISSION,
    "PermissionResult": _PERMISSION | {"decision"},
    "Stop": _HOOK | {"stop_hook_active"},
    "SessionEnd": _HOOK | {"reason"},
}
