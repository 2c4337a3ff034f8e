"""``agentspool search``: full-text search over every indexed conversation (ADR 0024)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import agentspool
from agentspool.cli import options
from agentspool.cli._terminal import one_line
from agentspool.cli.commands.index import index_quietly
from agentspool.cli.output import print_json, say, usage_error

# Private-use stand-ins for the start and end of a match, turned into bold only after
# the snippet is made safe: the snippet's own text can hold any escape sequence.
BOLD_ON, BOLD_OFF = "\ue000", "\ue001"


def add_parser(sub: options.Subparsers) -> None:
    p = options.command(
        sub,
        "search",
        "full-text search over every indexed conversation",
        "Search the history for records holding every word given (word* matches a "
        "prefix): prompts, replies, reasoning, summaries and tool calls (name and input); "
        "not tool results. Best matches first, with provider, session, time and the text "
        "around the match. Indexes first (incrementally) unless --no-index.",
        run=run,
    )
    p.add_argument(
        "words",
        nargs="*",
        metavar="WORD",
        help="what to find (after --, words may start with -)",
    )
    p.add_argument(
        "--limit",
        type=options.positive_int,
        default=20,
        metavar="N",
        help="at most N hits (default: %(default)s)",
    )
    p.add_argument(
        "--provider", choices=agentspool.providers(), default=None, help="only this provider's"
    )
    options.flag(p, "--no-index", "search what is indexed already")
    options.store_arg(p)
    options.json_arg(
        p, "a list of SearchHit objects (session, seq, kind, role, timestamp, snippet, rank)"
    )


def run(args: argparse.Namespace) -> int:
    text = " ".join(args.words)
    if not text.strip(" *"):
        return usage_error("search: give at least one word")
    if not args.no_index:
        index_quietly(args.store)
    terminal = not args.json and sys.stdout.isatty()
    marks = (BOLD_ON, BOLD_OFF) if terminal else ("«", "»")
    hits = agentspool.search_history(
        text, store=args.store, limit=args.limit, provider=args.provider, marks=marks
    )
    if args.json:
        print_json(hits)
        return options.EXIT_OK
    if not hits:
        say(f"agentspool: no record holds {text!r}", file=sys.stderr)
        return options.EXIT_OK
    from agentspool.cli.render import Col, print_rows

    print_rows([_cells(hit) for hit in hits], [Col(17), Col(11), Col(17), Col(9), Col()])
    return options.EXIT_OK


def _cells(hit: agentspool.SearchHit) -> list[Any]:
    import time
    from datetime import datetime

    from rich.text import Text

    try:
        at = datetime.fromisoformat(hit.timestamp).timestamp() if hit.timestamp else 0.0
    except ValueError:
        at = 0.0
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "-" * 16
    session = hit.session
    who = session.session_id[:8] or "-"
    if session.agent_id:
        who += f"/{session.agent_id[:8]}"
    snippet = Text()
    for i, part in enumerate(one_line(" ".join(hit.snippet.split())).split(BOLD_ON)):
        matched, _, rest = part.partition(BOLD_OFF) if i else ("", "", part)
        snippet.append(matched, style="bold")
        snippet.append(rest)
    return [stamp, session.provider, who, hit.role, snippet]
