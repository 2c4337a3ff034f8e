"""The process table (Linux ``/proc``) as evidence: is the agent alive, what does it run.

An agent process's own children are evidence only its adapter can read (which command
is running, which one is a hook). What is provider-neutral lives here: a process's
start time and parent, its descendants, its argv, and the clocks to compare them with a
spool record.

Start times are ``/proc/<pid>/stat`` field 22: clock ticks since boot (``CLOCK_BOOTTIME``);
a spool record is stamped with ``CLOCK_MONOTONIC`` and the wall clock. The two clocks
differ by the time the machine was suspended; the offset is taken now, which is exact
unless the machine slept between the record and the read (then a process started after
the record can look up to that long older: the checks below stay on the safe side of
"not proven").
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from agentspool.core.events import Event, SessionEnded
from agentspool.core.seam import ProcessState

HZ = os.sysconf("SC_CLK_TCK")


class Proc(NamedTuple):
    pid: int
    ppid: int
    started: int
    """Clock ticks since boot."""


def stat(pid: int) -> Proc | None:
    """``pid``'s parent and start time; ``None`` if it is gone, a zombie or unreadable.

    A zombie runs nothing and asks nothing: a SIGKILLed agent stays one until its parent
    reaps it (observed: tmux leaves a killed pane's process unreaped).
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # comm (field 2) may hold spaces and parens: split after its last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):  # field 3, the state
        return None
    return Proc(pid, int(fields[1]), int(fields[19]))


def ticks_at_mono(mono_ns: int) -> int:
    """The boot-clock tick in which the monotonic instant ``mono_ns`` fell."""
    offset = time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.monotonic_ns()
    return (mono_ns + offset) * HZ // 1_000_000_000


def wall_of_ticks(ticks: int) -> float:
    """The wall-clock time (seconds) of a boot-clock tick."""
    return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + ticks / HZ


def same_process(pid: int, seen_mono_ns: int) -> Proc | None:
    """The live process ``pid`` if it is the one that had that pid at ``seen_mono_ns``
    (it started no later): a pid reused since then belongs to a younger process."""
    proc = stat(pid)
    if proc is None or proc.started > ticks_at_mono(seen_mono_ns):
        return None
    return proc


def descendants(pid: int) -> list[Proc]:
    """Every live process below ``pid``, one scan of ``/proc``."""
    children: dict[int, list[Proc]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if name.isdigit():
            proc = stat(int(name))
            if proc is not None:
                children.setdefault(proc.ppid, []).append(proc)
    out: list[Proc] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            out.append(child)
            stack.append(child.pid)
    return out


def ancestors(pid: int) -> list[Proc]:
    """``pid``'s parent, its parent, … up to (not including) pid 1; stops at the first
    one gone or unreadable."""
    out: list[Proc] = []
    proc = stat(pid)
    while proc is not None and proc.ppid > 1 and len(out) < 256:
        proc = stat(proc.ppid)
        if proc is not None:
            out.append(proc)
    return out


def argv(pid: int) -> list[str]:
    """``pid``'s argv (``[]`` if gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return []
    return raw.decode("utf-8", "replace").split("\0")[:-1]


def environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with (``{}`` if gone or not ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0"))
    return {key: value for key, sep, value in pairs if sep}


def ended_by_exit(pid: int) -> list[Event]:
    """What an agent ``pid`` found gone proves: its session ended (SIGKILL fires no hook).
    Stamped now and never kept: the process table is read again at the next read."""
    return [SessionEnded(reason="process gone", at=time.time(), source=f"process:{pid} gone")]


def process_state(pid: int, gone: bool) -> ProcessState:
    """What ``Chat.process`` says of an agent ``pid`` an adapter checked (``gone``)."""
    if not pid:
        return "unknown"
    return "gone" if gone else "alive"
