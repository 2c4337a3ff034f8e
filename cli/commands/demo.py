"""``agentspool demo``: recorded sessions replayed through the real hooks, and a view of
their states changing (ADR 0021)."""

from __future__ import annotations

import argparse
import sys
import time

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json

END_HOLD = 3.0
"""Seconds the view stays on the ended runs."""


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "demo",
        "replay recorded Claude Code and Codex sessions and watch their states change",
        "No agent CLI and no network needed: three recorded sessions (a Claude Code "
        "permission prompt approved, a Claude Code question answered, a Codex approval) "
        "are replayed in real time into a temporary runtime dir — through the real hooks, "
        "the real transcript writes and Claude Code's status file — while a view shows "
        "each run go idle, working, waiting on a permission prompt or a question, and end. "
        "The view is `agentspool watch` where it exists, else `ls` redrawn once a second. "
        "Everything it made is removed when it ends or on Ctrl-C.",
        run=run,
    )
    p.add_argument(
        "--speed",
        type=options.positive,
        default=1.0,
        metavar="X",
        help="play X times as fast (default: %(default)s)",
    )
    options.flag(p, "--no-view", "no screen: print one line per state change of a run instead")
    options.json_arg(p, "each state change (no screen): one object per line")


def hold(speed: float) -> float:
    """Seconds the view stays on the ended runs: shorter when played faster, but never
    less than two of watch's full polls (a process's end is seen by those)."""
    return max(2.0, END_HOLD / min(speed, 3.0))


def _leave_on(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def run(args: argparse.Namespace) -> int:
    import signal

    # A closed terminal (SIGHUP) or a kill (SIGTERM) unwinds like Ctrl-C does, so the
    # replay still stops its agents and removes its temporary dir.
    signal.signal(signal.SIGHUP, _leave_on)
    signal.signal(signal.SIGTERM, _leave_on)
    with agentspool.DemoReplay(speed=args.speed) as demo:
        if args.no_view or args.json:
            _transitions(demo, as_json=args.json)
        elif _has_watch():
            _with_watch(demo, args.speed)
        else:
            _with_ls(demo, args.speed)
    return options.EXIT_OK


def _transitions(demo: agentspool.DemoReplay, *, as_json: bool) -> None:
    """One line per state change of a run, read after each step the replay performs."""
    last: dict[str, str] = {}

    def on_step(step: agentspool.DemoStep) -> None:
        run = step.run
        chat = agentspool.read_chat(run.provider, run.run_id, demo.runtime_dir)
        waits = ""
        if chat.pending_approval is not None:
            waits = f"approve {chat.pending_approval.tool_name}"
        elif chat.pending_dialog is not None:
            waits = f"{chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
        shown = agentspool.state_phrase(chat)
        key = f"{chat.state}\0{waits}\0{shown}"
        if last.get(run.run_id) == key:
            return
        last[run.run_id] = key
        if as_json:
            shape = {"provider": run.provider, "run_id": run.run_id, "state": chat.state}
            print_json({**shape, "waits": waits})
        else:
            from agentspool.cli.render import Col, print_rows

            print_rows([[run.provider, run.run_id, shown]], [Col(12), Col(28), Col()])
        sys.stdout.flush()

    demo.play(None, on_step)


def _has_watch() -> bool:
    """Whether ``watch`` can draw here: Textual is a dependency, but a trimmed install
    (a distribution package without it) still gets ``ls`` redrawn."""
    import importlib.util

    return importlib.util.find_spec("textual") is not None


def _with_watch(demo: agentspool.DemoReplay, speed: float) -> None:
    import os
    import subprocess

    view = subprocess.Popen(
        [sys.executable, "-m", "agentspool.cli.main", "watch", "--runtime-dir", demo.runtime_dir],
        env={**os.environ, **demo.environment},
    )
    try:
        demo.play()
        # The last step is a run's end: the view needs time to show it (play() returns at
        # once when no step is left, so it cannot be the wait).
        time.sleep(hold(speed))
    finally:
        view.terminate()
        try:
            view.wait(timeout=10)
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()


def _with_ls(demo: agentspool.DemoReplay, speed: float) -> None:
    from agentspool.cli.render import console
    from agentspool.cli.render.runs import print_runs

    out = console()

    def draw() -> None:
        runs = agentspool.list_runs(demo.runtime_dir, include_ended=True, sessions=False)
        out.clear()  # on a terminal only: a pipe gets the frames one after another
        out.print(
            "agentspool demo: recorded sessions replayed through the real hooks (Ctrl-C stops)"
        )
        out.print()
        print_runs(runs, time.time(), terminal=out.is_terminal)
        sys.stdout.flush()

    more = True
    while more:
        draw()
        more = demo.play(1.0)
    deadline = time.monotonic() + hold(speed)
    while time.monotonic() < deadline:
        draw()
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    draw()
