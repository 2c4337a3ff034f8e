"""``agentspool replay``: a run's history as the transitions its evidence made.

The same reducer, over the same evidence a read folds: the adapter's fresh read of the
spool, transcript and status file (traced through ``reducer.TRACE``, in fold order) and
the run's ledger (declarations and the run's end, folded by ``ledger.replayed``). The two
channels are interleaved by evidence time, each kept in its own order: a channel's time
is the latest it has shown (a record with no time, or a clock stepped back, never moves
a channel's events before its own earlier ones). A transition is a step after which the
chat state, the activity or the task state differs from before it.

Replay writes nothing. Its projections — the ledger fold (task state, the run's end) and
the composed chat state — are recomputed from evidence on every read and stored
nowhere, so replaying older evidence can never roll back a newer one (ADR 0018).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from agentspool.core import ledger
from agentspool.core.events import RunEnded
from agentspool.core.reducer import Step
from agentspool.core.seam import Activity, ChatState, TaskState

Channel = Literal["evidence", "ledger", "core"]


class Transition(msgspec.Struct, frozen=True, kw_only=True):
    """One step that changed what a read would say about the run."""

    at: float
    """Evidence time of the event (0: the evidence carries none)."""
    source: str
    """The evidence: ``hook:Stop``, ``transcript:…``, ``cli:lifecycle``, ``core:run``, …"""
    channel: Channel
    """``evidence`` (spool, transcript, status file), ``ledger``, or ``core`` (the
    agent process found gone when replayed)."""
    event: str
    """The canonical event's type (``turn.started``, ``state.task_state``, …)."""
    state: ChatState
    activity: Activity
    task_state: TaskState
    task_reason: str = ""
    changed: tuple[str, ...]
    """Which of ``state``, ``activity``, ``task_state`` (its reason included) moved."""


def _keyed(times: Iterable[float]) -> list[float]:
    """Each item's channel time: the latest evidence time the channel has shown."""
    out, latest = [], 0.0
    for at in times:
        latest = max(latest, at)
        out.append(latest)
    return out


class _Track:
    """The state, activity and task state as the merged stream has them so far, and the
    transitions that moved any of them."""

    def __init__(self) -> None:
        self.state: ChatState = "idle"
        self.activity: Activity = "unknown"
        self.task: tuple[TaskState, str] = ("active", "")
        self.out: list[Transition] = []

    def emit(
        self,
        at: float,
        source: str,
        channel: Channel,
        event: str,
        now: tuple[ChatState, Activity, tuple[TaskState, str]],
    ) -> None:
        moved = tuple(
            name
            for name, before, after in (
                ("state", self.state, now[0]),
                ("activity", self.activity, now[1]),
                ("task_state", self.task, now[2]),
            )
            if before != after
        )
        self.state, self.activity, self.task = now
        if moved:
            self.out.append(
                Transition(
                    at=at,
                    source=source,
                    channel=channel,
                    event=event,
                    state=self.state,
                    activity=self.activity,
                    task_state=self.task[0],
                    task_reason=self.task[1],
                    changed=moved,
                )
            )


def transitions(
    steps: list[Step],
    ledger_events: list[ledger.LedgerEvent],
    *,
    gone: str = "",
    gone_at: float = 0.0,
) -> list[Transition]:
    """Interleave the traced fold ``steps`` with the ledger's events; keep the steps
    that changed the state, activity or task state. ``gone``: the agent process was
    found gone when read (core then reads the run as ended), said last."""
    replayed = list(ledger.replayed(ledger_events))
    step_keys = _keyed(s.event.at for s in steps)
    ledger_keys = _keyed(e.at for e, _ in replayed)
    track = _Track()
    ended = False
    i = j = 0
    while i < len(steps) or j < len(replayed):
        # Ties go to the evidence: a declaration is made about what was already seen.
        if j >= len(replayed) or (i < len(steps) and step_keys[i] <= ledger_keys[j]):
            step = steps[i]
            i += 1
            tag = str(type(step.event).__struct_config__.tag)
            now = ("ended" if ended else step.state, step.activity, track.task)
            track.emit(step.event.at, step.event.source or tag, "evidence", tag, now)
            continue
        event, life = replayed[j]
        j += 1
        tag = str(type(event).__struct_config__.tag)
        ended = ended or isinstance(event, RunEnded)
        state = "ended" if ended else track.state
        now = (state, track.activity, (life.task_state, life.task_reason))
        track.emit(event.at, event.source or tag, "ledger", tag, now)
    if gone and not ended:
        track.emit(gone_at, "core:lifecycle", "core", gone, ("ended", track.activity, track.task))
    return track.out
