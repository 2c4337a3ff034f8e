"""``agentspool explain``: the evidence behind a run's state, step by step."""

from __future__ import annotations

import argparse

import agentspool
from agentspool.cli import options
from agentspool.cli.output import print_json, say, step_phrase, usage_error, when


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "explain",
        "show the evidence behind a run's state",
        "Read the run afresh and show every canonical event the read folded — hook records, "
        "transcript records, status-file readings — in fold order, with its time and "
        "source, the state after it, or why it was judged stale; then the decisive "
        "evidence. The run by its id (`explain RUN_ID`, as ls prints it), or as "
        "`explain PROVIDER RUN_ID`.",
        run=run,
    )
    p.add_argument(
        "ids",
        nargs="*",
        metavar="[PROVIDER] RUN_ID",
        help="the run's id, as ls prints it (a provider before it also works)",
    )
    # `explain PROVIDER --run-id RUN_ID`, the spelling before ADR 0044: still accepted.
    p.add_argument("--run-id", default=None, help=argparse.SUPPRESS)
    options.runtime_dir_arg(p)
    options.transcript_arg(p)
    p.add_argument(
        "--last",
        type=int,
        default=40,
        metavar="N",
        help="show the last N steps (default: %(default)s; --json has them all)",
    )
    options.json_arg(p, "the Explanation (chat without messages, every step)")


def explained_run(args: argparse.Namespace) -> tuple[str | None, str] | None:
    """``(provider or None, run id)`` from ``explain``'s words; ``None``: bad usage."""
    ids: list[str] = args.ids
    providers = agentspool.providers()
    if args.run_id is not None:
        if len(ids) > 1 or (ids and ids[0] not in providers):
            return None
        return (ids[0] if ids else None), args.run_id
    if len(ids) == 1:
        return None, ids[0]
    if len(ids) == 2 and ids[0] in providers:
        return ids[0], ids[1]
    return None


def run(args: argparse.Namespace) -> int:
    named = explained_run(args)
    if named is None:
        providers = ", ".join(agentspool.providers())
        return usage_error(
            f"explain: give a run id (explain RUN_ID), or a provider ({providers}) and its run id"
        )
    provider, run_id = named
    found = agentspool.explain(provider, run_id, args.runtime_dir, args.transcript)
    if args.json:
        print_json(found)
        return options.EXIT_OK
    from agentspool.cli.render import Col, print_rows

    chat = found.chat
    task = agentspool.task_phrase(chat.task_state, chat.task_reason, declared=chat.task_declared)
    say(
        f"{run_id} ({found.provider}): {agentspool.state_phrase(chat)} "
        f"(state {chat.state}; task {task})"
    )
    steps = found.steps
    ignored = sum(1 for s in steps if s.ignored)
    shown = steps[-args.last :] if args.last > 0 else []
    say(f"events folded: {len(steps)} ({ignored} changed nothing); the last {len(shown)}:")
    rows = []
    for step in shown:
        event = step.event
        kind = type(event).__struct_config__.tag
        effect = f"ignored: {step.ignored}" if step.ignored else f"-> {step_phrase(step)}"
        rows.append([when(event.at), event.source or "-", str(kind), effect])
    print_rows(rows, [Col(13), Col(28), Col(28), Col()], indent=2)
    say("decided by:")
    evidence = [[when(e.at), e.source, e.detail] for e in chat.evidence]
    print_rows(evidence, [Col(13), Col(28), Col()], indent=2)
    version = chat.drift.cli_version or "not stated"
    say(f"parse counters (CLI version {version}): {chat.drift.describe() or 'nothing unknown'}")
    say(f"transcript: {chat.transcript_path or '(not located yet)'}")
    return options.EXIT_OK
