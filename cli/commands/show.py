"""``agentspool show``: one session as a person reads it (ADR 0027). The drawing is
``render.session``'s."""

from __future__ import annotations

import argparse
import sys

import agentspool
from agentspool.cli import options
from agentspool.cli.commands.index import index_quietly
from agentspool.cli.output import drift_warning, print_json_by_item

LINES = 6
"""``show --lines``: lines shown of each tool result, thinking block and summary."""


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "show",
        "print one session: prompts, answers, tool calls and results, subagents, usage",
        "Print a session as a person reads it: a header (provider, session, transcript, "
        "cwd, models, time, state, totals), then turn by turn the prompt, the answer, "
        "thinking (dimmed, cut), each tool call with its input summarized and its result "
        "(cut to --lines, errors marked), the subagents a call spawned indented under it, "
        "compactions, summaries and interrupts marked, and the usage of each turn. Any "
        "provider's session: by its id, the start of its id, or its transcript file. "
        "Without a terminal the text has no colours and no wrapping; --json prints the "
        "SessionDetail (assemble_session_detail over the session's records and its "
        "subagents').",
        run=run,
    )
    p.add_argument(
        "session",
        metavar="SESSION",
        help="a session id, the start of one, or the path of a transcript file",
    )
    options.flag(
        p,
        "--include-inactive",
        "also show the records the provider marks superseded (rewind, branch), marked [superseded]",
    )
    p.add_argument(
        "--lines",
        type=int,
        default=LINES,
        metavar="N",
        help="lines shown of each tool result, thinking block and summary; 0 shows "
        "them whole (default: %(default)s)",
    )
    options.flag(p, "--pager", "on a terminal, page the output through $PAGER (default: less -R)")
    options.json_arg(p, "the SessionDetail (conversation, tools, orphan_results, subagents, ...)")


def run(args: argparse.Namespace) -> int:
    import os

    if not os.path.exists(args.session):
        # An id is looked up in the history store, which show_session brings up to date
        # first; here that (maybe long) first run gets the progress bar.
        index_quietly(None)
    view = agentspool.show_session(args.session, include_inactive=args.include_inactive)
    if view.chat.drift:
        print(drift_warning(view.provider, view.session.session_id, view.chat), file=sys.stderr)
    # A reader that leaves (``show | head``) is the error boundary's (``cli/main.py``).
    if args.json:
        print_json_by_item(view.detail)
    else:
        from agentspool.cli.render.session import print_view  # rich: only when drawing

        print_view(view, lines=args.lines, pager=args.pager)
    return options.EXIT_OK
