"""The runs ``ls`` lists, followed poll by poll: what changed between two polls, as the
events ``agentspool watch`` prints without a terminal and ``agentspool serve`` streams.

``RunFollower.tick`` is one ``poll_runs``: twice a second the event spool every hook
appends to is stat'ed, and only the runs whose spool grew are signed and read again;
once a second every run's signature is taken; every five seconds the CLIs' own session
files are listed again (docs/adr/0020-watch.md). A tick yields one ``RunChange`` per run
whose state or task state moved; ``RunChange.event`` is that change as a ``RunEvent``,
the one shape both commands write.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from agentspool.core.runs import RunSummary
from agentspool.core.seam import ChatState
from agentspool.polling import RunPoll, poll_runs

__all__ = [
    "DISCOVER_EVERY",
    "FULL_EVERY",
    "INTERVAL",
    "WAITING",
    "RunChange",
    "RunEvent",
    "RunFollower",
]

WAITING: tuple[ChatState, ...] = ("question", "needs_input")
"""The states in which a run waits on the operator."""
INTERVAL = 0.5
"""Seconds between ticks: what a hook records is seen within it."""
FULL_EVERY = 1.0
"""Seconds between polls that take every signature (transcripts, status files, processes:
evidence no hook writes); the ticks between stat only the event spools hooks append to."""
DISCOVER_EVERY = 5.0
"""Seconds between listings of the CLIs' own session files (a glob over every
transcript); the sessions already found are re-signed at every full poll."""

RunEventKind = Literal["seen", "changed", "gone"]


class RunEvent(RunSummary, kw_only=True):
    """One state transition of a run: the run as it is now (as it was, for ``gone``),
    what kind of change it was, when it was seen, and the state it left."""

    event: RunEventKind
    """``seen``: first seen by this follower; ``changed``: its state or task state moved;
    ``gone``: its dir was swept or its session file removed."""
    at: float
    """When the poll that saw it ended (seconds since the epoch)."""
    key: str
    """The run's key (``run_key``): ``provider:run_id``, or ``provider:session:<id>``."""
    previous: ChatState | None = None
    """The state before (``None`` for ``seen``)."""


@dataclass
class RunChange:
    key: str
    before: RunSummary | None
    after: RunSummary | None
    """``None``: the run is gone (its dir swept, its session file removed)."""

    @property
    def kind(self) -> RunEventKind:
        if self.before is None:
            return "seen"
        return "gone" if self.after is None else "changed"

    @property
    def starts_waiting(self) -> bool:
        was = self.before.state if self.before is not None else ""
        return self.after is not None and self.after.state in WAITING and was not in WAITING

    def event(self, at: float) -> RunEvent:
        run = self.after if self.after is not None else self.before
        assert run is not None
        return RunEvent(
            **msgspec.structs.asdict(run),
            event=self.kind,
            at=at,
            key=self.key,
            previous=self.before.state if self.before is not None else None,
        )


@dataclass
class RunFollower:
    """The runs of one runtime dir, polled tick by tick; what changed between ticks."""

    runtime_dir: str | None
    providers: Sequence[str] = ()
    states: Sequence[str] = ()
    interval: float = INTERVAL
    poll: RunPoll | None = None
    ticks: int = 0
    full: bool = True
    """Whether the last tick took every signature (once a second), not only the files
    hooks append to."""
    ended_here: set[str] = field(default_factory=set)
    """Runs seen to end while following: they stay listed (last), so the end is seen."""
    new_warnings: list[str] = field(default_factory=list)
    """Runs the last tick left out that the tick before did not (``RunPoll.warnings``):
    one bad run is one warning, once, never the whole list."""

    def wanted(self, run: RunSummary) -> bool:
        return (not self.providers or run.provider in self.providers) and (
            not self.states or run.state in self.states
        )

    def tick(self) -> list[RunChange]:
        """Poll once; the runs whose state or task state moved (all of them, first)."""
        before = self.poll
        self.full = self._due(FULL_EVERY)
        self.poll = poll_runs(
            before,
            self.runtime_dir,
            include_ended=True,
            discover=self._due(DISCOVER_EVERY),
            full=self.full,
        )
        self.ticks += 1
        shown = before.warnings if before is not None else {}
        self.new_warnings = [w for k, w in self.poll.warnings.items() if shown.get(k) != w]
        old = before.runs if before is not None else {}
        out = []
        for key in self.poll.changed:
            was, now = old.get(key), self.poll.runs.get(key)
            same = (
                was is not None
                and now is not None
                and (was.state, was.task_state, was.task_reason)
                == (now.state, now.task_state, now.task_reason)
            )
            if same:
                continue
            if not any(r is not None and self.wanted(r) for r in (was, now)):
                continue
            out.append(RunChange(key, was, now))
            if was is not None and now is not None and now.state == "ended":
                self.ended_here.add(key)
        return out

    def events(self) -> list[RunEvent]:
        """``tick``, each change as the event it is, stamped with the poll's end."""
        moved = self.tick()
        now = time.time()
        return [change.event(now) for change in moved]

    def _due(self, every: float) -> bool:
        """Whether this tick is one of those made every ``every`` seconds (each tick, if
        the interval is as long)."""
        return self.ticks % max(1, round(every / self.interval)) == 0

    def listed(self) -> list[RunSummary]:
        """Live runs, most urgent first, then those that ended while following, as the
        filters allow (what ``ls`` lists, and the ends this follower saw)."""
        if self.poll is None:
            return []
        quiet = set(self.poll.quiet)
        out = []
        for key in self.poll.listed:
            run = self.poll.runs[key]
            live = run.state != "ended" and key not in quiet
            if (live or key in self.ended_here) and self.wanted(run):
                out.append(run)
        return out

    def as_ls(self, *, include_ended: bool = False) -> list[RunSummary]:
        """What ``list_runs(include_ended=...)`` returns, from the last poll (no read):
        the live runs most urgent first; with ``include_ended`` the ended runs and the
        sessions whose process is not known to run too."""
        if self.poll is None:
            return []
        quiet = set(self.poll.quiet)
        return [
            self.poll.runs[key]
            for key in self.poll.listed
            if include_ended or (self.poll.runs[key].state != "ended" and key not in quiet)
        ]
