"""``agentspool watch``: the runs ``ls`` lists, followed live.

Each tick is ``agentspool.poll_runs``: twice a second the event spool every hook
appends to is stat'ed, and only the runs whose spool grew are signed and read again
(incrementally, through the adapters' caches); once a second every run's signature is
taken.
On a terminal it draws a Textual app (imported here, inside the command only: no other
command pays for it); otherwise (a pipe, CI) it prints one JSON line per state
transition. See docs/adr/0020-watch.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import agentspool
from agentspool import RunPoll, RunSummary

WAITING = ("question", "needs_input")
INTERVAL = 0.5
"""Seconds between ticks (``--interval``): what a hook records is on screen within it."""
FULL_EVERY = 1.0
"""Seconds between polls that take every signature (transcripts, status files, processes:
evidence no hook writes); the ticks between stat only the event spools hooks append to."""
DISCOVER_EVERY = 5.0
"""Seconds between listings of the CLIs' own session files (a glob over every
transcript); the sessions already found are re-signed at every full poll."""


@dataclass
class Change:
    key: str
    before: RunSummary | None
    after: RunSummary | None
    """``None``: the run is gone (its dir swept, its session file removed)."""

    @property
    def event(self) -> str:
        if self.before is None:
            return "seen"
        return "gone" if self.after is None else "changed"

    @property
    def starts_waiting(self) -> bool:
        was = self.before.state if self.before is not None else ""
        return self.after is not None and self.after.state in WAITING and was not in WAITING

    def line(self, at: float) -> dict[str, Any]:
        import msgspec

        run = self.after if self.after is not None else self.before
        assert run is not None
        fields: dict[str, Any] = msgspec.to_builtins(run)
        previous = self.before.state if self.before is not None else None
        return {"event": self.event, "at": at, "key": self.key, "previous": previous, **fields}


@dataclass
class Follower:
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
    """Runs seen to end while watching: they stay listed (last), so the end is seen."""
    _children: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def wanted(self, run: RunSummary) -> bool:
        return (not self.providers or run.provider in self.providers) and (
            not self.states or run.state in self.states
        )

    def tick(self) -> list[Change]:
        """Poll once; the runs whose state or task state moved (all of them, first)."""
        before = self.poll
        self.full = self._due(FULL_EVERY)
        self.poll = agentspool.poll_runs(
            before,
            self.runtime_dir,
            include_ended=True,
            discover=self._due(DISCOVER_EVERY),
            full=self.full,
        )
        self.ticks += 1
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
            out.append(Change(key, was, now))
            if was is not None and now is not None and now.state == "ended":
                self.ended_here.add(key)
        return out

    def _due(self, every: float) -> bool:
        """Whether this tick is one of those made every ``every`` seconds (each tick, if
        the interval is as long)."""
        return self.ticks % max(1, round(every / self.interval)) == 0

    def listed(self) -> list[RunSummary]:
        """Live runs, most urgent first, then those that ended while watching, as the
        filters allow (what ``ls`` lists, and the ends this watch saw)."""
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

    def on_wait(self, run: RunSummary, command: str) -> None:
        """Run ``command`` (a shell line) with the run's JSON on stdin; never wait on it."""
        import msgspec

        self._children = [c for c in self._children if c.poll() is None]
        # The operator's own command line, as they typed it for --on-wait.
        child = subprocess.Popen(  # noqa: S602
            command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        assert child.stdin is not None
        try:
            child.stdin.write(msgspec.json.encode(run) + b"\n")
            child.stdin.close()
        except OSError:
            pass  # it did not read its stdin: its business
        self._children.append(child)


def notify(run: RunSummary) -> None:
    """A desktop notification where ``notify-send`` exists; nothing otherwise."""
    sender = shutil.which("notify-send")
    if sender is None:
        return
    what = "asks a question" if run.state == "question" else "waits for you"
    name = run.title or run.run_id or run.session_id
    subprocess.Popen(
        [sender, "--app-name=agentspool", f"{run.provider} {what}", name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _waits(follower: Follower, moved: list[Change], *, bell: bool, on_wait: str) -> None:
    if follower.ticks <= 1:
        return  # already waiting when watch started: not news
    for change in moved:
        if change.starts_waiting and change.after is not None:
            if bell:
                notify(change.after)
            if on_wait:
                follower.on_wait(change.after, on_wait)


def follow_lines(
    follower: Follower,
    *,
    once: bool,
    duration: float | None,
    bell: bool,
    on_wait: str,
    write: Callable[[bytes], object],
) -> int:
    """Without a terminal: one JSON line per transition, until interrupted (``once``:
    one poll; ``duration``: that many seconds)."""
    import msgspec

    start = time.monotonic()
    while True:
        moved = follower.tick()
        now = time.time()
        for change in moved:
            write(msgspec.json.encode(change.line(now)) + b"\n")
        _waits(follower, moved, bell=bell, on_wait=on_wait)
        if once:
            return 0
        elapsed = time.monotonic() - start
        if duration is not None and elapsed >= duration:
            return 0
        time.sleep(follower.interval - elapsed % follower.interval)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM", "dumb") != "dumb"
