"""From a folded ``RunState`` (and the transcript's messages) to the published ``Chat``."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agentspool.core import reducer
from agentspool.core.events import InputRequested
from agentspool.core.seam import (
    Chat,
    Drift,
    Evidence,
    Message,
    PendingApproval,
    ProcessState,
    Usage,
)


def compose_chat(
    state: reducer.RunState,
    messages: list[Message] | None = None,
    *,
    transcript_id: str = "",
    transcript_path: str = "",
    title: str = "",
    usage: Usage | None = None,
    complete_pending: Callable[[InputRequested], InputRequested] | None = None,
    drift: Drift | None = None,
    cwd: str = "",
    pid: int = 0,
    process: ProcessState = "unknown",
) -> Chat:
    """Publish the fold. ``complete_pending`` lets the adapter name the tool of an
    unspecific wait (a notification or status file says *that* a prompt is open, the
    transcript says for *which* call). ``drift``: what the parsers did not know."""
    pending = state.pending
    if pending is not None and complete_pending is not None:
        pending = complete_pending(pending)
    chat = Chat(
        state=reducer.chat_state(state),
        activity=state.activity,
        task_state=state.task_state,
        task_reason=state.task_reason,
        messages=list(messages or ()),
        transcript_id=transcript_id,
        transcript_path=transcript_path,
        title=title,
        usage=msgspec.structs.replace(usage) if usage else Usage(),
        evidence=[state.evidence] if state.evidence is not None else [],
        drift=drift if drift is not None else Drift(),
        cwd=cwd,
        pid=pid,
        process=process,
    )
    if pending is not None:
        if pending.kind == "question":
            chat.pending_dialog = pending.dialog
            if chat.pending_dialog is None:
                chat.evidence.append(
                    Evidence(
                        source=pending.source,
                        at=pending.at,
                        detail="dialog open; its content is not known",
                    )
                )
        else:
            chat.pending_approval = PendingApproval(
                tool_name=pending.tool_name,
                tool_input=pending.tool_input,
                tool_use_id=pending.tool_use_id,
                agent_id=pending.agent_id,
            )
    return chat
