"""``agentspool run``: the spawn wrapper as a command. The one command whose run id is
an option: it names a run this command makes, and the positionals are the CLI's own
arguments."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "run",
        "run an agent CLI as an armed run; exit with its status",
        "The spawn wrapper as a command: arm a run, execute the provider's CLI with the "
        "run's arguments and then CLI_ARGS (after --), forward signals, record the run's "
        "end, sweep its spool (its ledger stays, so it reads 'ended'), and exit with the "
        "CLI's status (128+N if signal N killed it).",
        run=run,
    )
    options.provider_arg(p)
    p.add_argument(
        "--run-id", default=None, help="the run's id (default: <provider>-<time>-<random>)"
    )
    options.runtime_dir_arg(p)
    options.flag(p, "--keep", "keep the run's spool after it ends")
    p.add_argument(
        "--cli",
        default=None,
        metavar="PATH",
        help="the agent CLI to execute (default: the provider's command on PATH)",
    )
    options.trust_arg(p)
    p.add_argument("cli_args", nargs="*", metavar="CLI_ARGS", help="the agent CLI's own arguments")


def run(args: argparse.Namespace) -> int:
    return agentspool.run(
        args.provider,
        args.cli_args,
        run_id=args.run_id,
        runtime_dir=args.runtime_dir,
        keep=args.keep,
        executable=args.cli,
        trust=args.trust,
    )
