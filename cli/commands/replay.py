"""``agentspool replay``: the transitions a run's evidence and ledger made (ADR 0018)."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json, say, step_phrase, when


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "replay",
        "show the transitions a run's evidence and ledger made, with time and source",
        "Fold the run's evidence again — its spool, transcript and status file, read "
        "afresh, and its ledger — through the one reducer, and print each transition: a "
        "step after which the chat state, activity or task state changed. Writes nothing.",
        run=run,
    )
    options.run_arg(p)
    options.runtime_dir_arg(p)
    options.archive_arg(
        p, "read the run's latest copy in this archive (sweep/tidy --archive) instead"
    )
    options.json_arg(p, "the Replay (provider, run_id, run_dir, archived, events, transitions)")


def run(args: argparse.Namespace) -> int:
    found = agentspool.replay(args.run_id, args.runtime_dir, archive=args.archive)
    if args.json:
        print_json(found)
        return options.EXIT_OK
    from agentspool.cli.render import Col, print_rows

    where = "the archive" if found.archived else "the runtime dir"
    say(
        f"{found.run_id} ({found.provider}), from {where}: {found.run_dir}; "
        f"{found.events} events folded, {len(found.transitions)} transitions"
    )
    if found.transcript_gone:
        say(f"  (transcript gone: {found.transcript_gone}; spool and ledger only)")
    declared = False
    rows = []
    for t in found.transitions:
        declared = declared or t.event == "state.task_state"
        task = agentspool.task_phrase(t.task_state, t.task_reason, declared=declared)
        rows.append([when(t.at), t.channel, t.source, t.event, f"-> {step_phrase(t)}; task {task}"])
    print_rows(rows, [Col(13), Col(8), Col(28), Col(28), Col()], indent=2)
    return options.EXIT_OK
