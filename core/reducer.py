"""The one pure reducer: ``step(state, event) -> state``. Live reads and replays both fold
canonical events with it, so they cannot disagree.

Turn lifecycle, owned here and nowhere else::

    no turn ──turn.started──▶ active ──turn.stopped──▶ no turn (turn id finalized)
                               │  ▲
          input_requested ─────┘  └──── input_resolved / tool.finished

* A turn has an identity (its lease). Evidence of a finalized turn, or of a transcript
  identity (``epoch``) other than the current one, is stale: it changes nothing.
* Each turn is finalized exactly once, however many signals report its end.
* An open prompt is a continuation boundary inside the turn, not its end; it is cleared
  by the tool's result, by ``input_resolved`` or by the turn's end. A prompt bound to no
  turn (a background subagent's) survives the main turn's end.
* ``activity`` changes only on mapped evidence; nothing here reads a clock. With no
  evidence at all it is ``unknown``.
* ``task_state`` changes only through ``state.task_state`` declarations; a blocked
  declaration needs a reason; an exact repeat is a no-op; process exit never means done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from agentspool.core.events import (
    BackgroundFinished,
    Event,
    InputRequested,
    InputResolved,
    SessionEnded,
    SessionStarted,
    TaskStateDeclared,
    ToolFinished,
    ToolStarted,
    TurnStarted,
    TurnStopped,
)
from agentspool.core.seam import Activity, ChatState, Evidence, TaskState


class RunState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    epoch: str = ""
    turn_id: str = ""
    """The open turn's lease; ``""`` when no turn is open."""
    turns: int = 0
    """Turns started in this transcript identity."""
    finished: tuple[str, ...] = ()
    """The most recent finalized turn ids, oldest first (bounded: late evidence arrives
    within seconds, not hundreds of turns later; an unbounded set made a long fold
    quadratic)."""
    finished_ids: frozenset[str] = frozenset()
    """``finished`` as a set: every step asks whether its turn is finalized, and a scan
    of the tuple made that most of a long fold's cost."""
    open_tools: frozenset[str] = frozenset()
    background: frozenset[str] = frozenset()
    pending: InputRequested | None = None
    activity: Activity = "unknown"
    task_state: TaskState = "active"
    task_reason: str = ""
    evidence: Evidence | None = None


INITIAL = RunState()
FINISHED_KEPT = 64


def _finalize(state: RunState, turn: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """``finished`` and ``finished_ids`` with ``turn`` added. (Passed to ``replace`` as
    plain keywords: a ``**`` merge there cost six times the whole replace.)"""
    if not turn or turn in state.finished_ids:
        return state.finished, state.finished_ids
    finished = (*state.finished[-(FINISHED_KEPT - 1) :], turn)
    return finished, frozenset(finished)


def _ev(event: Event, detail: str = "") -> Evidence:
    return Evidence(
        source=event.source or str(type(event).__struct_config__.tag), at=event.at, detail=detail
    )


def step(state: RunState, event: Event) -> RunState:
    """The transition function. Pure: same inputs, same output; no I/O, no clock."""
    transition = _IDENTITY_BOUND.get(type(event))
    if transition is not None:
        if event.epoch and state.epoch and event.epoch != state.epoch:
            return state  # evidence of a superseded transcript identity
        return transition(state, event)
    if isinstance(event, SessionStarted):
        return _session_started(state, event)
    if isinstance(event, TaskStateDeclared):
        return _declare(state, event)
    raise TypeError(f"not a canonical event: {event!r}")


def _session_started(state: RunState, event: SessionStarted) -> RunState:
    if event.epoch and event.epoch != state.epoch:
        # A new transcript identity (/clear, fork, first start): a fresh chat.
        return msgspec.structs.replace(
            INITIAL,
            epoch=event.epoch,
            activity="idle",
            task_state=state.task_state,
            task_reason=state.task_reason,
            evidence=_ev(event, f"session {event.epoch}"),
        )
    if state.activity == "unknown":
        return msgspec.structs.replace(state, activity="idle", evidence=_ev(event))
    return state


def _opens_turn(state: RunState, event: ToolStarted | InputRequested) -> RunState:
    """Evidence naming a turn we never saw start opens it (out-of-order evidence)."""
    if event.turn_id and event.turn_id != state.turn_id:
        return _turn_started(
            state,
            TurnStarted(turn_id=event.turn_id, at=event.at, source=event.source, epoch=event.epoch),
        )
    return state


def _tool_started(state: RunState, event: ToolStarted) -> RunState:
    if event.turn_id in state.finished_ids:
        return state
    state = _opens_turn(state, event)
    if not state.turn_id:
        return state  # a tool outside any open turn proves nothing about the main turn
    if state.pending:
        return msgspec.structs.replace(
            state, open_tools=state.open_tools | {event.tool_use_id}, activity="needs_input"
        )
    return msgspec.structs.replace(
        state,
        open_tools=state.open_tools | {event.tool_use_id},
        activity="working",
        evidence=_ev(event, event.tool_name),
    )


def _tool_finished(state: RunState, event: ToolFinished) -> RunState:
    pending = _pending_for(state, event.tool_use_id)
    if event.tool_use_id not in state.open_tools and not pending:
        return state
    state = msgspec.structs.replace(state, open_tools=state.open_tools - {event.tool_use_id})
    return _resolve(state, event) if pending else state


def _input_requested(state: RunState, event: InputRequested) -> RunState:
    if event.turn_id and event.turn_id in state.finished_ids:
        return state
    if state.pending is not None and not (event.tool_use_id or event.tool_name):
        return state  # an unspecific wait never replaces what is known to be open
    state = _opens_turn(state, event)
    return msgspec.structs.replace(
        state,
        pending=event,
        activity="needs_input",
        evidence=_ev(event, f"{event.kind} {event.tool_name}".strip()),
    )


def _input_resolved(state: RunState, event: InputResolved) -> RunState:
    if state.pending is None or (
        event.tool_use_id
        and state.pending.tool_use_id
        and event.tool_use_id != state.pending.tool_use_id
    ):
        return state
    return _resolve(state, event)


def _background_finished(state: RunState, event: BackgroundFinished) -> RunState:
    if event.task_id not in state.background:
        return state
    background = state.background - {event.task_id}
    activity = state.activity
    if not background and not state.turn_id and state.pending is None:
        activity = "idle"
    return msgspec.structs.replace(
        state, background=background, activity=activity, evidence=_ev(event, event.task_id)
    )


def _session_ended(state: RunState, event: SessionEnded) -> RunState:
    return _end_turn(
        state,
        state.turn_id,
        event,
        event.reason,
        pending=None,
        background=frozenset(),
        activity="idle",
    )


def _end_turn(
    state: RunState,
    turn: str,
    event: Event,
    detail: str,
    *,
    pending: InputRequested | None,
    background: frozenset[str],
    activity: Activity,
) -> RunState:
    """No turn open any more, ``turn`` finalized, its tools gone."""
    finished, finished_ids = _finalize(state, turn)
    return msgspec.structs.replace(
        state,
        turn_id="",
        finished=finished,
        finished_ids=finished_ids,
        open_tools=frozenset(),
        background=background,
        pending=pending,
        activity=activity,
        evidence=_ev(event, detail),
    )


def _unbound_prompt(state: RunState) -> InputRequested | None:
    """The open prompt that outlives its turn: one bound to none (a background
    subagent's permission prompt)."""
    pending = state.pending
    return pending if pending is not None and not pending.turn_id else None


def _pending_for(state: RunState, tool_use_id: str) -> bool:
    return state.pending is not None and state.pending.tool_use_id == tool_use_id != ""


def _resolve(state: RunState, event: Event) -> RunState:
    activity: Activity = "working" if state.turn_id or state.background else "idle"
    return msgspec.structs.replace(
        state, pending=None, activity=activity, evidence=_ev(event, "prompt closed")
    )


def _turn_started(state: RunState, event: TurnStarted) -> RunState:
    if event.turn_id in state.finished_ids or event.turn_id == state.turn_id:
        return state
    pending = _unbound_prompt(state)
    finished, finished_ids = _finalize(state, state.turn_id)
    return msgspec.structs.replace(
        state,
        turn_id=event.turn_id,
        turns=state.turns + 1,
        finished=finished,
        finished_ids=finished_ids,
        open_tools=frozenset(),
        pending=pending,
        activity="needs_input" if pending else "working",
        evidence=_ev(event, f"turn {event.turn_id}"),
    )


def _turn_stopped(state: RunState, event: TurnStopped) -> RunState:
    turn = event.turn_id or state.turn_id
    if not turn or turn in state.finished_ids:
        return state
    if turn != state.turn_id:
        # The end of a turn we never saw start (evidence arrived out of order): finalize
        # it so its late signals stay stale, but leave the open turn alone.
        finished, finished_ids = _finalize(state, turn)
        return msgspec.structs.replace(state, finished=finished, finished_ids=finished_ids)
    pending = _unbound_prompt(state)
    background = state.background if event.background is None else frozenset(event.background)
    activity: Activity = "needs_input" if pending else ("working" if background else "idle")
    return _end_turn(
        state, turn, event, event.outcome, pending=pending, background=background, activity=activity
    )


def _declare(state: RunState, event: TaskStateDeclared) -> RunState:
    """A reason belongs to ``blocked`` only: leaving ``blocked`` drops it."""
    reason = event.reason.strip() if event.task_state == "blocked" else ""
    if event.task_state == "blocked" and not reason:
        return state
    if (event.task_state, reason) == (state.task_state, state.task_reason):
        return state
    return msgspec.structs.replace(state, task_state=event.task_state, task_reason=reason)


_IDENTITY_BOUND: dict[type, Callable[[RunState, Any], RunState]] = {
    TurnStarted: _turn_started,
    ToolStarted: _tool_started,
    ToolFinished: _tool_finished,
    InputRequested: _input_requested,
    InputResolved: _input_resolved,
    TurnStopped: _turn_stopped,
    BackgroundFinished: _background_finished,
    SessionEnded: _session_ended,
}
"""Transitions of the events that belong to one transcript identity: evidence of an
identity other than the current one is stale. (``SessionStarted`` begins an identity;
a task-state declaration outlives it.)"""


def fold(events: Iterable[Event], state: RunState = INITIAL) -> RunState:
    for event in events:
        state = step(state, event)
    return state


def chat_state(state: RunState) -> ChatState:
    """Project the fold onto the five-word wire vocabulary (``ended`` is core's)."""
    if state.pending is not None:
        return "question" if state.pending.kind == "question" else "needs_input"
    if state.turn_id or state.background:
        return "working"
    return "needs_input" if state.turns else "idle"
