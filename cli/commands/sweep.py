"""``agentspool sweep``: remove the spools of runs outside the keep-set — only with
``--yes``; without it, what it would remove (ADR 0044)."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json


def add_parser(sub: options.Subparsers) -> None:
    from agentspool.api import DEFAULT_MIN_IDLE

    p = options.command(
        sub,
        "sweep",
        "remove the spools of runs outside the keep-set (dry run unless --yes)",
        "Remove the spools of the runs in the runtime dir outside the keep-set and not "
        "written in the last --min-idle seconds. Without --yes, prints what it would do.",
        run=run,
    )
    options.runtime_dir_arg(p)
    p.add_argument(
        "--keep", action="append", default=[], metavar="ID", help="a run to keep (repeatable)"
    )
    p.add_argument(
        "--min-idle",
        type=float,
        default=DEFAULT_MIN_IDLE,
        metavar="SECONDS",
        help="never remove a run written this recently (default: %(default)s)",
    )
    options.archive_arg(p, "move each removed run's evidence here first")
    options.confirm_args(p, "remove them")
    options.json_arg(p, "the SweepReport")


def run(args: argparse.Namespace) -> int:
    dry_run = not args.yes
    report = agentspool.sweep_spools(
        args.runtime_dir,
        args.keep,
        dry_run=dry_run,
        min_idle=args.min_idle,
        archive=args.archive,
    )
    if args.json:
        from dataclasses import asdict

        print_json(asdict(report))
        return options.EXIT_OK
    verb = "would remove" if dry_run else "removed"
    print(_listed(f"{verb} {len(report.removed)}", report.removed))
    print(_listed(f"kept {len(report.kept)}, busy {len(report.busy)}", report.busy))
    if dry_run and report.removed:
        print("agentspool sweep --yes removes them")
    return options.EXIT_OK


def _listed(head: str, runs: list[str]) -> str:
    """``head: run run …``, or ``head`` alone when there is no run to name."""
    return f"{head}: {' '.join(runs)}" if runs else head
