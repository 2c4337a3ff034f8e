"""The one renderer: every table and colour the commands draw, with rich
(docs/adr/0044-cli-rooms.md).

- this module: the console (as wide as the terminal; on a pipe as wide as the text
  needs, no colour), ``print_rows`` for the line-per-item listings (``explain``,
  ``replay``, ``tidy``, ``doctor``, ``search``, the demo's lines), the progress bar;
- ``runs``: the run list of ``ls``, ``watch`` and the demo (ADR 0039);
- ``usage``: ``usage``'s table (ADR 0025);
- ``session``: ``show``'s entries (ADR 0027).

rich is imported inside the functions, so importing this package costs nothing to a
command that prints JSON. Text others wrote reaches rich already made safe
(``_terminal``) and always as ``Text``, never as markup.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

PIPE_WIDTH = 10_000
"""A console's width off a terminal: lines as long as their text, never wrapped."""


def console(*, terminal: bool | None = None, stderr: bool = False) -> Console:
    """A console for stdout (or stderr): the terminal's width, or ``PIPE_WIDTH``."""
    if terminal is None:
        terminal = (sys.stderr if stderr else sys.stdout).isatty()
    return rich_console(
        highlight=False,
        stderr=stderr,
        width=None if terminal else PIPE_WIDTH,
        soft_wrap=False,
    )


def rich_console(**options: Any) -> Console:
    """``rich.console.Console(**options)`` whose reader leaving raises ``BrokenPipeError``.

    rich's own answer points stdout at /dev/null and raises ``SystemExit(1)``: `agentspool
    usage | head` exited 1, and `show`'s pager, left early, took stdout with it. The error
    boundary (cli/main.py) ends every command whose reader left quietly, exit 0, and the
    pager's writer knows that error too."""
    from rich.console import Console

    made = Console(**options)
    made.on_broken_pipe = _reader_left  # type: ignore[method-assign]
    return made


def _reader_left() -> None:
    raise BrokenPipeError(errno.EPIPE, "the reader left")


def write(renderable: RenderableType, out: Console | None = None) -> None:
    """``renderable`` on stdout, each line without its trailing padding."""
    out = out or console()
    with out.capture() as captured:
        out.print(renderable)
    text = captured.get()
    sys.stdout.write("".join(line.rstrip() + "\n" for line in text.splitlines()))


@dataclass(frozen=True)
class Col:
    """A column of ``print_rows``: at least ``width`` cells (then one space)."""

    width: int = 0
    right: bool = False
    style: str = ""


def rows_table(rows: Sequence[Sequence[Any]], columns: Sequence[Col]) -> Any:
    """The rows as a rich table with no header and no box: each column as wide as its
    widest cell (at least ``Col.width``), the last one wrapped when the terminal is
    narrower than the line. A ``str`` cell is made one safe line (``one_line``); a
    ``Text`` cell is the caller's, made safe before it was styled."""
    from rich.table import Table
    from rich.text import Text

    from agentspool.cli._terminal import one_line

    table = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1, 0, 0))
    last = len(columns) - 1
    for i, col in enumerate(columns):
        table.add_column(
            min_width=col.width or None,
            justify="right" if col.right else "left",
            no_wrap=i < last,
            overflow="fold",
            style=col.style or None,
        )
    for row in rows:
        table.add_row(*(c if isinstance(c, Text) else Text(one_line(c)) for c in row))
    return table


def print_rows(rows: Sequence[Sequence[Any]], columns: Sequence[Col], *, indent: int = 0) -> None:
    """``rows`` in aligned columns on stdout (``rows_table``), ``indent`` cells in."""
    if not rows:
        return
    from rich.padding import Padding

    table = rows_table(rows, columns)
    write(Padding(table, (0, 0, 0, indent), expand=False) if indent else table)


def progress_bar(total: int) -> tuple[Any, Any]:
    """A started rich progress bar for ``total`` bytes, and its task."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        # On stderr, the terminal the decision was made on: stdout may be `--json`'s file.
        console=rich_console(stderr=True),
        transient=True,
    )
    bar.start()
    return bar, bar.add_task("index", total=total)
