"""``agentspool sig``: the run's spool signature (changes whenever its evidence does)."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub, "sig", "print the run's spool signature (changes whenever its evidence does)", run=run
    )
    options.provider_arg(p)
    options.run_arg(p)
    options.runtime_dir_arg(p)
    options.json_arg(p, "{run_id, sig}")


def run(args: argparse.Namespace) -> int:
    sig = agentspool.spool_sig(args.provider, args.run_id, args.runtime_dir)
    if args.json:
        print_json({"run_id": args.run_id, "sig": sig})
    else:
        print(sig)
    return options.EXIT_OK
