"""``agentspool doctor``: one line per check of what ``install`` armed, with its mend
(``agentspool.diagnosis``; docs/adr/0040-doctor.md). Exit 1 when something is broken."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json

MARKS = {"ok": "ok", "broken": "BROKEN", "warning": "warning", "absent": "-"}


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "doctor",
        "check that the installed hooks still record, and say how to mend what does not",
        "For every provider whose hooks `agentspool install` put in its CLI's settings: "
        "the interpreter and package the hook command names exist, and the command, fired "
        "once against a scratch runtime dir, records; the failures hooks recorded "
        "themselves; each CLI found on PATH is a version the compatibility table lists; "
        "the runtime dir and the data dir are private. One line each, with how to mend it. "
        "Exit 1 when something is broken.",
        run=run,
    )
    options.flag(p, "--no-fire", "do not fire the hooks (look at their commands)")
    options.json_arg(p, "the DoctorReport (checks: provider, check, status, detail, mend; broken)")


def run(args: argparse.Namespace) -> int:
    report = agentspool.doctor(fire=not args.no_fire)
    if args.json:
        print_json(report)
        return options.EXIT_ERROR if report.broken else options.EXIT_OK
    from agentspool.cli.render import Col, print_rows

    rows = []
    for check in report.checks:
        mend = f" — mend: {check.mend}" if check.mend else ""
        what = f"{check.check}: {check.detail}{mend}"
        rows.append([MARKS[check.status], check.provider or "agentspool", what])
    print_rows(rows, [Col(7), Col(12), Col()])
    if report.broken:
        print("something is broken: the lines marked BROKEN say how to mend it")
    return options.EXIT_ERROR if report.broken else options.EXIT_OK
