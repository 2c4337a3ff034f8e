"""``usage``'s table (docs/adr/0025-usage.md): one row per day, session, model or
project, every figure whole, fitting 80 columns on a terminal and as wide as it needs
on a pipe."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from agentspool import UsageReport, UsageRow

WIDE = 120
"""A terminal at least this wide gets the wide layout: one-line headers, every model's
release date. A narrower one, 80 columns first, the narrow layout."""
KEY_HEADERS = {"day": "Date", "session": "Session", "model": "Model", "project": "Project"}


def print_usage(report: UsageReport, *, terminal: bool) -> None:
    """The report on stdout: its table and the notes under it (prices' date, time zone,
    what a cost leaves out)."""
    from agentspool.cli.render import console

    # Not a terminal (a file, a pipe): as wide as the table needs, never wrapped at 80.
    out = console(terminal=terminal)
    if not report.rows:
        out.print("no usage recorded" + usage_span(report))
        return
    total = report.total
    out.print(usage_table(report, narrow=terminal and out.width < WIDE))
    notes = [
        f"prices as of {report.prices_taken}; days in {report.timezone} time" + usage_span(report)
    ]
    if total.unpriced_tokens:
        notes.append(
            f"* leaves out {total.unpriced_tokens:,} tokens of models without a price: "
            + ", ".join(m or "(model not named)" for m in total.unpriced_models)
        )
    for note in notes:
        out.print(note, soft_wrap=True)


def cost(row: UsageRow) -> str:
    if row.cost_usd is None:
        return "no price"
    cost = (
        f"${row.cost_usd:,.2f}"
        if row.cost_usd >= 0.01 or not row.cost_usd
        else f"${row.cost_usd:.4f}"
    )
    return cost + ("*" if row.unpriced_tokens else "")


SESSION_MOST = 13
"""…and at most: past that the start is marked cut (…); ``--json`` has every id whole."""
SESSION_SHOWN = 8
"""Characters of a session id ``usage --by session`` shows at least (more while another
row's id starts the same): a start ``show`` takes."""


def usage_table(report: UsageReport, *, narrow: bool) -> Table:
    """The report as a rich table that fits 80 columns: every number and cost whole
    (as wide as its widest cell; ``narrow``, on a terminal: the cache headers on two
    lines; a model without its release date), a session by the start of its id (``show``
    takes it),
    the provider whole, the project cut with an ellipsis to what is left."""
    total = report.total
    names = [
        ("Input", "Input", "input_tokens"),
        ("Output", "Output", "output_tokens"),
        ("Cache read", "Cache\nread" if narrow else "Cache read", "cache_read_tokens"),
        ("Cache write", "Cache\nwrite" if narrow else "Cache write", "cache_write_tokens"),
        ("Total", "Total", "total_tokens"),
    ]

    ids = [row.key for row in report.rows]

    def key(row: UsageRow) -> str:
        shown = row.key or "(not named)"
        if report.by == "model" and narrow:
            return re.sub(r"-\d{8}$", "", shown)  # a release date: --json has it
        if report.by != "session" or not row.key:
            return shown
        size = SESSION_SHOWN  # the shortest start of the id no other row's shares
        while size < SESSION_MOST and any(
            other != shown and other.startswith(shown[:size]) for other in ids
        ):
            size += 1
        cut = size < len(shown) and any(o != shown and o.startswith(shown[:size]) for o in ids)
        return shown[:size] + ("…" if cut else "")

    rows = []
    for row in report.rows:
        cells = [key(row)]
        if report.by == "session":
            cells += [row.provider, row.project or "-"]
        elif report.by == "model":
            cells += [row.provider]
        cells += [f"{getattr(row, field):,}" for _, _, field in names]
        rows.append([*cells, cost(row)])
    footer = ["Total"] + [""] * (len(rows[0]) - 7)
    footer += [f"{getattr(total, field):,}" for _, _, field in names] + [cost(total)]
    widest = [max(len(r[i]) for r in [*rows, footer]) for i in range(len(footer))]
    at = len(widest) - len(names) - 1
    for i, (_, header, _) in enumerate(names, at):  # a header is never cut either
        widest[i] = max(widest[i], *map(len, header.split("\n")))
    widest[-1] = max(widest[-1], len("Cost"))
    from rich.table import Table

    table = Table(show_footer=True, box=None, pad_edge=False, padding=(0, 1, 0, 0))
    if report.by == "session":
        table.add_column(KEY_HEADERS[report.by], footer="Total", no_wrap=True, min_width=widest[0])
    else:  # a model's or a project's name: cut with an ellipsis if it must be
        table.add_column(KEY_HEADERS[report.by], footer="Total", overflow="ellipsis", ratio=1)
    extra = {"session": ["Provider", "Project"], "model": ["Provider"]}.get(report.by, [])
    for i, name in enumerate(extra, 1):
        if name == "Project":
            table.add_column(name, overflow="ellipsis", ratio=1)
        else:
            table.add_column(name, no_wrap=True, min_width=widest[i])
    for i, (_, header, _) in enumerate(names, at):
        table.add_column(
            header, footer=footer[i], justify="right", no_wrap=True, min_width=widest[i]
        )
    table.add_column("Cost", footer=footer[-1], justify="right", no_wrap=True, min_width=widest[-1])
    for cells in rows:
        table.add_row(*cells)
    return table


def usage_span(report: UsageReport) -> str:
    if report.since and report.until:
        return f"; {report.since} to {report.until}"
    if report.since or report.until:
        return f"; since {report.since}" if report.since else f"; until {report.until}"
    return ""
