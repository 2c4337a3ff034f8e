"""Core's read path: run lifecycle only. Core never interprets a provider's signals.

A run core knows has ended reads ``ended`` whatever its transcript or spool say, and it
is read transcript-only (``runtime_dir=""``), so spool residue can never contaminate a
terminal state. Everything else — state, activity, the pending dialog and approval — is
forwarded unchanged from what the adapter composed.
"""

from __future__ import annotations

from agentspool.core.seam import Adapter, Chat, Evidence


def read_run(
    adapter: Adapter, run_id: str, runtime_dir: str, transcript_path: str, *, ended: bool = False
) -> Chat:
    if not ended:
        return adapter.read_chat(run_id, runtime_dir, transcript_path)
    chat = adapter.read_chat(run_id, "", transcript_path)
    chat.state = "ended"
    chat.evidence = [Evidence(source="core:lifecycle", detail="the run ended"), *chat.evidence]
    return chat
