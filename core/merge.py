"""Folding events from several evidence channels, incrementally, in evidence-time order.

Channels (hook spool, transcript, native status) are each appended in their own order
and lag each other (a transcript can trail its CLI's hooks by 10-200 ms). Events are
folded in evidence-time order; those older than every channel's newest event minus
``SETTLE`` seconds are folded once into a checkpoint and never again, so a re-read folds
only the recent tail: the cost of a read follows what was appended, not the history.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from operator import attrgetter

from agentspool.core import reducer
from agentspool.core.events import Event

SETTLE = 10.0
_at = attrgetter("at")


class EventMerger:
    def __init__(self) -> None:
        self.settled = reducer.INITIAL
        self.tail: list[Event] = []
        self._newest: dict[str, float] = {}

    def add(self, channel: str, events: Iterable[Event]) -> None:
        events = list(events)
        self.tail += events
        newest = max(map(_at, events), default=0.0)
        if newest > self._newest.get(channel, 0.0):
            self._newest[channel] = newest

    def state(self, extra: Iterable[Event] = ()) -> reducer.RunState:
        """The fold of everything added, plus ``extra`` (not kept: e.g. native status)."""
        self.tail.sort(key=_at)  # stable: same-time events keep arrival order
        if self._newest:
            horizon = min(self._newest.values()) - SETTLE
            cut = bisect_right(self.tail, horizon, key=_at)
            if cut:
                self.settled = reducer.fold(self.tail[:cut], self.settled)
                del self.tail[:cut]
        extra = list(extra)
        pending = sorted([*self.tail, *extra], key=_at) if extra else self.tail
        return reducer.fold(pending, self.settled)
