"""``agentspool read``: the run's composed state (and conversation)."""

from __future__ import annotations

import argparse
import sys

import agentspool
from agentspool.cli import options
from agentspool.cli.output import drift_warning, print_json, say


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "read",
        "print the run's composed state (and conversation)",
        "Compose the run's state from its spool, transcript and native status.",
        run=run,
    )
    options.provider_arg(p)
    options.run_arg(p)
    options.runtime_dir_arg(p)
    options.transcript_arg(p)
    options.flag(p, "--transcript-only", "read the transcript alone: no hook spool, no status file")
    options.flag(p, "--ended", "the run has terminated: read transcript-only, state 'ended'")
    options.json_arg(p, "the Chat")


def run(args: argparse.Namespace) -> int:
    chat = agentspool.read_chat(
        args.provider,
        args.run_id,
        args.runtime_dir,
        args.transcript,
        live=not args.transcript_only,
        ended=args.ended,
    )
    if chat.drift:
        say(drift_warning(args.provider, args.run_id, chat), file=sys.stderr)
    if args.json:
        print_json(chat)
        return options.EXIT_OK
    task = chat.task_state + (f": {chat.task_reason}" if chat.task_reason else "")
    say(f"{args.run_id}: {chat.state} (activity {chat.activity}, task {task})")
    if chat.pending_approval is not None:
        say(
            f"  waiting for approval of {chat.pending_approval.tool_name}: "
            f"{chat.pending_approval.tool_input}"
        )
    if chat.pending_dialog is not None:
        choices = ", ".join(o.label for o in chat.pending_dialog.options)
        say(
            f"  {chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
            + (f" [{choices}]" if choices else "")
        )
    for evidence in chat.evidence:
        say(f"  evidence: {evidence.source} {evidence.detail}".rstrip())
    transcript = chat.transcript_path or "(not located yet)"
    say(f"  {len(chat.messages)} messages; transcript {transcript}")
    return options.EXIT_OK
