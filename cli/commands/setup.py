"""``agentspool setup``: arm hooks for one run; print what to spawn the agent with."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "setup",
        "arm hooks for one run; print what to spawn the agent with",
        "Render the provider's per-run hook settings into the run dir and print what a "
        "spawn wrapper adds: a shell line `env K=V … <args>` to paste before the agent's "
        "own arguments, or with --json the Spawn object. A CLI with no per-run settings "
        "(Gemini CLI) is armed by the hooks `agentspool install` put in its own settings: "
        "setup checks they are there and hands the run over in the environment.",
        run=run,
    )
    options.provider_arg(p)
    options.run_arg(p, help="the id to give the run (letters, digits, . _ -)")
    options.runtime_dir_arg(p)
    options.json_arg(p, "the Spawn (args, env, settings_path, run_dir)")
    options.trust_arg(p)
    options.config_home_arg(
        p,
        "with --trust config, or for a CLI armed by its installed hooks: the CLI's "
        "config dir (default: where the CLI looks)",
    )


def run(args: argparse.Namespace) -> int:
    spawn = agentspool.setup(
        args.provider,
        args.run_id,
        args.runtime_dir,
        trust=args.trust,
        config_home=args.config_home,
    )
    if args.json:
        print_json(spawn)
    else:
        import shlex

        env = [f"{k}={v}" for k, v in spawn.env.items()]
        print(shlex.join(["env", *env, *spawn.args]) if env else shlex.join(spawn.args))
    return options.EXIT_OK
