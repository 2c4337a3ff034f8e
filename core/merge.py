"""Folding events from several evidence channels, incrementally, in evidence order.

Channels (hook spool, transcript, native status) are each appended in their own order
and lag each other (a transcript can trail its CLI's hooks by 10-200 ms). A channel's
file order is the truth about its own history: a wall clock that steps back (an NTP
correction, a VM resume, WSL clock drift) must never reorder it. So each channel gets a
monotonic evidence clock (``ChannelClock``, docs/adr/0011-file-order-within-a-source.md)
and the channels, each already in order, are interleaved by that clock. Events keep the
time their source wrote (``Event.at``, what users are shown); the corrected time only
orders them.

Events older than every channel's newest minus ``SETTLE`` seconds are folded once into a
checkpoint and never again, so a re-read folds only the recent tail: the cost of a read
follows what was appended, not the history. A channel's clock never runs backwards, so
nothing a channel appends later can belong before its checkpoint.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from agentspool.core import reducer
from agentspool.core.events import Event

SETTLE = 10.0
TOLERANCE = 2.0
"""Seconds a channel may run backwards without it being a clock step: concurrent hooks
append a few ms out of order, one CLI writes a compaction's records up to
0.25 s out of order (tests/live/captures/claude-code/tui-compact). Within it, order is clamped."""
ERA = 1e10
"""Evidence times of successive clock eras are kept apart by this (more seconds than
any wall clock will read), so one float orders (era, wall time)."""
ERAS_KEPT = 16


class ChannelClock:
    """One channel's evidence time, monotonic in file order: (clock era, wall time).

    One machine has one clock; it runs in *eras* separated by backward steps, and within
    an era wall times of every channel compare directly. A channel's era advances when
    its own times show a step:

    * a time within ``TOLERANCE`` behind the channel is jitter, clamped to where it is;
    * a time further behind opens a *lag*, placed tentatively in the next era (after
      everything the other channels wrote before the step). If the channel then moves
      on by more than ``TOLERANCE`` while still behind, the clock stepped back: the next
      era begins. If instead it comes back, the lag was records written late with early
      stamps (a ``/compact`` command's records are stamped when it was typed, written
      when the summary is done): they are put back where the channel was;
    * an event without a time (``at <= 0``) stays where the channel is.
    """

    __slots__ = ("era", "era_start", "eras", "lag_count", "lag_from", "lag_newest", "newest")

    def __init__(self) -> None:
        self.era = 0
        self.newest = 0.0
        """The evidence time of the channel's latest event outside a lag (0: none yet)."""
        self.era_start = 0.0
        """The first wall time of the current era."""
        self.eras: list[tuple[int, float, float]] = []
        """Earlier eras: (era, first wall time, last wall time)."""
        self.lag_from: float | None = None
        """The wall time that opened the current lag, if the channel is behind itself."""
        self.lag_newest = 0.0
        self.lag_count = 0

    def place(self, events: Iterable[Event], keys: list[float]) -> None:
        """Append each event's evidence time to ``keys``, in order."""
        era, newest, lag_from, lag_newest = self.era, self.newest, self.lag_from, self.lag_newest
        base = era * ERA
        for event in events:
            wall = event.at
            if wall > 0.0:
                key = wall + base
                if key >= newest - TOLERANCE:
                    if lag_from is not None:
                        # Back where it was: the lag was late writing, not a step.
                        keys[len(keys) - self.lag_count :] = [newest] * self.lag_count
                        lag_from = None
                    if key > newest:
                        if not newest:
                            self.era_start = wall
                        newest = key
                elif lag_from is None or wall < lag_from - TOLERANCE:
                    if lag_from is None:
                        lag_newest = 0.0
                        self.lag_count = 0
                    lag_from = wall  # behind itself: wait and see (or further behind)
                    lag_newest = max(lag_newest, wall + base + ERA)
                elif wall - lag_from > TOLERANCE:
                    # Moved on while behind: the clock stepped back at ``lag_from``.
                    self.eras = [
                        *self.eras[-(ERAS_KEPT - 1) :],
                        (era, self.era_start, newest - base),
                    ]
                    era += 1
                    base = era * ERA
                    self.era_start = lag_from
                    newest = max(lag_newest, wall + base)
                    lag_from = None
                else:
                    lag_newest = max(lag_newest, wall + base + ERA)
            if lag_from is None:
                keys.append(newest)
            else:
                keys.append(lag_newest)
                self.lag_count += 1
        self.era, self.newest, self.lag_from, self.lag_newest = era, newest, lag_from, lag_newest

    def now(self, wall: float) -> float:
        """Where a snapshot stamped ``wall`` on this clock belongs (the native status
        file; ``0.0``: unknown). After a step its stamp may come from either side: it is
        read as from the era (or the lag) whose wall times lie nearest, the latest on a
        tie; stamped before all of them, as from a step the channel has not shown yet."""
        if wall <= 0.0 or not self.newest:
            return max(wall, 0.0)
        base = self.era * ERA
        starts = [self.era_start, *(start for _, start, _ in self.eras)]
        if self.lag_from is not None:
            starts.append(self.lag_from)
        if wall < min(starts) - TOLERANCE:
            # Stamped before anything the channel ever wrote: the clock stepped back
            # and the channel has not written since.
            return wall + base + ERA
        if self.lag_from is not None:
            lag = _distance(wall, self.lag_from, self.lag_newest - base - ERA)
        else:
            lag = float("inf")
        best = _distance(wall, self.era_start, self.newest - base)
        if lag <= best:
            return wall + base + ERA
        where = wall + base
        for era, start, end in reversed(self.eras):
            distance = _distance(wall, start, end)
            if distance < best:
                best, where = distance, wall + era * ERA
        return where


def _distance(wall: float, start: float, end: float) -> float:
    return start - wall if wall < start else max(wall - end, 0.0)


class _Channel:
    __slots__ = ("clock", "events", "keys")

    def __init__(self) -> None:
        self.clock = ChannelClock()
        self.events: list[Event] = []
        """Not yet settled, in file order."""
        self.keys: list[float] = []
        """Their corrected times (non-decreasing)."""


class EventMerger:
    def __init__(self) -> None:
        self.settled = reducer.INITIAL
        self._channels: dict[str, _Channel] = {}

    def add(self, channel: str, events: Iterable[Event]) -> None:
        """Events appended to ``channel`` since the last ``add``, in the channel's order."""
        events = list(events)
        found = self._channels.get(channel)
        if found is None:
            found = self._channels[channel] = _Channel()
        found.clock.place(events, found.keys)
        found.events += events

    def state(self, extra: Iterable[Event] = ()) -> reducer.RunState:
        """The fold of everything added, plus ``extra`` (not kept: e.g. native status,
        placed as a snapshot of now on the channels' clocks)."""
        self._settle()
        return reducer.fold(self.pending(extra), self.settled)

    def pending(self, extra: Iterable[Event] = ()) -> list[Event]:
        """What is not settled yet, plus ``extra``, in the order it is folded."""
        channels = [c for c in self._channels.values() if c.events]
        placed = [(self._snapshot_time(e.at), e) for e in extra]
        if len(channels) == 1 and not placed:
            return list(channels[0].events)
        keys: list[float] = []
        events: list[Event] = []
        for channel in channels:  # ties keep the order channels were first added
            keys += channel.keys
            events += channel.events
        for key, event in placed:
            keys.append(key)
            events.append(event)
        # Each channel is a sorted run: the sort merges the runs; it is stable.
        return [events[i] for i in sorted(range(len(keys)), key=keys.__getitem__)]

    def _snapshot_time(self, wall: float) -> float:
        return max((c.clock.now(wall) for c in self._channels.values()), default=wall)

    def _settle(self) -> None:
        """Fold into the checkpoint what no channel can precede any more."""
        newest = [c.clock.newest for c in self._channels.values() if c.clock.newest > 0.0]
        if not newest:
            return
        horizon = min(newest) - SETTLE
        ripe: list[_Channel] = []
        cuts: list[int] = []
        for channel in self._channels.values():
            cut = bisect_right(channel.keys, horizon)
            if cut:
                ripe.append(channel)
                cuts.append(cut)
        if not ripe:
            return
        if len(ripe) == 1:
            settling = ripe[0].events[: cuts[0]]
        else:
            keys: list[float] = []
            events: list[Event] = []
            for channel, cut in zip(ripe, cuts, strict=True):
                keys += channel.keys[:cut]
                events += channel.events[:cut]
            settling = [events[i] for i in sorted(range(len(keys)), key=keys.__getitem__)]
        self.settled = reducer.fold(settling, self.settled)
        for channel, cut in zip(ripe, cuts, strict=True):
            del channel.keys[:cut]
            del channel.events[:cut]
