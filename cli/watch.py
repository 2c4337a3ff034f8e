"""``agentspool watch``: the runs ``ls`` lists, followed live.

Each tick is ``agentspool.RunFollower.tick`` (``poll_runs``): twice a second the event
spool every hook appends to is stat'ed, and only the runs whose spool grew are signed and
read again (incrementally, through the adapters' caches); once a second every run's
signature is taken.
On a terminal it draws a Textual app (imported here, inside the command only: no other
command pays for it); otherwise (a pipe, CI) it prints one JSON line per state
transition (an ``agentspool.RunEvent``). See docs/adr/0020-watch.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import agentspool
import agentspool.follow
from agentspool import RunChange, RunFollower, RunSummary
from agentspool.cli._terminal import one_line

if TYPE_CHECKING:
    from agentspool.serve.notify import Notifier

# The loop and its events are the public API's (``agentspool.RunFollower``), shared with
# ``agentspool serve``; here: what only this command does with them.
WAITING = agentspool.follow.WAITING
INTERVAL = agentspool.follow.INTERVAL
FULL_EVERY = agentspool.follow.FULL_EVERY
Change = RunChange


@dataclass
class Follower(RunFollower):
    """A ``RunFollower`` that can also run the operator's ``--on-wait`` command."""

    _children: list[threading.Thread] = field(default_factory=list)
    dropped: int = 0
    """``--on-wait`` commands not started: ``MAX_ON_WAIT`` were still running."""
    notifier: Notifier | None = None
    """``--notify``: told of every transition; it sends off this thread (ADR 0041)."""

    def on_wait(self, run: RunSummary, command: str) -> None:
        """Run ``command`` (a shell line) with the run's JSON on stdin, off the refresh
        path: a thread starts it and feeds it. A command that does not read its stdin
        blocks its own thread once the JSON outgrows the pipe (64 KiB), never the
        watch; at most ``MAX_ON_WAIT`` run at once (more are dropped and counted)."""
        import msgspec

        self._children = [t for t in self._children if t.is_alive()]
        if len(self._children) >= MAX_ON_WAIT:
            self.dropped += 1
            return
        data = msgspec.json.encode(run) + b"\n"
        thread = threading.Thread(target=_feed, args=(command, data), name="on-wait", daemon=True)
        thread.start()
        self._children.append(thread)


MAX_ON_WAIT = 16


def _feed(command: str, data: bytes) -> None:
    try:
        # The operator's own command line, as they typed it for --on-wait.
        child = subprocess.Popen(  # noqa: S602
            command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
    except OSError:
        return
    assert child.stdin is not None
    try:
        child.stdin.write(data)
        child.stdin.close()
    except OSError:
        pass  # it did not read its stdin: its business
    child.wait()  # reaped here, so the thread lives as long as the command: the bound


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
    if follower.notifier is not None:
        now = time.time()
        for change in moved:
            follower.notifier.observe(change.event(now))
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
        for warning in follower.new_warnings:  # one bad run: one line, once
            sys.stderr.write(f"agentspool: warning: {one_line(warning)}\n")
        now = time.time()
        for change in moved:
            write(msgspec.json.encode(change.event(now)) + b"\n")
        _waits(follower, moved, bell=bell, on_wait=on_wait)
        if once:
            return 0
        elapsed = time.monotonic() - start
        if duration is not None and elapsed >= duration:
            return 0
        time.sleep(follower.interval - elapsed % follower.interval)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM", "dumb") != "dumb"
