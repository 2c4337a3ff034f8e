"""The full-screen ``agentspool watch`` (Textual, imported only by this command).

The list is a line widget of our own (``RunList``): a row is one styled string made
once per change, and a repaint only copies the visible rows — Textual's DataTable
re-rendered every cell through Rich on each update, which with the "for" column ticking
every second cost 6 % of a core for 50 idle runs. The detail pane reads the selected run
through the adapter's incremental read (``read_chat``); the traced fold (``explain``: a
full read) only on Enter, for the run the operator asked about.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group
from rich.markup import escape as markup_escape
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Header, Input, Static

import agentspool
from agentspool import AgentspoolError, RunSummary
from agentspool.cli._terminal import one_line
from agentspool.cli.render import Col, rows_table
from agentspool.cli.render import runs as render_runs
from agentspool.cli.render.runs import (
    Line,
    RunRow,
    Widths,
    ago,
    fit,
    header_line,
    line_parts,
    run_row,
)
from agentspool.cli.watch import WAITING, Follower, _waits

LAST_MESSAGES = 6
# The row's style, parsed once: a repaint copies the visible rows, styles and all.
STYLES = {style: Style.parse(style) for style in render_runs.STATE_STYLES.values()}
CURSOR = Style(reverse=True)


def escape(text: str) -> str:
    """Text for a detail line: Rich markup escaped, control characters shown."""
    return markup_escape(one_line(text))


class RunList(ScrollView, can_focus=True):
    """The runs, one line each, a cursor on one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "move(1)", "down", show=False),
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("home", "move(-1000000)", show=False),
        Binding("end", "move(1000000)", show=False),
    ]

    class Moved(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.keys: list[str] = []
        self.lines: list[Line] = []
        self.cursor = 0

    def set_rows(self, keys: list[str], lines: list[Line]) -> None:
        """Show these rows; repaint only the rows whose text changed when no row moved."""
        self.virtual_size = Size(self.size.width, len(keys))
        if keys == self.keys:
            top = self.scroll_offset.y
            for row in range(top, min(len(lines), top + self.size.height)):
                if self.lines[row] != lines[row]:
                    self.refresh_line(row)  # a row out of sight costs nothing until seen
            self.lines = lines
            return
        selected = self.keys[self.cursor] if self.keys and self.cursor < len(self.keys) else ""
        self.keys, self.lines = keys, lines
        self.cursor = keys.index(selected) if selected in keys else min(self.cursor, len(keys) - 1)
        self.cursor = max(self.cursor, 0)
        self.refresh()

    def selected(self) -> str:
        return self.keys[self.cursor] if 0 <= self.cursor < len(self.keys) else ""

    def action_move(self, by: int) -> None:
        self.move(by)

    def action_page(self, by: int) -> None:
        self.move(by * max(1, self.size.height - 1))

    def move(self, by: int) -> None:
        if not self.keys:
            return
        self.cursor = max(0, min(len(self.keys) - 1, self.cursor + by))
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False)
        self.refresh()
        self.post_message(self.Moved(self.selected()))

    def render_line(self, y: int) -> Strip:
        row = y + self.scroll_offset.y
        width = self.size.width
        if row >= len(self.lines):
            return Strip.blank(width)
        before, state, after, style = self.lines[row]
        text_width = len(before) + len(state)
        segments = [
            Segment(before),
            Segment(state, STYLES.get(style)),
            Segment(after[: max(0, width - text_width)]),
        ]
        strip = Strip(segments).adjust_cell_length(width)
        return strip.apply_style(CURSOR) if row == self.cursor else strip


class WatchApp(App[None]):
    CSS = """
    #columns { height: 1; text-style: bold; }
    #warning { height: auto; color: $warning; text-style: bold; }
    #runs { height: 1fr; }
    #detail-box { height: 1fr; border-top: solid $accent; }
    #filter { dock: bottom; display: none; }
    #filter.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True),
        Binding("enter", "evidence", "every folded event"),
        Binding("slash", "filter", "filter"),
        Binding("escape", "clear_filter", "clear filter", show=False),
    ]

    def __init__(self, follower: Follower, *, bell: bool, on_wait: str, warning: str = "") -> None:
        super().__init__()
        self.warning = warning.removeprefix("agentspool: ")
        self.follower = follower
        self.bell_on_wait = bell
        self.on_wait_command = on_wait
        self.words: list[str] = []
        self.rows: dict[str, tuple[RunSummary, RunRow, Line]] = {}
        """The rows shown, in order, by key: the run drawn, its cells, its line."""
        self.widths: Widths = ()
        self.detail_of: RunSummary | None = None
        """The run the detail pane was drawn from."""
        self.detail_shown: Detail = []
        self.selected = ""
        self.evidence_for = ""
        self.interrupted = False

    def compose(self) -> ComposeResult:
        yield Header()
        if self.warning:
            yield Static(escape(self.warning), id="warning")
        yield Static("", id="columns")
        yield RunList(id="runs")
        with VerticalScroll(id="detail-box"):
            yield Static(id="detail")
        yield Input(id="filter", placeholder="filter: words matching provider or state")
        yield Footer()

    def on_mount(self) -> None:
        import asyncio
        import signal

        # A kill or a closed terminal ends the app as q does, so the terminal is left
        # as it was found (not in the alternate screen with echo off).
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(number, self.exit)
        self.title = "agentspool watch"
        self.query_one(RunList).focus()
        self.tick()
        self.set_interval(self.follower.interval, self.tick)

    def tick(self) -> None:
        try:
            moved = self.follower.tick()
        except AgentspoolError as exc:
            self.sub_title = str(exc)
            return
        if self.bell_on_wait and self.follower.ticks > 1 and any(c.starts_waiting for c in moved):
            self.bell()
        _waits(self.follower, moved, bell=self.bell_on_wait, on_wait=self.on_wait_command)
        if self.follower.full:
            self.redraw()
        else:
            waiting = {c.key for c in moved if c.after is not None and c.after.state in WAITING}
            if waiting:
                self.redraw_waits(waiting)

    def shown(self) -> list[RunSummary]:
        runs = self.follower.listed()
        if not self.words:
            return runs
        return [
            r
            for r in runs
            if all(any(w in f for f in (r.provider, r.state, r.task_state)) for w in self.words)
        ]

    def redraw(self) -> None:
        """The rows, most urgent first, each laid out again only when its run was read
        again, its "for" reading or the columns' widths changed, and repainted only when
        its text did."""
        runs = {agentspool.run_key(run): run for run in self.shown()}
        now = time.time()
        cells = {}
        for key, run in runs.items():
            old = self.rows.get(key)
            since = ago(max(0.0, now - run.since)) if run.since else "-"
            same = old is not None and old[0] is run and old[1].since == since
            cells[key] = old[1] if same and old is not None else run_row(run, now)
        widths = tuple(fit(list(cells.values()), self.size.width or None))
        relayout = widths != self.widths
        if relayout:
            self.widths = widths
            self.query_one("#columns", Static).update(escape(header_line(widths)))
        rows = {}
        for key, run in runs.items():
            row = self.rows.get(key)
            if relayout or row is None or row[1] is not cells[key]:
                row = (run, cells[key], line_parts(cells[key], widths))
            rows[key] = row
        self.rows = rows
        self.query_one(RunList).set_rows(list(rows), [line for _, _, line in rows.values()])
        filtered = f"  filter: {' '.join(self.words)}" if self.words else ""
        left = self.follower.poll.warnings if self.follower.poll is not None else {}
        unreadable = f"  ({len(left)} left out: {next(iter(left.values()))})" if left else ""
        count = f"{len(runs)} run{'' if len(runs) == 1 else 's'}"
        self.sub_title = one_line(f"{count}{filtered}{unreadable}")
        selected = self.query_one(RunList).selected()
        drawn = rows[selected][0] if selected in rows else None
        if selected != self.selected:
            self.selected, self.evidence_for = selected, ""
            self.show_detail()
        elif drawn is not self.detail_of or not selected:
            self.show_detail()

    def redraw_waits(self, keys: set[str]) -> None:
        """Between two full seconds only what a run now waits on is drawn, in the row
        where the run stands (it moves up at the next second, when the rest is drawn):
        the wait the operator must see shows at once, and a tick repaints a row or two,
        not the list (ADR 0020). A waiting run not listed yet (a filter let it in) is
        drawn with the whole list."""
        if not keys <= self.rows.keys():
            self.redraw()
            return
        poll = self.follower.poll
        assert poll is not None
        now = time.time()
        fresh = {key: run_row(poll.runs[key], now) for key in keys}
        cells = [fresh.get(key, row) for key, (_, row, _) in self.rows.items()]
        if tuple(fit(cells, self.size.width or None)) != self.widths:
            self.redraw()  # what it waits on needs wider columns: lay every row out again
            return
        for key, row in fresh.items():
            self.rows[key] = (poll.runs[key], row, line_parts(row, self.widths))
        self.query_one(RunList).set_rows(
            list(self.rows), [line for _, _, line in self.rows.values()]
        )
        if self.selected in keys:
            self.show_detail()

    def action_interrupt(self) -> None:
        """Ctrl-C: the terminal's raw mode kept it from interrupting the foreground job,
        so once the screen is restored it is delivered as the terminal would have —
        SIGINT to the process group (a parent such as ``agentspool demo`` stops too)."""
        self.interrupted = True
        self.exit()

    def on_run_list_moved(self, message: RunList.Moved) -> None:
        if message.key != self.selected:
            self.selected, self.evidence_for = message.key, ""
            self.show_detail()

    def action_evidence(self) -> None:
        self.evidence_for = "" if self.evidence_for == self.selected else self.selected
        self.show_detail()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("shown")
        self.words = []
        self.query_one(RunList).focus()
        self.redraw()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.words = message.value.lower().split()
        if not self.words:
            message.input.remove_class("shown")
        self.query_one(RunList).focus()
        self.redraw()

    def show_detail(self) -> None:
        pane = self.query_one("#detail", Static)
        poll = self.follower.poll
        run = poll.runs.get(self.selected) if poll is not None else None
        self.detail_of = run
        if run is None:
            shown: Detail = ["no run selected" if self.rows else "no live runs"]
        else:
            shown = detail_lines(run, self.follower.runtime_dir, self.evidence_for)
        if shown != self.detail_shown:  # an update lays the screen out again, same or not
            self.detail_shown = shown
            pane.update(
                Group(*(Text.from_markup(x) if isinstance(x, str) else x.table() for x in shown))
            )


@dataclass(frozen=True)
class Rows:
    """Aligned rows of the detail pane, drawn by the renderer (``render.rows_table``)
    two cells in; kept as data so an unchanged pane is seen unchanged, not redrawn."""

    rows: list[list[str]]
    columns: tuple[Col, ...]

    def table(self) -> Padding:
        return Padding(rows_table(self.rows, self.columns), (0, 0, 0, 2), expand=False)


Detail = list[str | Rows]
"""The detail pane: lines of Rich markup, and aligned rows."""


def detail_lines(run: RunSummary, runtime_dir: str | None, evidence_for: str) -> Detail:
    name = run.run_id or f"session {run.session_id}"
    lines: Detail = [
        f"[b]{escape(name)}[/b] — {escape(run.provider)}: "
        f"[b]{escape(agentspool.state_phrase(run))}[/b] ({run.state})"
    ]
    if run.task_declared:
        lines.append(f"task: {escape(agentspool.task_phrase(run.task_state, run.task_reason))}")
    if run.cwd:
        lines.append(f"cwd: {escape(run.cwd)}")
    if run.pending_approval is not None:
        command = run.pending_approval.tool_input.get("command", "")
        shown = command if isinstance(command, str) and command else run.pending_approval.tool_input
        lines.append(
            f"[b]waiting for approval[/b] of {escape(run.pending_approval.tool_name)}: "
            f"{escape(str(shown))}"
        )
    if run.pending_dialog is not None:
        lines.append(f"[b]{run.pending_dialog.kind}[/b]: {escape(run.pending_dialog.prompt)}")
        for number, option in enumerate(run.pending_dialog.options, 1):
            lines.append(f"  {number}. {escape(option.label)}")
    try:
        if run.run_id:
            chat = agentspool.read_chat(run.provider, run.run_id, runtime_dir)
        else:
            chat = agentspool.read_chat(
                run.provider, run.session_id, None, run.transcript_path, live=False
            )
    except AgentspoolError as exc:
        return [*lines, f"(cannot read: {escape(str(exc))})"]
    usage = chat.usage
    plain = usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens
    lines.append(
        f"usage: input {plain:,} · output {usage.output_tokens:,} · cache read "
        f"{usage.cached_input_tokens:,} · cache write {usage.cache_write_tokens:,}"
    )
    lines.append("[b]last messages[/b]")
    messages = [
        [m.role, " ".join(m.text.split())[:160] or f"({m.kind})"]
        for m in chat.messages[-LAST_MESSAGES:]
    ]
    lines.append(Rows(messages, (Col(9), Col())))
    if evidence_for and evidence_for == agentspool.run_key(run) and run.run_id:
        found = agentspool.explain(run.provider, run.run_id, runtime_dir)
        lines.append(f"[b]evidence[/b]: {len(found.steps)} events folded; the last 20:")
        steps = []
        for step in found.steps[-20:]:
            kind = str(type(step.event).__struct_config__.tag)
            effect = f"ignored: {step.ignored}" if step.ignored else f"-> {step.state}"
            at = time.strftime("%H:%M:%S", time.localtime(step.event.at)) if step.event.at else "-"
            steps.append([at, step.event.source or "-", kind, effect])
        lines.append(Rows(steps, (Col(9), Col(28), Col(26), Col())))
    else:
        lines.append("[b]decided by[/b] (enter: every folded event)")
        evidence = [[e.source, e.detail] for e in chat.evidence]
        lines.append(Rows(evidence, (Col(28), Col())))
    return lines


__all__ = ["RunList", "WatchApp"]
