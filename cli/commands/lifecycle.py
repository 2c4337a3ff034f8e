"""``agentspool lifecycle``: declare the run's task state (ADR 0019)."""

from __future__ import annotations

import argparse
from typing import get_args

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "lifecycle",
        "declare the run's task state: active, blocked (with a reason) or done",
        "Declare the task state of a run: the agent itself runs this from inside its "
        "session (the run comes from $AGENTSPOOL_RUN_ID, which setup/run provide, else "
        "from the agent process above this command, whose installed hooks made its run), "
        "or a person names the run. Only the run's main agent declares: a subagent is "
        "refused. An exact repeat records nothing and says so. Process exit never means "
        "done.",
        run=run,
    )
    p.add_argument("task_state", choices=get_args(agentspool.TaskState), help="the task state")
    options.run_arg(
        p,
        required=False,
        help="the run (default: $AGENTSPOOL_RUN_ID, else the run of the agent process "
        "this command runs under)",
    )
    p.add_argument("--reason", default="", help="why the task is blocked (required for blocked)")
    options.runtime_dir_arg(p)
    options.flag(p, "--force", "declare done even with uncommitted changes in the git worktree")
    options.json_arg(p, "the Declaration (run_id, task_state, task_reason, changed)")


def run(args: argparse.Namespace) -> int:
    result = agentspool.declare(
        args.task_state,
        args.reason,
        run_id=args.run_id,
        runtime_dir=args.runtime_dir,
        force=args.force,
    )
    if args.json:
        print_json(result)
    elif not result.changed:
        print(f"run {result.run_id}: already {result.task_state}; nothing recorded")
    else:
        why = f": {result.task_reason}" if result.task_reason else ""
        print(f"run {result.run_id}: {result.task_state}{why}")
    return options.EXIT_OK
