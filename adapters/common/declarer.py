"""Who runs ``agentspool lifecycle``: the run's main agent, or one of its subagents.

A subagent shares its parent's process and environment (Claude Code's Agent/Task tool,
Codex's ``spawn_agent``: docs/providers/claude-code.md §7, docs/providers/codex.md), so
``$AGENTSPOOL_RUN_ID`` and the process ancestry name the parent's run. What tells them
apart is the hook evidence: both CLIs fire ``PreToolUse`` for the shell call before the
command runs, and mark a subagent's with ``agent_id``. The declaration runs inside that
call, so its ``PreToolUse`` is in the spool, still without a ``PostToolUse`` (ADR 0019).
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from agentspool.adapters.common.salvage import HookDecoder
from agentspool.core import proc
from agentspool.spool.read import read_all

# `agentspool lifecycle`, `.venv/bin/agentspool lifecycle`, `python -m agentspool.cli.main
# lifecycle`: the program's name, then (after its path or module suffix) the verb.
_LIFECYCLE = re.compile(r"agentspool\S*\s+(?:\S+\s+)*?lifecycle\b")


# What ends a call: it ran (PostToolUse), it ran and failed (Claude Code's
# PostToolUseFailure: a refused declaration exits non-zero), it was refused a permission.
_OPENS_OR_CLOSES = frozenset(
    ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied")
)


class _Call(msgspec.Struct):
    tool_use_id: str = ""
    tool_input: Any = None
    agent_id: str = ""


_decode = HookDecoder(_Call)


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        value = tool_input.get("command", tool_input.get("cmd", ""))
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        return value if isinstance(value, str) else ""
    return ""


def runs_lifecycle(tool_input: Any) -> bool:
    """The shell call's input (``command``/``cmd``) runs ``agentspool … lifecycle``."""
    return bool(_LIFECYCLE.search(_command(tool_input)))


def outside_agent(agent_pid: int, seen_ns: int, pid: int) -> bool:
    """``pid`` provably does not run under the agent process: that process is in view
    (the one the spool saw, not a reused pid) and is not among ``pid``'s ancestors. A
    sandboxed command may not see it at all (Codex's sandbox runs commands in a pid
    namespace of their own): then nothing is proven."""
    if proc.same_process(agent_pid, seen_ns) is None:
        return False
    return all(p.pid != agent_pid for p in proc.ancestors(pid))


def run_with_session(runtime_dir: str, prefix: str, session_id: str) -> list[str]:
    """The runs named ``<prefix>…`` whose spool names ``session_id`` (a byte search: a
    session id is a uuid, found verbatim in the payloads that carry it)."""
    needle = b'"' + session_id.encode() + b'"'
    found = []
    try:
        names = sorted(n for n in os.listdir(runtime_dir) if n.startswith(prefix))
    except OSError:
        return []
    for name in names:
        try:
            records = read_all(os.path.join(runtime_dir, name))
        except OSError:
            continue
        if any(needle in record.payload for record in records):
            found.append(name)
    return found


def lifecycle_caller(run_dir: str, pid: int) -> str | None:
    """Who made the shell call that runs ``agentspool lifecycle`` as process ``pid``: the
    ``agent_id`` of the newest such call still open in the run's spool (``""``: the main
    agent), or ``None`` when no such call is open (a script that runs it, Claude Code's
    ``!`` shell mode) or ``pid`` provably does not run under the run's agent process (a
    person at another terminal naming the run)."""
    open_calls: dict[str, str] = {}  # tool_use_id -> agent_id, in spool order
    agent_pid, seen_ns = 0, 0
    for record in read_all(run_dir):
        if record.agent_pid:
            agent_pid, seen_ns = record.agent_pid, record.mono_ns
        if record.event not in _OPENS_OR_CLOSES:
            continue
        call = _decode(record)
        if call is None or not call.tool_use_id:
            continue
        if record.event != "PreToolUse":
            open_calls.pop(call.tool_use_id, None)
        elif runs_lifecycle(call.tool_input):
            open_calls.pop(call.tool_use_id, None)
            open_calls[call.tool_use_id] = call.agent_id
    if not open_calls:
        return None
    if agent_pid and outside_agent(agent_pid, seen_ns, pid):
        return None
    return next(reversed(open_calls.values()))
