"""An approval proven given by the approved command running under the agent process.

After the operator approves a command, Codex 0.169.0 and Gemini CLI 0.61.0 write nothing
(no hook, no transcript record) until the command ends, so the wait would read open all
that time, for minutes with a build. The command runs as a descendant of the agent
process, started after the hook that asked: one such process (matched by its argv, the
provider says how) closes the wait from its start (docs/adr/0007-codex-state-precedence.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

import msgspec

from agentspool.core import events as ev
from agentspool.core import proc

K = TypeVar("K")
SOURCE = "process:approved command running"


class Asked(msgspec.Struct):
    """An approval asked and not yet proven answered."""

    tool_use_id: str
    command: str
    mono_ns: int
    """When the hook that asked ran: the approved command starts after it."""
    at: float
    epoch: str


Runs = Callable[[K, Asked, proc.Proc, list[str]], bool]
"""Whether the process (its argv given) runs the command asked under that key."""


def approved(
    agent_pid: int, agent_seen_ns: int, asked: Mapping[K, Asked], runs: Runs[K]
) -> list[tuple[K, ev.InputResolved]]:
    """The asked approvals whose command runs now, each closed at the command's start
    (never before the question: process start times tick in 10 ms). One scan of
    ``/proc``, only while an approval with a command is open."""
    if not any(a.command for a in asked.values()) or not agent_pid:
        return []
    if proc.same_process(agent_pid, agent_seen_ns) is None:
        return []
    running = [(p, proc.argv(p.pid)) for p in proc.descendants(agent_pid)]
    out = []
    for key, wait in asked.items():
        if not wait.command:
            continue
        tick = proc.ticks_at_mono(wait.mono_ns)
        started = [
            p.started for p, args in running if p.started >= tick and runs(key, wait, p, args)
        ]
        if started:
            at = max(proc.wall_of_ticks(min(started)), wait.at + 1e-3)
            resolved = ev.InputResolved(
                tool_use_id=wait.tool_use_id, at=at, source=SOURCE, epoch=wait.epoch
            )
            out.append((key, resolved))
    return out
