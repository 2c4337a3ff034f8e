"""``agentspool usage``: token totals and their cost, per day, session, model or project
(ADR 0025). The table is ``render.usage``'s."""

from __future__ import annotations

import argparse
import sys
from typing import get_args

import agentspool
from agentspool.cli import options
from agentspool.cli.commands.index import index_quietly
from agentspool.cli.output import print_json, usage_error


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "usage",
        "token totals and their cost, per day, session, model or project",
        "Count the tokens every session of the history used — input, "
        "output, cache reads and cache writes kept apart — once per API response (a "
        "response copied into a resumed session counts once), and price them with the "
        "table shipped with agentspool (never fetched). A model without a price shows "
        "'no price', never $0, and a cost says how many tokens it leaves out. Days are "
        "counted in local time unless --timezone says otherwise. Indexes first "
        "(incrementally) unless --no-index; sessions whose file is gone still count.",
        run=run,
    )
    p.add_argument(
        "--since",
        type=options.day,
        default=None,
        metavar="DATE",
        help="from this day (YYYY-MM-DD or YYYYMMDD)",
    )
    p.add_argument(
        "--until",
        type=options.day,
        default=None,
        metavar="DATE",
        help="up to this day, included (YYYY-MM-DD or YYYYMMDD)",
    )
    p.add_argument(
        "--by",
        choices=get_args(agentspool.UsageGrouping),
        default=get_args(agentspool.UsageGrouping)[0],
        help="one row per what (default: %(default)s)",
    )
    options.provider_filter_arg(p, "only this provider's sessions (repeatable; default: every one)")
    p.add_argument(
        "--timezone",
        type=options.zone,
        default=None,
        metavar="ZONE",
        help="count days in this IANA time zone, e.g. Europe/Paris (default: local time)",
    )
    p.add_argument(
        "--prices",
        default=None,
        metavar="FILE",
        help="price with this TOML table instead of the shipped one (same shape)",
    )
    options.flag(p, "--no-index", "count what is indexed already")
    options.store_arg(p)
    options.json_arg(p, "the UsageReport (by, since, until, timezone, prices_taken, rows, total)")


def run(args: argparse.Namespace) -> int:
    if args.since and args.until and args.since > args.until:
        return usage_error(f"--since {args.since} is after --until {args.until}: nothing between")
    from agentspool.cli import usage_kept

    watch = usage_kept.Watch(args.store or agentspool.default_store_path())
    indexed: list[agentspool.IndexReport] = []

    def index(folder: object) -> None:
        watch.start()
        try:
            indexed.append(index_quietly(args.store, usage_first=True, folder=folder))
        finally:
            watch.stop()

    report = agentspool.usage(
        by=args.by,
        since=args.since,
        until=args.until,
        providers=args.provider or None,
        timezone=args.timezone,
        prices=args.prices,
        store=args.store,
        index=False if args.no_index else index,
    )
    kept = args.json and not args.prices
    kept = kept and not any(i.busy or i.errors or i.tightened for i in indexed)
    if args.json:
        output = print_json(report)
        if kept:
            usage_kept.keep(args.argv, output, watch)
        return options.EXIT_OK
    from agentspool.cli.render.usage import print_usage  # rich: only the commands that draw

    print_usage(report, terminal=sys.stdout.isatty())
    return options.EXIT_OK
