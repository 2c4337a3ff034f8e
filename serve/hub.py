"""The one place every state transition is published: ``TransitionHub``.

One thread follows the runs (``agentspool.RunFollower``: the ticks ``agentspool watch``
makes) and publishes each ``RunEvent`` a tick yields, numbered, to every subscriber — the
SSE streams now; a metrics exporter, OTLP or notifications later subscribe the same way.
The last ``window`` events are kept, so a client that reconnects with the id of the last
event it saw is sent exactly those it missed (docs/adr/0036-serve-events.md).

Every call into the library that reads runs goes through ``library`` (one lock): the
adapters keep incremental read caches that are not made for two threads at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from agentspool import RunChange, RunEvent, RunFollower, RunSummary

EVENT_WINDOW = 4096
"""Events kept for clients that reconnect (``--event-window``)."""


@dataclass(frozen=True)
class Published:
    """One transition as the hub numbered it."""

    seq: int
    """1, 2, 3, … in publication order, within one hub (one ``serve`` process)."""
    event: RunEvent


Subscriber = Callable[[Published], None]
"""Called in the hub's thread for each event, in order: it must not block (hand the event
to its own queue or loop)."""


@dataclass(frozen=True)
class Attached:
    """What a subscriber gets when it attaches: the events it missed (resumed), or the
    runs as they are now (a fresh start), and the number of the last event published."""

    resumed: bool
    backlog: list[Published]
    """``resumed``: every event after the one it named, in order; else empty."""
    snapshot: list[RunEvent]
    """Not ``resumed``: a ``seen`` event for every run known now (what ``watch`` prints
    when it starts); else empty."""
    head: int
    reason: str = ""
    """Not ``resumed``: why — ``fresh`` (no id given), ``unknown`` (an id of another
    ``serve`` process, or none it made), ``too_old`` (past the window)."""


class TransitionHub:
    def __init__(
        self, follower: RunFollower, *, window: int = EVENT_WINDOW, interval: float = 0.0
    ) -> None:
        self.follower = follower
        self.interval = interval or follower.interval
        self.library = threading.RLock()
        """Held around every library call that reads runs (the ticks, the API's reads)."""
        self.epoch = f"{time.time_ns():x}"
        """Names this hub in event ids: an id another process made is never taken as ours."""
        self._lock = threading.Lock()  # the numbering, the window and the subscribers
        self._window: deque[Published] = deque(maxlen=window)
        self._head = 0
        self._subscribers: list[Subscriber] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failed = ""
        """The last tick's error, if it failed (the next tick tries again)."""

    # -- following ---------------------------------------------------------------

    def tick(self) -> list[Published]:
        """Poll once and publish what moved."""
        with self.library:
            events = self.follower.events()
        return self.publish(events)

    def publish(self, events: list[RunEvent]) -> list[Published]:
        with self._lock:
            out = []
            for event in events:
                self._head += 1
                published = Published(self._head, event)
                self._window.append(published)
                out.append(published)
            subscribers = list(self._subscribers)
            # Delivered under the lock, so a subscriber attaching now either is in this
            # list or finds these events in the window: never both, never neither.
            for published in out:
                for deliver in subscribers:
                    deliver(published)
        return out

    def start(self) -> None:
        """The first tick here (so the API answers from it at once), then a thread."""
        self.tick()
        self._thread = threading.Thread(target=self._follow, name="agentspool-hub", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        start = time.monotonic()
        while not self._stop.is_set():
            elapsed = time.monotonic() - start
            if self._stop.wait(self.interval - elapsed % self.interval):
                break
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - one bad tick must not end the stream
                self.failed = f"{type(exc).__name__}: {exc}"
            else:
                self.failed = ""

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    # -- subscribing ---------------------------------------------------------------

    def subscribe(self, deliver: Subscriber) -> Callable[[], None]:
        """Call ``deliver`` for every event published from now on; returns the
        unsubscribe."""
        with self._lock:
            self._subscribers.append(deliver)
        return lambda: self._unsubscribe(deliver)

    def _unsubscribe(self, deliver: Subscriber) -> None:
        with self._lock:
            if deliver in self._subscribers:
                self._subscribers.remove(deliver)

    def attach(self, deliver: Subscriber, last_id: str) -> tuple[Attached, Callable[[], None]]:
        """Subscribe, and say what comes before the live events: after ``last_id`` (an
        ``event_id``), the events missed since; otherwise a snapshot of every run."""
        with self._lock:
            attached = self._resume(last_id)
            self._subscribers.append(deliver)
        return attached, lambda: self._unsubscribe(deliver)

    def _resume(self, last_id: str) -> Attached:
        if not last_id:
            return self._fresh("fresh")
        epoch, _, number = last_id.partition(":")
        if epoch != self.epoch or not number.isdigit() or int(number) > self._head:
            return self._fresh("unknown")
        seen = int(number)
        oldest = self._window[0].seq if self._window else self._head + 1
        if seen + 1 < oldest:
            return self._fresh("too_old")
        backlog = [p for p in self._window if p.seq > seen]
        return Attached(resumed=True, backlog=backlog, snapshot=[], head=self._head)

    def _fresh(self, reason: str) -> Attached:
        poll = self.follower.poll
        now = time.time()
        runs = list(poll.runs.items()) if poll is not None else []
        snapshot = [RunChange(key, None, run).event(now) for key, run in runs]
        return Attached(
            resumed=False, backlog=[], snapshot=snapshot, head=self._head, reason=reason
        )

    def event_id(self, seq: int) -> str:
        return f"{self.epoch}:{seq}"

    @property
    def head(self) -> int:
        return self._head

    # -- reading -------------------------------------------------------------------

    def runs(self, *, include_ended: bool = False) -> list[RunSummary]:
        """What ``agentspool ls [--all]`` lists, from the last tick."""
        with self.library:
            return self.follower.as_ls(include_ended=include_ended)

    def provider_of(self, run_id: str) -> str:
        """The provider of an armed run the last tick saw; ``""`` if none."""
        with self.library:
            poll = self.follower.poll
            runs = poll.runs.values() if poll is not None else ()
            return next((r.provider for r in runs if r.run_id == run_id), "")
