"""``agentspool install`` and ``uninstall``: agentspool's hooks in a CLI's own settings,
so every run of it is observed (ADR 0016)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, get_args

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json, say, usage_error

if TYPE_CHECKING:
    from agentspool import InstalledFile

ACTIONS = {
    "install": (
        "arm",
        "Merge agentspool's hooks into the CLI's own settings, so every run of "
        "it is observed: your keys, hooks and formatting stay; installing again changes "
        "nothing; the file as it was is kept beside it.",
    ),
    "uninstall": (
        "remove",
        "Remove exactly the hooks `agentspool install` added (found by "
        "their command); a file it created and that holds nothing else is removed.",
    ),
}


def add_parser(sub: options.Subparsers) -> None:
    for name, (verb, action) in ACTIONS.items():
        p = options.command(
            sub,
            name,
            f"{verb} agentspool's hooks in a CLI's own settings (every run)",
            action,
            run=run,
        )
        options.provider_arg(p)
        p.add_argument(
            "--scope",
            choices=get_args(agentspool.InstallScope),
            default=get_args(agentspool.InstallScope)[0],
            help="the user's settings, or a project's (default: %(default)s)",
        )
        p.add_argument(
            "--project",
            default=None,
            metavar="DIR",
            help="with --scope project: the project dir (default: the current dir)",
        )
        options.config_home_arg(
            p, "with --scope user: the CLI's config dir (default: where the CLI looks)"
        )
        options.json_arg(p, "the InstallReport (each file: path, action, backup)")


def run(args: argparse.Namespace) -> int:
    if args.scope == "project" and args.config_home is not None:
        return usage_error("--config-home goes with --scope user; use --project DIR")
    if args.scope == "user" and args.project is not None:
        return usage_error("--project goes with --scope project")
    directory = args.project if args.scope == "project" else args.config_home
    operation = agentspool.install if args.command == "install" else agentspool.uninstall
    report = operation(args.provider, args.scope, directory=directory)
    if args.json:
        import msgspec

        print_json({**msgspec.to_builtins(report), "changed": report.changed})
        return options.EXIT_OK
    for done in report.files:
        say(_install_line(args.command, done))
    return options.EXIT_OK


def _install_line(command: str, done: InstalledFile) -> str:
    # Issue 21: "unchanged: <path>" for a file that is not there read as if something
    # had been found and kept; say what uninstall found instead.
    if done.action == "absent":
        return f"nothing installed: {done.path} (no such file)"
    if command == "uninstall" and done.action == "unchanged":
        return f"nothing installed: {done.path} (nothing of agentspool's in it)"
    kept = f" (the file as it was: {done.backup})" if done.backup else ""
    return f"{done.action}: {done.path}{kept}"
