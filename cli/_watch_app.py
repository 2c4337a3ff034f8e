"""The full-screen ``agentspool watch`` (Textual, imported only by this command).

The list is rebuilt only on a tick whose poll moved something; otherwise only the
"for" column is updated. The detail pane reads the selected run through the adapter's
incremental read (``read_chat``); the traced fold (``explain``: a full read) only on
Enter, for the run the operator asked about.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Static

import agentspool
from agentspool import AgentspoolError, RunSummary
from agentspool.cli.watch import Follower, _waits, ago, notify

COLUMNS = ("provider", "run", "state", "task", "for", "title", "cwd")
LAST_MESSAGES = 6


class WatchApp(App[None]):
    CSS = """
    #runs { height: 1fr; }
    #detail-box { height: 1fr; border-top: solid $accent; }
    #filter { dock: bottom; display: none; }
    #filter.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("j", "down", "down", show=False),
        Binding("k", "up", "up", show=False),
        Binding("slash", "filter", "filter"),
        Binding("escape", "clear_filter", "clear filter", show=False),
    ]

    def __init__(self, follower: Follower, *, bell: bool, on_wait: str) -> None:
        super().__init__()
        self.follower = follower
        self.bell_on_wait = bell
        self.on_wait_command = on_wait
        self.words: list[str] = []
        self.rows: list[str] = []
        self.selected = ""
        self.evidence_for = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="detail-box"):
            yield Static(id="detail")
        yield Input(id="filter", placeholder="filter: words matching provider or state")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self.title = "agentspool watch"
        self.tick()
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        try:
            moved = self.follower.tick()
        except AgentspoolError as exc:
            self.sub_title = str(exc)
            return
        if self.bell_on_wait and self.follower.ticks > 1 and any(c.starts_waiting for c in moved):
            self.bell()
        _waits(self.follower, moved, bell=self.bell_on_wait, on_wait=self.on_wait_command)
        self.redraw(changed=bool(self.follower.poll and self.follower.poll.changed))

    def shown(self) -> list[RunSummary]:
        runs = self.follower.listed()
        if not self.words:
            return runs
        return [
            r
            for r in runs
            if all(any(w in f for f in (r.provider, r.state, r.task_state)) for w in self.words)
        ]

    def redraw(self, *, changed: bool) -> None:
        table = self.query_one("#runs", DataTable)
        runs = self.shown()
        now = time.time()
        keys = [agentspool.run_key(r) for r in runs]
        if changed or keys != self.rows:
            table.clear()
            for key, run in zip(keys, runs, strict=True):
                table.add_row(*self.cells(run, now), key=key)
            self.rows = keys
            if self.selected in keys:
                table.move_cursor(row=keys.index(self.selected), animate=False)
        else:
            for key, run in zip(keys, runs, strict=True):
                table.update_cell(key, "for", self.since(run, now))
        filtered = f"  filter: {' '.join(self.words)}" if self.words else ""
        self.sub_title = f"{len(runs)} runs{filtered}"
        if not self.selected and keys:
            self.selected = keys[0]
        if changed or not self.selected:
            self.show_detail()

    @staticmethod
    def since(run: RunSummary, now: float) -> str:
        return ago(max(0.0, now - run.since)) if run.since else "-"

    def cells(self, run: RunSummary, now: float) -> tuple[str, ...]:
        task = run.task_state + (f" ({run.task_reason})" if run.task_reason else "")
        return (
            run.provider,
            run.run_id or f"session {run.session_id[:8]}",
            run.state,
            task,
            self.since(run, now),
            run.title[:60],
            run.cwd,
        )

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        key = message.row_key.value or ""
        if key and key != self.selected:
            self.selected = key
            self.evidence_for = ""
            self.show_detail()

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        key = message.row_key.value or ""
        self.selected = key
        self.evidence_for = "" if self.evidence_for == key else key
        self.show_detail()

    def action_down(self) -> None:
        self.query_one("#runs", DataTable).action_cursor_down()

    def action_up(self) -> None:
        self.query_one("#runs", DataTable).action_cursor_up()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("shown")
        self.words = []
        self.query_one("#runs", DataTable).focus()
        self.redraw(changed=True)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.words = message.value.lower().split()
        if not self.words:
            message.input.remove_class("shown")
        self.query_one("#runs", DataTable).focus()
        self.redraw(changed=True)

    def show_detail(self) -> None:
        pane = self.query_one("#detail", Static)
        poll = self.follower.poll
        run = poll.runs.get(self.selected) if poll is not None else None
        if run is None:
            pane.update("no run selected" if self.rows else "no live runs")
            return
        pane.update("\n".join(detail_lines(run, self.follower.runtime_dir, self.evidence_for)))


def detail_lines(run: RunSummary, runtime_dir: str | None, evidence_for: str) -> list[str]:
    name = run.run_id or f"session {run.session_id}"
    lines = [f"[b]{escape(run.provider)} {escape(name)}[/b]  {run.state}"]
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
    lines.append(
        f"usage: {usage.input_tokens} in, {usage.output_tokens} out, "
        f"{usage.cached_input_tokens} of them cached"
    )
    lines.append("[b]last messages[/b]")
    for message in chat.messages[-LAST_MESSAGES:]:
        text = " ".join(message.text.split())[:160]
        lines.append(f"  {message.role:<9} {escape(text)}")
    if evidence_for and evidence_for == agentspool.run_key(run) and run.run_id:
        found = agentspool.explain(run.provider, run.run_id, runtime_dir)
        lines.append(f"[b]evidence[/b]: {len(found.steps)} events folded; the last 20:")
        for step in found.steps[-20:]:
            kind = type(step.event).__struct_config__.tag
            effect = f"ignored: {step.ignored}" if step.ignored else f"-> {step.state}"
            lines.append(f"  {escape(step.event.source or '-'):<28} {kind!s:<26} {escape(effect)}")
    else:
        lines.append("[b]decided by[/b] (enter: every folded event)")
        for evidence in chat.evidence:
            lines.append(f"  {escape(evidence.source):<28} {escape(evidence.detail)}")
    return lines


__all__ = ["WatchApp", "notify"]
