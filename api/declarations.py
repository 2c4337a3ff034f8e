"""Task-state declarations (``agentspool lifecycle``): which run, who declares (a
subagent may not), and the worktree probe a ``done`` needs.

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec

from agentspool.adapters import registry
from agentspool.core.seam import (
    TaskState,
)
from agentspool.spool.errors import (
    DeclarationError,
)
from agentspool.spool.layout import (
    default_runtime_dir,
    run_dir,
)
from agentspool.spool.write import LEDGER_FILE, RUN_ID_ENV, RUNTIME_DIR_ENV

if TYPE_CHECKING:
    pass

__all__ = ["Declaration", "declare"]


class Declaration(msgspec.Struct, frozen=True, kw_only=True):
    """What ``declare`` did: the run's task state after it, and whether it changed."""

    run_id: str
    task_state: TaskState
    task_reason: str = ""
    changed: bool


def declare(
    task_state: TaskState,
    reason: str = "",
    *,
    run_id: str | None = None,
    runtime_dir: str | None = None,
    force: bool = False,
    worktree: str | None = None,
) -> Declaration:
    """Declare the run's task state (``agentspool lifecycle``): ``active``, ``blocked``
    (needs a ``reason``) or ``done``. Never inferred: process exit never means done.

    The run comes from the environment a wrapped agent has (``AGENTSPOOL_RUN_ID``,
    ``AGENTSPOOL_RUNTIME_DIR``, set by ``setup``/``run``) unless ``run_id`` names it;
    without either, from the process ancestry: the agent started by hand whose installed
    hooks made a run for it. A subagent cannot declare for its parent's run: refused
    when the run's hook evidence shows the open ``agentspool lifecycle`` call is a
    subagent's (ADR 0019). An
    exact repeat of the current declaration writes nothing (``changed=False``). ``done``
    is refused while ``worktree`` (default: the current directory) is a git worktree with
    uncommitted changes, unless ``force``.
    """
    import time

    from agentspool.core import ledger, runs
    from agentspool.core.events import TaskStateDeclared

    run_id = run_id or os.environ.get(RUN_ID_ENV, "")
    runtime = runtime_dir or os.environ.get(RUNTIME_DIR_ENV) or default_runtime_dir()
    if not run_id:
        run_id = _run_of_this_agent(runtime)
    directory = run_dir(runtime, run_id)
    if not os.path.isdir(directory):
        raise DeclarationError(run_id, f"no such run in {runtime}")
    provider = runs.provider_of(runtime, run_id, registry.names())
    caller = registry.load(provider).lifecycle if provider else None
    subagent = (
        caller.lifecycle_caller(run_id, runtime, os.getpid(), os.environ)
        if caller is not None
        else None
    )
    if subagent:
        raise DeclarationError(
            run_id,
            f"a subagent ({subagent}) cannot declare its parent's task state; "
            "only the run's main agent declares (report back to it instead)",
        )
    reason = reason.strip()
    if task_state == "blocked" and not reason:
        raise DeclarationError(run_id, "blocked needs a reason (--reason TEXT)")
    if task_state != "blocked":
        reason = ""  # a reason belongs to blocked; leaving blocked drops it
    now = ledger.lifecycle(directory)
    if now.declared is not None and (now.task_state, now.task_reason) == (task_state, reason):
        return Declaration(run_id=run_id, task_state=task_state, task_reason=reason, changed=False)
    if task_state == "done" and not force:
        dirty = _uncommitted_changes(worktree or os.getcwd())
        if dirty:
            raise DeclarationError(
                run_id, f"not done: uncommitted changes in {dirty} (commit them, or --force)"
            )
    try:
        ledger.append(
            directory,
            TaskStateDeclared(
                task_state=task_state, reason=reason, at=time.time(), source="cli:lifecycle"
            ),
        )
    except OSError as exc:
        # Seen: Codex's read-only sandbox ("Read-only file system"); its workspace-write
        # sandbox writes only the workspace and /tmp.
        raise DeclarationError(
            run_id,
            f"cannot write {os.path.join(directory, LEDGER_FILE)}: {exc.strerror} "
            "(a sandboxed agent must be let write the runtime dir)",
        ) from None
    return Declaration(run_id=run_id, task_state=task_state, task_reason=reason, changed=True)


def _run_of_this_agent(runtime: str) -> str:
    """The run of the agent this command runs under, when no wrapper named it: the
    nearest ancestor process whose installed-hook run (``<provider>-<pid>-<start
    ticks>``) is in ``runtime`` (an agent started by hand, ``agentspool install``); else
    the run an adapter finds from its CLI's own variables in this environment
    (``hand_started.own_run``: a sandbox can hide the agent process from its commands)."""
    from agentspool.core import runs

    found = runs.agent_runs(runtime, registry.names(), os.getpid())
    if not found:
        for provider in registry.names():
            hand_started = registry.load(provider).hand_started
            if hand_started is not None:
                found += hand_started.own_run(runtime, os.environ)
    if len(found) == 1:
        return found[0]
    if found:
        raise DeclarationError(
            "", f"several runs of this agent ({', '.join(found)}): pass --run-id"
        )
    raise DeclarationError(
        "",
        f"no run: ${RUN_ID_ENV} is not set and no process above this one has a run in "
        f"{runtime} (run this from inside an agent armed by agentspool, or pass --run-id)",
    )


def _uncommitted_changes(path: str) -> str:
    """The top of the git worktree holding ``path`` if it has uncommitted changes
    (untracked files included), else ``""`` (clean, or not a worktree, or no git)."""
    import subprocess

    try:
        top = subprocess.run(
            ["git", "-C", path, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if top.returncode != 0:
            return ""
        status = subprocess.run(
            ["git", "-C", path, "status", "--porcelain"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return top.stdout.strip() if status.returncode == 0 and status.stdout.strip() else ""
