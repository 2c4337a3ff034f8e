"""Canonical events: what every adapter turns its provider's signals into.

Hook payloads, transcript records and native status files are normalized by the adapter
into these; ``reducer.step`` folds them. Each event names the evidence it came from
(``source``: ``<channel>:<signal>``) and its evidence time (``at``, seconds since the
epoch), and the transcript identity it belongs to (``epoch``; ``""`` = not tied to one).

Turn leases: ``turn_id`` is the provider's turn identity (a prompt id, a turn id, …).
``""`` means the evidence is not bound to a turn (e.g. a background subagent's
permission prompt, which can open after the main turn has ended).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentspool.core.seam import PendingDialog, TaskState


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    at: float = 0.0
    source: str = ""
    epoch: str = ""


class SessionStarted(_Event, tag="session.started", frozen=True, kw_only=True):
    """A transcript identity began (startup, resume, /clear, fork) or was re-announced."""

    how: str = "startup"


class TurnStarted(_Event, tag="turn.started", frozen=True, kw_only=True):
    turn_id: str


class ToolStarted(_Event, tag="tool.started", frozen=True, kw_only=True):
    turn_id: str = ""
    tool_use_id: str
    tool_name: str = ""


class ToolFinished(_Event, tag="tool.finished", frozen=True, kw_only=True):
    turn_id: str = ""
    tool_use_id: str


class InputRequested(_Event, tag="interaction.input_requested", frozen=True, kw_only=True):
    """The agent waits on the operator: a permission prompt or a dialog is open.

    Without ``tool_use_id`` and ``tool_name`` it is unspecific ("some prompt is open",
    e.g. a notification or a status file): it opens a wait when none is known but never
    replaces a specific one.
    """

    turn_id: str = ""
    kind: Literal["approval", "question"]
    tool_use_id: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = {}
    agent_id: str = ""
    dialog: PendingDialog | None = None


class InputResolved(_Event, tag="interaction.input_resolved", frozen=True, kw_only=True):
    """The open prompt/dialog is gone (answered, approved, denied or dismissed).

    ``tool_use_id == ""`` resolves whatever is open.
    """

    tool_use_id: str = ""


class TurnStopped(_Event, tag="turn.stopped", frozen=True, kw_only=True):
    turn_id: str = ""
    """``""`` ends whichever turn is open."""
    outcome: Literal["completed", "interrupted", "failed"] = "completed"
    background: tuple[str, ...] | None = None
    """Background tasks still running after this turn (their work is not over);
    ``None`` when the signal does not say (the known set is kept)."""


class BackgroundFinished(_Event, tag="background.finished", frozen=True, kw_only=True):
    task_id: str


class SessionEnded(_Event, tag="session.ended", frozen=True, kw_only=True):
    """The agent process ended this transcript identity (exit, or found dead)."""

    reason: str = ""


class TaskStateDeclared(_Event, tag="state.task_state", frozen=True, kw_only=True):
    """An explicit lifecycle declaration (``agentspool lifecycle``); never inferred."""

    task_state: TaskState
    reason: str = ""


class RunEnded(_Event, tag="run.ended", frozen=True, kw_only=True):
    """The run reached its terminal outcome: its agent process exited (the spawn wrapper
    saw it). Core's, not the reducer's: a run that ended reads ``ended`` whatever its
    evidence says (``core.reader``). Process exit never means the *task* is done."""

    exit_status: int | None = None
    """The agent's exit status; ``128 + N`` when signal N killed it."""
    transcript_path: str = ""
    """Where the run's transcript was when it ended (its spool may be swept since)."""


Event = (
    SessionStarted
    | TurnStarted
    | ToolStarted
    | ToolFinished
    | InputRequested
    | InputResolved
    | TurnStopped
    | BackgroundFinished
    | SessionEnded
    | TaskStateDeclared
)
