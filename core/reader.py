"""Core's read path: run lifecycle only. Core never interprets a provider's signals.

A run core knows has ended — the caller says so, or the run's ledger holds its
``RunEnded`` — reads ``ended`` whatever its transcript or spool say, and it is read
transcript-only (``runtime_dir=""``), so spool residue can never contaminate a terminal
state. The task state comes from the ledger's declarations, for live and ended runs
alike. Everything else — state, activity, the pending dialog and approval — is forwarded
unchanged from what the adapter composed.
"""

from __future__ import annotations

from agentspool.core.ledger import Lifecycle
from agentspool.core.seam import Adapter, Chat, Evidence


def read_run(
    adapter: Adapter,
    run_id: str,
    runtime_dir: str,
    transcript_path: str,
    *,
    ended: bool = False,
    lifecycle: Lifecycle | None = None,
) -> Chat:
    life = lifecycle or Lifecycle()
    if life.ended is not None:
        ended = True
    if not ended:
        chat = adapter.read_chat(run_id, runtime_dir, transcript_path)
    else:
        chat = adapter.read_chat(run_id, "", transcript_path)
        chat.state = "ended"
        status = life.ended.exit_status if life.ended is not None else None
        detail = "the run ended" + (f" (exit status {status})" if status is not None else "")
        at = life.ended.at if life.ended is not None else 0.0
        chat.evidence = [Evidence(source="core:lifecycle", at=at, detail=detail), *chat.evidence]
    if life.declared is not None:
        chat.task_state, chat.task_reason = life.task_state, life.task_reason
        chat.evidence.append(
            Evidence(
                source=life.declared.source or "core:declaration",
                at=life.declared.at,
                detail=f"task {life.task_state}"
                + (f": {life.task_reason}" if life.task_reason else ""),
            )
        )
    return chat
