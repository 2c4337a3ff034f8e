"""The run list as ``ls``, ``watch`` and the demo draw it: one row per run, in columns
sized to what they hold and to the terminal (docs/adr/0039-human-words.md).

A row says what the person must do (``agentspool.state_phrase``), for how long it has
been so, the task state when a declaration set one, and the run's first prompt. Fixed
columns — provider, run id, the time — are as wide as their longest cell and never
cut, so an id or a number is never shown in part; the state and the title share what
is left, the state first, each cut with an ellipsis when it must be; a title with no
room is left out. rich draws the table (``ls``, the demo); watch's own line widget paints
``line_parts``, the same cells in the same widths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import agentspool
from agentspool.cli._terminal import safe

if TYPE_CHECKING:
    from rich.table import Table

GAP = 2
"""Spaces between two columns."""
STATE_MIN = 14
"""The least width of the state column, however narrow the terminal."""
TITLE_MIN = 10
"""A title narrower than this is left out."""
HEADERS = {
    "provider": "PROVIDER",
    "run": "RUN",
    "state": "STATE",
    "for": "FOR",
    "task": "TASK",
    "title": "TITLE",
}


def ago(seconds: float) -> str:
    """``12s``, ``3m``, ``2h``, ``5d``: how long, in the largest whole unit."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


@dataclass(frozen=True)
class RunRow:
    """One run's cells, as a person reads them."""

    provider: str
    run: str
    state: str
    """``state_phrase``: what the person must do, or what the run does."""
    since: str
    task: str
    """``""`` unless a declaration set the task state."""
    title: str
    wire: str
    """The wire word (``Chat.state``), for the row's colour."""

    def cell(self, column: str) -> str:
        return self.since if column == "for" else str(getattr(self, column))


def _one_line(text: str) -> str:
    """Conversation text on one line: its whitespace collapsed, every other control
    character shown (``_terminal.safe``), so no escape sequence reaches the screen."""
    return " ".join(safe(text).split())


def run_row(run: agentspool.RunSummary, now: float) -> RunRow:
    since = ago(max(0.0, now - run.since)) if run.since else "-"
    task = agentspool.task_phrase(run.task_state, run.task_reason) if run.task_declared else ""
    return RunRow(
        provider=run.provider,
        run=run.run_id or f"session {run.session_id[:12]}",
        state=_one_line(agentspool.state_phrase(run)),
        since=since,
        task=task,
        title=_one_line(run.title),
        wire=run.state,
    )


def fit(rows: Sequence[RunRow], width: int | None) -> list[tuple[str, int]]:
    """The columns to draw, each with its width, for a line at most ``width`` wide
    (``None``: as wide as the cells need)."""

    def widest(column: str) -> int:
        return max([len(HEADERS[column]), *(len(r.cell(column)) for r in rows)])

    fixed = [(c, widest(c)) for c in ("provider", "run")]
    tail = [("for", widest("for"))]
    if any(r.task for r in rows):
        tail.append(("task", min(widest("task"), 24)))
    state, title = widest("state"), widest("title")
    if not any(r.title for r in rows):
        title = 0
    if width is None:
        columns = [*fixed, ("state", state), *tail]
        return [*columns, ("title", title)] if title else columns
    used = sum(w for _, w in (*fixed, *tail)) + GAP * (len(fixed) + len(tail))
    room = width - used
    state_width = max(min(state, room), min(state, STATE_MIN))
    columns = [*fixed, ("state", state_width), *tail]
    title_room = room - state_width - GAP
    if title and title_room >= TITLE_MIN:
        columns.append(("title", min(title, title_room)))
    return columns


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole, or cut with an ellipsis."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


STATE_STYLES = {
    "question": "bold magenta",
    "needs_input": "bold yellow",
    "working": "green",
    "idle": "dim",
}


def runs_table(rows: Sequence[RunRow], width: int | None) -> Table:
    """The rows as a rich table at most ``width`` wide (``None``: unbounded)."""
    from rich.table import Table
    from rich.text import Text

    columns = fit(rows, width)
    table = Table(box=None, pad_edge=False, padding=(0, GAP, 0, 0), header_style="bold")
    for name, size in columns:
        table.add_column(
            HEADERS[name],
            width=size,
            no_wrap=True,
            overflow="ellipsis",
            justify="right" if name == "for" else "left",
        )
    for row in rows:
        cells = []
        for name, size in columns:
            text = Text(cut(row.cell(name), size))
            if name == "state":
                text.stylize(STATE_STYLES.get(row.wire, ""))
            cells.append(text)
        table.add_row(*cells)
    return table


def print_runs(runs: Sequence[agentspool.RunSummary], now: float, *, terminal: bool) -> None:
    """``ls``: the table on stdout, as wide as the terminal (on a pipe, unbounded)."""
    from agentspool.cli.render import console, write

    out = console(terminal=terminal)
    rows = [run_row(run, now) for run in runs]
    write(runs_table(rows, out.width if terminal else None), out)


Line = tuple[str, str, str, str]
"""A row as watch's line widget paints it: the text before the state column, the state
cell, the rest, the state's style (``STATE_STYLES``)."""
Widths = tuple[tuple[str, int], ...]
"""The columns drawn and their widths (``fit``)."""


def line_parts(row: RunRow, widths: Widths) -> Line:
    """A row laid out in the columns ``widths`` names, cell for cell as ``runs_table``
    lays it out: watch paints these strings itself (a repaint copies the visible rows;
    a rich table per tick cost 6 % of a core for 50 idle runs, ADR 0020)."""
    parts: dict[str, str] = {}
    for name, width in widths:
        text = cut(row.cell(name), width)
        parts[name] = text.rjust(width) if name == "for" else text.ljust(width)
    gap = " " * GAP
    before = "".join(parts[n] + gap for n, _ in widths if n in ("provider", "run"))
    after = gap + gap.join(parts[n] for n, _ in widths if n not in ("provider", "run", "state"))
    return before, parts["state"], after.rstrip(), STATE_STYLES.get(row.wire, "")


def header_line(widths: Widths) -> str:
    """The column headers over ``line_parts``' rows."""
    return (
        (" " * GAP)
        .join(HEADERS[n].rjust(w) if n == "for" else HEADERS[n].ljust(w) for n, w in widths)
        .rstrip()
    )
