"""``agentspool doctor``: one line per check of what ``install`` armed, with its mend
(``agentspool.diagnosis``; docs/adr/0040-doctor.md). Exit 1 when something is broken."""

from __future__ import annotations

import argparse
import sys

import agentspool

MARKS = {"ok": "ok", "broken": "BROKEN", "warning": "warning", "absent": "-"}


def add_parser(command: object, json_arg: object) -> None:
    """Register ``doctor`` with ``main``'s ``command`` and ``json_arg`` helpers."""
    assert callable(command) and callable(json_arg)
    p: argparse.ArgumentParser = command(
        "doctor",
        "check that the installed hooks still record, and say how to mend what does not",
        "For every provider whose hooks `agentspool install` put in its CLI's settings: "
        "the interpreter and package the hook command names exist, and the command, fired "
        "once against a scratch runtime dir, records; the failures hooks recorded "
        "themselves; each CLI found on PATH is a version the compatibility table lists; "
        "the runtime dir and the data dir are private. One line each, with how to mend it. "
        "Exit 1 when something is broken.",
    )
    p.add_argument(
        "--no-fire", action="store_true", help="do not fire the hooks (look at their commands)"
    )
    json_arg(p, "the DoctorReport (checks: provider, check, status, detail, mend; broken)")
    p.set_defaults(func=run)


def line(check: agentspool.DoctorCheck) -> str:
    mend = f" — mend: {check.mend}" if check.mend else ""
    who = check.provider or "agentspool"
    return f"{MARKS[check.status]:<8}{who:<12} {check.check}: {check.detail}{mend}"


def run(args: argparse.Namespace) -> int:
    report = agentspool.doctor(fire=not args.no_fire)
    if args.json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
    else:
        for check in report.checks:
            print(line(check))
        if report.broken:
            print("something is broken: the lines marked BROKEN say how to mend it")
    return 1 if report.broken else 0
