"""``agentspool show``: one session as a person reads it (docs/adr/0027-show.md).

Imported only by that command, so only it pays for rich. What is drawn comes from the
``SessionView`` alone — the assembled detail and the whole record stream — never from a
provider's name: a tool call's input is summarized by its presentation class.

Layout: a header (provider, session, the title the CLI keeps for it, transcript — marked
when the file is gone and the records come from the history store —, cwd, models, first
and last record time, state, counts, usage), then the session's own records turn by
turn — a turn opens at each prompt the user typed and ends with its usage — one
labelled entry per record.
A tool call is followed by its result and by the subagents it spawned, their records
indented under it. Results, thinking and summaries are cut to ``lines`` lines, with the
count of the lines not shown. Usage per turn and per subagent counts every record of it
whatever its visibility (what was paid for; the header total is their sum), so showing
superseded records adds their entries and changes nothing else.

Each entry is printed as soon as it is drawn: memory follows the entry, not the session.
On a terminal entries wrap under their label; elsewhere (a pipe, a file) lines are not
wrapped and carry no colour.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
from rich.console import Console
from rich.text import Text

import agentspool
from agentspool import Usage
from agentspool.cli._terminal import safe
from agentspool.cli.render import rich_console

if TYPE_CHECKING:
    from agentspool import Message, SessionView, SubagentGroup

PLAN_STEPS = 6
"""Steps shown of a plan or a todo list in a call's input."""
LINE_CHARS = 400
"""A shown line of a result, thinking or summary is cut after this many characters."""
LABEL = 11
RULE_WIDTH = 80

STYLES = {
    "user": "bold",
    "assistant": "",
    "thinking": "dim italic",
    "tool": "bold cyan",
    "result": "dim",
    "error": "bold red",
    "interrupted": "bold red",
    "system": "dim",
    "summary": "yellow",
    "compacted": "bold yellow",
    "subagent": "bold magenta",
    "usage": "dim",
}


class Renderer:
    """Draws one ``SessionView`` on ``console``, an entry at a time."""

    def __init__(self, console: Console, view: SessionView, *, lines: int):
        self.console = console
        self.view = view
        self.lines = lines
        self.terminal = console.is_terminal
        """Drawn with styles and wrapped; otherwise written as plain lines, unwrapped
        (and without rich's per-line cost: a long session is tens of thousands)."""
        self.width = console.width
        ascii_only = console.options.ascii_only
        self.bar, self.line = ("| ", "-") if ascii_only else ("│ ", "─")
        detail = view.detail
        self.invocations = {id(t.call): t for t in detail.tools}
        self.joined = {id(t.result) for t in detail.tools if t.result is not None}
        called = {t.tool_use_id for t in detail.tools if t.tool_use_id}
        self.spawned: dict[str, list[SubagentGroup]] = {}
        for group in detail.subagents:
            if group.spawned_by in called:
                self.spawned.setdefault(group.spawned_by, []).append(group)
        self.drawn: set[str] = set()
        """Subagents drawn already: each once, under its call, else after the turns."""
        records: dict[str, list[Message]] = {}
        for message in view.chat.messages:
            if message.agent_id:
                records.setdefault(message.agent_id, []).append(message)
        self.agent_usage = {agent: _usage(mine) for agent, mine in records.items()}
        """Per subagent, the usage of every record of it (whatever its visibility)."""

    # -- the whole --------------------------------------------------------------------
    def render(self) -> None:
        self.header()
        turns, before = _turns(self.view)
        own = [m for m in self.view.detail.conversation if not m.agent_id]
        starts = {prompt.seq: n for n, (prompt, _) in enumerate(turns, 1)}
        for message in own:
            n = starts.get(message.seq)
            if n is not None:
                self.usage_entry(0, turns[n - 2][1] if n > 1 else before)
                self.rule(f"turn {n}" + _at(message.timestamp, " · "))
            elif message is own[0]:
                self.rule("before the first prompt")
            self.record(0, message)
        self.usage_entry(0, turns[-1][1] if turns else before)
        for group in self.view.detail.subagents:
            if group.agent_id not in self.drawn:  # its spawning call is not drawn
                self.rule(f"subagent {group.agent_id}, not under a call the records show")
                self.subagent(0, group)

    def header(self) -> None:
        view, detail = self.view, self.view.detail
        chat = view.chat
        title = Text.assemble(
            (safe(view.provider), "bold"), " session ", (safe(view.session.session_id), "bold")
        )
        self.console.print(title, soft_wrap=True)
        models = list(dict.fromkeys(m.model for m in chat.messages if m.model))
        stamps = sorted(m.timestamp for m in chat.messages if m.timestamp)
        kinds = ", ".join(f"{n} {kind}" for kind, n in detail.counts.items())
        records = f"{sum(detail.counts.values())} shown ({kinds or 'none'})"
        hidden = sum(m.visibility == "hidden" for m in chat.messages)
        if hidden:
            records += f"; {hidden} hidden (never shown)"
        if detail.withheld > hidden:
            records += f"; {detail.withheld - hidden} superseded (--include-inactive shows them)"
        rows = [("title", chat.title)] if chat.title else []
        rows += [
            (
                "transcript",
                view.session.transcript_path
                + (" (gone: read from the history store)" if view.gone else ""),
            ),
            ("cwd", chat.cwd or "(not named)"),
            ("model", ", ".join(models) or "(not named)"),
            ("time", _span(stamps[0], stamps[-1]) if stamps else "(no timestamps)"),
            # history: a session whose process is not known to run gets no live word
            ("state", agentspool.state_phrase(chat, history=chat.process != "alive")),
            ("records", records),
            ("subagents", str(len(detail.subagents))),
            ("usage", _usage_text(detail.usage)),
        ]
        for label, value in rows:
            self.entry(0, label, Text(safe(value)), "dim")

    # -- one record -------------------------------------------------------------------
    def record(self, depth: int, message: Message) -> None:
        if id(message) in self.joined:
            return  # drawn under its call
        kind, role = message.kind, message.role
        if kind == "tool_call":
            self.tool(depth, message)
        elif kind == "tool_result":
            self.result(depth, message, label="result", note="(answers no call in the records)")
        elif kind == "thinking":
            self.entry(depth, "thinking", self.cut(message.text), STYLES["thinking"], message)
        elif kind == "summary":
            self.entry(depth, "summary", self.cut(message.text), STYLES["summary"], message)
        elif kind == "compaction":
            text = message.text or "the conversation was compacted"
            self.entry(depth, "compacted", Text(safe(text)), STYLES["compacted"], message)
        elif kind == "interrupt":
            self.entry(
                depth, "interrupted", Text(safe(message.text)), STYLES["interrupted"], message
            )
        elif kind == "error":
            self.entry(depth, "error", Text(safe(message.text)), STYLES["error"], message)
        elif kind == "subagent":
            self.entry(depth, "subagent", self.cut(message.text), STYLES["system"], message)
        elif role in ("user", "assistant"):
            self.entry(depth, role, Text(safe(message.text)), STYLES[role], message)
        else:
            self.entry(depth, role, Text(safe(message.text)), STYLES["system"], message)

    def tool(self, depth: int, call: Message) -> None:
        headline, more = tool_summary(call.presentation, call.tool_input or {})
        content = Text.assemble((safe(call.tool_name) or "(unnamed tool)", "bold"))
        if headline:
            content.append("  " + safe(headline))
        for line in more:
            content.append("\n" + safe(line), style="dim")
        self.entry(depth, "tool", content, STYLES["tool"], call)
        invocation = self.invocations.get(id(call))
        if invocation is not None and invocation.result is not None:
            self.result(
                depth, invocation.result, label="error" if invocation.is_error else "result"
            )
        else:
            self.entry(depth, "result", Text("(none in the records: running, or abandoned)"), "dim")
        for group in self.spawned.get(call.tool_use_id, []) if call.tool_use_id else []:
            if group.agent_id not in self.drawn:
                self.subagent(depth + 1, group)

    def result(self, depth: int, result: Message, *, label: str, note: str = "") -> None:
        text = self.cut(result.text or "(empty)")
        if note:
            text.append("\n" + note, style="dim")
        style = STYLES["error"] if result.is_error or label == "error" else STYLES["result"]
        self.entry(depth, "error" if result.is_error else label, text, style, result)

    def subagent(self, depth: int, group: SubagentGroup) -> None:
        self.drawn.add(group.agent_id)
        link = next(
            (m for m in group.messages if m.kind == "subagent" and m.parent_id == group.spawned_by),
            None,
        )
        about = link.text.split("\n", 1)[0] if link is not None and link.text else ""
        title = Text.assemble((safe(group.agent_id), "bold"), safe(f"  {about}" if about else ""))
        self.entry(depth, "subagent", title, STYLES["subagent"])
        for message in group.messages:
            if message is not link:
                self.record(depth, message)
        self.usage_entry(depth, self.agent_usage.get(group.agent_id, Usage()))

    def usage_entry(self, depth: int, usage: Usage) -> None:
        if usage != Usage():  # a turn nothing was paid for (a local command) says nothing
            self.entry(depth, "usage", Text(_usage_text(usage)), STYLES["usage"])

    # -- drawing ----------------------------------------------------------------------
    def cut(self, text: str) -> Text:
        """The first ``lines`` lines (0: all), each cut at ``LINE_CHARS``, and how many
        lines are not shown."""
        shown = text.split("\n", self.lines) if self.lines > 0 else text.split("\n")
        hidden = shown.pop().count("\n") + 1 if len(shown) > self.lines > 0 else 0
        out = Text(safe("\n".join(_clip(line) for line in shown)))
        if hidden:
            out.append(f"\n… {hidden} more line{'s' * (hidden != 1)}", style="dim italic")
        return out

    def rule(self, title: str) -> None:
        if self.terminal:
            self.console.rule(Text(safe(title)), style="dim", align="left")
        else:
            line = safe(title) + " "
            self.plain(line + self.line * max(3, RULE_WIDTH - len(line)))

    def entry(
        self, depth: int, label: str, content: Text, style: str, message: Message | None = None
    ) -> None:
        """``label`` in its column, ``content`` beside it (wrapped under it on a
        terminal), every line behind ``depth`` bars; printed at once."""
        gutter = self.bar * depth
        if message is not None and message.visibility == "inactive":
            content = content.copy()
            content.stylize("strike dim")
            content.append("  [superseded]", style="bold")
        blank = " " * (LABEL + 1)
        if not self.terminal:
            lines = content.plain.split("\n")
            self.plain(
                "\n".join(
                    gutter + (f"{label:<{LABEL}} " if i == 0 else blank) + line
                    for i, line in enumerate(lines)
                )
            )
            return
        width = max(20, self.width - len(gutter) - LABEL - 1)
        out = Text()
        for i, line in enumerate(content.wrap(self.console, width)):
            if i:
                out.append("\n")
            out.append(gutter, style="dim")
            out.append(f"{label:<{LABEL}} " if i == 0 else blank, style=style if i == 0 else "")
            out.append_text(line)
        self.console.print(out, soft_wrap=True)

    def plain(self, text: str) -> None:
        self.console.file.write(text + "\n")


# -- tool inputs, by presentation class -------------------------------------------------
_SHELL = ("command", "cmd")
_PATH = ("file_path", "path", "notebook_path", "filePath")
_PATTERN = ("pattern", "query", "regex")
_WEB = ("url", "query")
_AGENT = ("description", "message", "prompt", "task")


def tool_summary(presentation: str, tool_input: dict[str, Any]) -> tuple[str, list[str]]:
    """A call's input as one headline and a few more lines, by presentation class: the
    shell command, the file an edit or read touches, the search pattern (and where), the
    URL, the subagent's task, the question with its options, the plan; anything else (an
    ``mcp`` or ``other`` tool) as its input in one line of JSON."""
    if presentation == "shell":
        command = _first(tool_input, _SHELL)
        if isinstance(command, list):
            command = shlex.join(str(part) for part in command)
        if isinstance(command, str):
            return "$ " + command, []
    elif presentation in ("edit", "read"):
        path = _first(tool_input, _PATH)
        if isinstance(path, str):
            return path, []
        texts = [v for v in tool_input.values() if isinstance(v, str)]
        if len(texts) == 1:  # a patch as the whole input: its first lines name the files
            lines = texts[0].strip().split("\n")
            return _clip(lines[0]), [_clip(line) for line in lines[1:4]]
    elif presentation == "search":
        pattern = _first(tool_input, _PATTERN)
        if isinstance(pattern, str):
            where = _first(tool_input, _PATH)
            return pattern + (f"  in {where}" if isinstance(where, str) else ""), []
    elif presentation == "web":
        target = _first(tool_input, _WEB)
        if isinstance(target, str):
            return target, []
    elif presentation == "agent":
        about = [v for v in (tool_input.get(k) for k in _AGENT) if isinstance(v, str) and v]
        if about:
            return _clip(about[0].split("\n", 1)[0]), [
                _clip(v.split("\n", 1)[0]) for v in about[1:2]
            ]
    elif presentation == "question":
        questions = tool_input.get("questions")
        if isinstance(questions, list) and questions:
            return "", [_question(q) for q in questions if isinstance(q, dict)]
    elif presentation in ("plan", "todo"):
        return "", _plan(tool_input)
    return _clip(msgspec.json.encode(tool_input).decode()) if tool_input else "", []


def _first(tool_input: dict[str, Any], keys: Iterable[str]) -> Any:
    return next((tool_input[k] for k in keys if tool_input.get(k) not in (None, "")), None)


def _question(question: dict[str, Any]) -> str:
    text = str(question.get("question") or question.get("prompt") or "")
    options = question.get("options")
    labels = (
        [str(o.get("label", "")) for o in options if isinstance(o, dict)]
        if isinstance(options, list)
        else []
    )
    return _clip(text + (f"  [{' / '.join(labels)}]" if labels else ""))


def _plan(tool_input: dict[str, Any]) -> list[str]:
    plan = tool_input.get("plan", tool_input.get("todos"))
    if isinstance(plan, str):
        return [_clip(line) for line in plan.strip().split("\n")[:PLAN_STEPS]]
    if isinstance(plan, list):
        steps = []
        for step in plan[:PLAN_STEPS]:
            if isinstance(step, dict):
                what = step.get("step") or step.get("content") or ""
                status = step.get("status")
                steps.append(_clip(f"{what}" + (f"  ({status})" if status else "")))
        return steps
    return [_clip(msgspec.json.encode(tool_input).decode())] if tool_input else []


# C0 controls but newline and tab, DEL, and C1 controls: an escape sequence in a
# transcript (a command's coloured output) must reach the terminal as text, never as a
# command to it.
def _clip(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


# -- turns and usage --------------------------------------------------------------------
def _is_prompt(message: Message) -> bool:
    return (
        message.kind == "text"
        and message.role == "user"
        and message.visibility == "visible"
        and not message.is_meta
        and not message.agent_id
    )


def _turns(view: SessionView) -> tuple[list[tuple[Message, Usage]], Usage]:
    """Each turn's prompt and the usage of the session's own records in it (every record,
    whatever its visibility), and the usage before the first prompt."""
    own = [m for m in view.chat.messages if not m.agent_id]
    bounds = [i for i, m in enumerate(own) if _is_prompt(m)]
    before = _usage(own[: bounds[0]] if bounds else own)
    turns = [
        (own[start], _usage(own[start:end]))
        for start, end in zip(bounds, [*bounds[1:], len(own)][: len(bounds)], strict=True)
    ]
    return turns, before


def _usage(records: Iterable[Message]) -> Usage:
    """The records' usage, an API message's once (the first record carrying it)."""
    total, counted = Usage(), set[object]()
    for message in records:
        if message.usage is not None and (message.message_id or id(message)) not in counted:
            counted.add(message.message_id or id(message))
            total.add(message.usage)
    return total


def plain_input(usage: Usage) -> int:
    """Input neither read from nor written to the cache: what ``usage`` calls input
    (``Usage.input_tokens`` folds both in), so one session shows one figure everywhere."""
    return usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens


def _usage_text(usage: Usage) -> str:
    text = (
        f"input {plain_input(usage):,} · output {usage.output_tokens:,} · "
        f"cache read {usage.cached_input_tokens:,} · cache write {usage.cache_write_tokens:,}"
    )
    return text + (f" · reasoning {usage.reasoning_tokens:,}" if usage.reasoning_tokens else "")


# -- time ---------------------------------------------------------------------------------
def _local(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp).astimezone()
    except ValueError:
        return None


def _at(stamp: str, lead: str = "") -> str:
    when = _local(stamp) if stamp else None
    return f"{lead}{when:%H:%M:%S}" if when is not None else ""


def _span(first: str, last: str) -> str:
    start, end = _local(first), _local(last)
    if start is None or end is None:
        return f"{first} → {last}"
    seconds = int((end - start).total_seconds())
    took = (
        f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
        if seconds >= 3600
        else (f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s")
    )
    return f"{start:%Y-%m-%d %H:%M:%S} → {end:%H:%M:%S %Z} ({took})"


def print_view(view: SessionView, *, lines: int, pager: bool) -> None:
    """Draw ``view`` on stdout; with ``pager`` on a terminal, through ``$PAGER`` (default
    ``less -R``), fed as it is drawn: the pager holds the text, this process does not."""
    console = rich_console(highlight=False, emoji=False, markup=False)
    if not (pager and console.is_terminal):
        Renderer(console, view, lines=lines).render()
        return
    import os
    import shutil
    import subprocess

    command = shlex.split(os.environ.get("PAGER") or "less -R")
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, encoding="utf-8", errors="replace")
    assert proc.stdin is not None  # stdin=PIPE
    paged = rich_console(
        file=proc.stdin,
        force_terminal=True,
        width=shutil.get_terminal_size().columns,
        highlight=False,
        emoji=False,
        markup=False,
    )
    try:
        Renderer(paged, view, lines=lines).render()
    except BrokenPipeError:
        pass  # the reader left the pager before the end: done
    finally:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        proc.wait()
