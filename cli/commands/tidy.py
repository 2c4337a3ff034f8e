"""``agentspool tidy``: remove finished runs — declared done, and ended — only with
``--yes``; without it, what it would remove (ADR 0018, 0044)."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json, say


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "tidy",
        "remove finished runs: declared done, and ended (dry run unless --yes)",
        "Remove the runs whose latest task declaration is done and that ended: the ledger "
        "records the run's end, or the agent process is gone. Never a run declared active "
        "or blocked after, never one never declared (process exit never means done), never "
        "one whose agent process still runs. Without --yes, prints what it would do.",
        run=run,
    )
    options.confirm_args(p, "remove them")
    options.runtime_dir_arg(p)
    options.archive_arg(
        p,
        "move each removed run's spool, ledger and provider file here first "
        "(agentspool replay --archive reads them)",
    )
    options.json_arg(p, "the TidyReport (dry_run, removed, archived, runs: run_id, verdict, why)")


def run(args: argparse.Namespace) -> int:
    report = agentspool.tidy(args.runtime_dir, dry_run=not args.yes, archive=args.archive)
    if args.json:
        print_json(report)
        return options.EXIT_OK
    from agentspool.cli.render import Col, print_rows

    verbs = {"remove": "would remove" if report.dry_run else "removed", "keep": "keep"}
    rows = [[verbs.get(run.verdict, run.verdict), run.run_id, run.why] for run in report.runs]
    print_rows(rows, [Col(12), Col(28), Col()])
    archived = f", archived in {args.archive}" if report.archived else ""
    if report.dry_run:
        more = "; agentspool tidy --yes removes them" if report.removed else ""
        say(f"would remove {len(report.removed)} of {len(report.runs)} runs{more}")
    else:
        say(f"removed {len(report.removed)} of {len(report.runs)} runs{archived}")
    return options.EXIT_OK
