"""``agentspool untrust``: remove agentspool's trusted-hook block from a CLI's config."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub, "untrust", "remove agentspool's trusted-hook block from a CLI's config", run=run
    )
    options.provider_arg(p)
    options.config_home_arg(p, "the CLI's config dir (default: where the CLI looks)")
    options.json_arg(p, "{removed}")


def run(args: argparse.Namespace) -> int:
    removed = agentspool.untrust(args.provider, args.config_home)
    if args.json:
        print_json({"removed": removed})
    else:
        print("removed agentspool's trusted hooks" if removed else "nothing to remove")
    return options.EXIT_OK
