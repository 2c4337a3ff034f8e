"""The run's ledger: the durable, append-only record of what core decides about a run.

The hook spool holds a provider's raw evidence; the ledger holds canonical events that
are core's to know — task-state declarations (``agentspool lifecycle``) and the run's
end (``RunEnded``, written by the spawn wrapper). It lives beside the spool in the run dir
as ``ledger.spool``, framed exactly like the spool (one ``write(2)`` per record on
``O_APPEND``, length + CRC, a torn tail skipped: ADR 0001), so it has the spool's crash
discipline. Ended runs are read transcript-only, but their ledger is still read: a run
keeps its declared task state after it ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import msgspec

from agentspool.core import reducer
from agentspool.core.events import RunEnded, TaskStateDeclared
from agentspool.core.seam import TaskState
from agentspool.spool.read import read_all
from agentspool.spool.write import LEDGER_FILE, append_record

_RECORD = "Ledger"

LedgerEvent = TaskStateDeclared | RunEnded
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(LedgerEvent).decode


class Lifecycle(msgspec.Struct, frozen=True, kw_only=True):
    """What a run's ledger says: the declared task state and whether the run ended."""

    task_state: TaskState = "active"
    task_reason: str = ""
    declared: TaskStateDeclared | None = None
    """The declaration that set the current task state (``None``: never declared)."""
    ended: RunEnded | None = None
    undecodable: int = 0


def append(run_dir: str, event: LedgerEvent) -> None:
    append_record(run_dir, _RECORD, _encode(event), name=LEDGER_FILE)


def read(run_dir: str) -> list[LedgerEvent]:
    """The ledger's events in append order (undecodable records left out)."""
    events, _ = _read(run_dir)
    return events


def _read(run_dir: str) -> tuple[list[LedgerEvent], int]:
    events: list[LedgerEvent] = []
    bad = 0
    for record in read_all(run_dir, LEDGER_FILE):
        try:
            events.append(_decode(record.payload))
        except msgspec.DecodeError:
            bad += 1  # a record of a newer version, or damaged past its CRC
    return events, bad


def lifecycle(run_dir: str) -> Lifecycle:
    """Fold the ledger: declarations through the one reducer, the last ``RunEnded``."""
    if not os.path.exists(os.path.join(run_dir, LEDGER_FILE)):
        return Lifecycle()
    events, bad = _read(run_dir)
    return fold(events, undecodable=bad)


def fold(events: Iterable[LedgerEvent], *, undecodable: int = 0) -> Lifecycle:
    """What the ledger says after ``events``: the last of ``replayed``."""
    life = Lifecycle(undecodable=undecodable)
    for _, after in replayed(events, undecodable=undecodable):
        life = after
    return life


def replayed(
    events: Iterable[LedgerEvent], *, undecodable: int = 0
) -> Iterator[tuple[LedgerEvent, Lifecycle]]:
    """Each event with what the ledger says once it is folded (``agentspool replay``)."""
    state = reducer.INITIAL
    declared: TaskStateDeclared | None = None
    ended: RunEnded | None = None
    for event in events:
        if isinstance(event, RunEnded):
            ended = event
        else:
            after = reducer.step(state, event)
            if after is not state:
                declared = event
            state = after
        yield (
            event,
            Lifecycle(
                task_state=state.task_state,
                task_reason=state.task_reason,
                declared=declared,
                ended=ended,
                undecodable=undecodable,
            ),
        )
