"""Core's read path: run lifecycle only. Core never interprets a provider's signals.

A run core knows has ended — the caller says so, the run's ledger holds its
``RunEnded``, or the adapter found its agent process gone (``Chat.process``) — reads
``ended`` whatever its transcript or spool say, and it is read
transcript-only (``runtime_dir=""``), so spool residue can never contaminate a terminal
state. The task state comes from the ledger's declarations, for live and ended runs
alike. Everything else — state, activity, the pending dialog and approval — is forwarded
unchanged from what the adapter composed.
"""

from __future__ import annotations

from agentspool.core.ledger import Lifecycle
from agentspool.core.seam import Adapter, Chat, Evidence, Session


def read_run(
    adapter: Adapter,
    run_id: str,
    runtime_dir: str,
    transcript_path: str | None,
    *,
    ended: bool = False,
    lifecycle: Lifecycle | None = None,
) -> Chat:
    life = lifecycle or Lifecycle()
    detail, at = "the run ended", 0.0
    if life.ended is not None:
        ended, at = True, life.ended.at
        if life.ended.exit_status is not None:
            detail += f" (exit status {life.ended.exit_status})"
    if not ended:
        chat = adapter.read_chat(run_id, runtime_dir, transcript_path)
        if chat.process == "gone":
            # Its agent process is gone (exit, crash, SIGKILL): a terminal outcome. The
            # live read already folded that death (nothing open, nothing working), so
            # spool residue cannot outlive it; it is kept, not re-read transcript-only.
            chat.state = "ended"
            detail = f"the agent process {chat.pid} is gone"
            chat.evidence = [Evidence(source="core:lifecycle", detail=detail), *chat.evidence]
    else:
        if transcript_path is None:  # located from its spool, then read without it
            transcript_path = adapter.locate_transcript(run_id, runtime_dir)
        chat = adapter.read_chat(run_id, "", transcript_path)
        # An adapter that keeps live state per run (spool views) can let it go now.
        if adapter.live_state is not None:
            adapter.live_state.release_run(run_id)
        chat.state = "ended"
        chat.evidence = [Evidence(source="core:lifecycle", at=at, detail=detail), *chat.evidence]
    if life.declared is not None:
        chat.task_state, chat.task_reason = life.task_state, life.task_reason
        chat.task_declared = True
        chat.evidence.append(
            Evidence(
                source=life.declared.source or "core:declaration",
                at=life.declared.at,
                detail=f"task {life.task_state}"
                + (f": {life.task_reason}" if life.task_reason else ""),
            )
        )
    return chat


def read_session(adapter: Adapter, session: Session, *, with_subagents: bool = False) -> Chat:
    """A session no run covers, from what its CLI keeps; ``ended`` once its process is
    gone (the same rule as ``read_run``). ``with_subagents``: the subagents' records too,
    from their own files. An adapter without the ``discovery`` part reads the session's
    transcript alone."""
    discovery = adapter.discovery
    if discovery is None:
        chat = adapter.read_chat(session.session_id, "", session.transcript_path)
    elif with_subagents:
        chat = discovery.read_session_with_subagents(session)
    else:
        chat = discovery.read_session(session)
    if chat.process == "gone":
        chat.state = "ended"
        detail = f"the agent process {chat.pid} is gone"
        chat.evidence = [Evidence(source="core:lifecycle", detail=detail), *chat.evidence]
    return chat
