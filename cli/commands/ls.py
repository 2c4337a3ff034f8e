"""``agentspool ls``: every run, what it does now and what it waits on."""

from __future__ import annotations

import argparse
import sys
import time

import agentspool
from agentspool.cli import options
from agentspool.cli.output import install_warning, print_json, say


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "ls",
        "list every run: what it does now and what it waits on",
        "One line per run in the runtime dir, most urgent first: runs waiting on the "
        "operator (a question, a permission prompt, the end of a turn), then working, then "
        "idle. --json prints a list of objects with the fields provider, run_id, state, "
        "activity, task_state, task_reason, since, cwd, title, pending_approval, "
        "pending_dialog, session_id, transcript_path, pid.",
        run=run,
    )
    options.runtime_dir_arg(p)
    options.flag(p, "--all", "also list runs that ended")
    options.json_arg(p, "a list of RunSummary objects")


def run(args: argparse.Namespace) -> int:
    warning = install_warning()
    if warning:
        print(warning, file=sys.stderr)
    warnings: list[str] = []
    runs = agentspool.list_runs(args.runtime_dir, include_ended=args.all, warnings=warnings)
    for problem in warnings:  # one bad run is one line, never the whole list
        say(f"agentspool: warning: {problem}", file=sys.stderr)
    if args.json:
        print_json(runs)
        return options.EXIT_OK
    from agentspool.cli.render.runs import print_runs  # rich: only the commands that draw

    terminal = sys.stdout.isatty()
    if runs:
        print_runs(runs, time.time(), terminal=terminal)
    elif terminal:
        print("no live runs" if not args.all else "no runs")
    return options.EXIT_OK
