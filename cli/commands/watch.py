"""``agentspool watch``: every run followed live — the full screen on a terminal
(``cli/_watch_app.py``), JSON lines without one (``cli/watch.py``; ADR 0020)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, get_args

import agentspool
from agentspool.cli import options
from agentspool.cli.output import install_warning

if TYPE_CHECKING:
    from agentspool.cli.watch import Follower


def add_parser(sub: options.Subparsers) -> None:
    from agentspool.cli.watch import FULL_EVERY, INTERVAL

    p = options.command(
        sub,
        "watch",
        "follow every run live: a full-screen list, or JSON lines without a terminal",
        "Follow the runs `ls` lists: what a hook records shows within half a second "
        "(--interval), what only a transcript, status file or process shows within a "
        "second; a run is read again only when its evidence changed. On a terminal: a "
        "list, most urgent first, and the selected run's detail (j/k or arrows, enter: "
        "every folded event, / filter by provider or state, q quits). Without one (a "
        "pipe, CI) or with --json: one JSON line per state transition (event "
        "seen/changed/gone, key, previous state, then the RunSummary fields) until "
        "interrupted.",
        run=run,
    )
    options.runtime_dir_arg(p)
    options.provider_filter_arg(p, "only this provider's runs (repeatable)")
    p.add_argument(
        "--state",
        action="append",
        default=[],
        choices=get_args(agentspool.ChatState),
        help="only runs in this state (repeatable)",
    )
    options.flag(
        p,
        "--bell",
        "ring the terminal and send a desktop notification (where notify-send "
        "exists) when a run starts waiting on you",
    )
    p.add_argument(
        "--on-wait",
        default="",
        metavar="CMD",
        help="when a run starts waiting on you, run the shell command CMD with the run's "
        "JSON (a RunSummary) on its stdin",
    )
    options.notify_args(p)
    options.flag(p, "--json", "print JSON lines even on a terminal (no drawing)")
    p.add_argument(
        "--interval",
        type=options.positive,
        default=INTERVAL,
        metavar="SECONDS",
        help=f"stat the spools hooks append to every SECONDS (default {INTERVAL}); every "
        f"run's whole signature is taken every {FULL_EVERY:g} s, or every SECONDS if longer",
    )
    options.flag(p, "--once", "with JSON lines: poll once, print, exit")
    p.add_argument(
        "--for",
        dest="duration",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with JSON lines: stop after SECONDS (default: until interrupted)",
    )


def run(args: argparse.Namespace) -> int:
    from agentspool.cli import watch

    follower = watch.Follower(args.runtime_dir, args.provider, args.state, interval=args.interval)
    follower.notifier = options.notifier(args)
    try:
        return _follow(args, follower)
    finally:
        if follower.notifier is not None:
            follower.notifier.close()  # what is queued is sent before watch exits


def _follow(args: argparse.Namespace, follower: Follower) -> int:
    from agentspool.cli import watch

    warning = install_warning()
    if args.json or args.once or args.duration is not None or not watch.stdout_is_terminal():
        if warning:
            print(warning, file=sys.stderr, flush=True)

        def write(line: bytes) -> None:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

        # A reader that leaves (``watch | head -1``) is the error boundary's (cli/main.py).
        return watch.follow_lines(
            follower,
            once=args.once,
            duration=args.duration,
            bell=args.bell,
            on_wait=args.on_wait,
            write=write,
        )
    from agentspool.cli._watch_app import WatchApp  # Textual: only this command pays for it

    app = WatchApp(follower, bell=args.bell, on_wait=args.on_wait, warning=warning)
    app.run()
    if app.interrupted:
        import os
        import signal

        os.killpg(os.getpgrp(), signal.SIGINT)  # raises KeyboardInterrupt here: exit 130
    return options.EXIT_OK
