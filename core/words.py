"""What a person reads for a run's state: the one place the human phrase is made.

The wire word (``Chat.state``) stays as published — ``needs_input`` covers both "the
turn ended" and "a permission prompt is open" — and every view a person reads (``ls``,
``watch``, ``show``, ``explain``, ``replay``, the demo, a web page) says instead what the
person must do, from the same evidence: ``state_phrase``. ``task_phrase`` does the same
for the task-state axis, which reads "never declared" until a declaration says more
(docs/adr/0039-human-words.md).
"""

from __future__ import annotations

from typing import Any, Protocol

from agentspool.core.seam import ChatState, PendingApproval, PendingDialog

__all__ = ["state_phrase", "task_phrase"]

_WHAT = ("command", "cmd", "file_path", "path", "filePath", "url", "pattern", "query", "prompt")
"""Input fields that say in a few words what a tool call would do, most telling first."""


class Stated(Protocol):
    """What the phrase is made from: a ``Chat``, a ``RunSummary``, or anything alike."""

    @property
    def state(self) -> ChatState: ...

    @property
    def activity(self) -> str: ...

    @property
    def pending_approval(self) -> PendingApproval | None: ...

    @property
    def pending_dialog(self) -> PendingDialog | None: ...


def _line(text: str) -> str:
    """On one line (a command's newlines and tabs collapsed). Other control characters
    are left for the one renderer that prints them to show escaped (``cli/_terminal``):
    the phrase is data, not output (JSON and the web page escape it their own way)."""
    return " ".join(text.split())


def _what(tool_input: dict[str, Any]) -> str:
    for key in _WHAT:
        value = tool_input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return _line(value)
    texts = [v for v in tool_input.values() if isinstance(v, str) and v.strip()]
    return _line(texts[0]) if len(texts) == 1 else ""


def _waits_on(run: Stated) -> str:
    """What the person must do now, ``""`` when nothing waits on them."""
    approval, dialog = run.pending_approval, run.pending_dialog
    if approval is not None:
        what = _what(approval.tool_input)
        tool = _line(approval.tool_name) or "a tool call"
        return f"approve {tool}: {what}" if what else f"approve {tool}"
    if dialog is not None:
        if dialog.kind == "plan_approval":
            return "approve the plan"
        prompt = _line(dialog.prompt)
        return f"answer: {prompt}" if prompt else "answer a question"
    if run.state == "question":
        return "answer a question"
    if run.state == "needs_input" and run.activity == "needs_input":
        return "approve a tool call"  # a prompt is open, and no evidence says which call
    return ""


def state_phrase(run: Stated, *, history: bool = False) -> str:
    """The run's state as a person reads it: what they must do, or what the run does.

    Live (the default): ``approve <Tool>: <what it would do>``, ``approve the plan``,
    ``answer: <question>``, ``your turn`` (the turn ended, or no turn started yet),
    ``working``, ``ended``, or ``unknown`` (no evidence at all).

    ``history=True`` is for a session whose process is not known to run (``show`` of a
    stored session): never a live word — ``ended``, ``last turn ended``, ``stopped at:
    <what waited>``, ``last turn has no recorded end``, or ``no turn recorded``.
    """
    if run.state == "ended":
        return "ended"
    waits = _waits_on(run)
    if history:
        if waits:
            return f"stopped at: {waits}"
        if run.state == "working":
            return "last turn has no recorded end"
        if run.state == "needs_input":
            return "last turn ended"
        return "no turn recorded"
    if waits:
        return waits
    if run.state == "working":
        return "working"
    if run.state == "needs_input":
        return "your turn"
    return "unknown" if run.activity == "unknown" else "your turn"


def task_phrase(task_state: str, task_reason: str = "", *, declared: bool = True) -> str:
    """The task-state axis in words: ``never declared`` until a declaration, then
    ``active``, ``blocked: <reason>`` or ``done``."""
    if not declared:
        return "never declared"
    reason = _line(task_reason)
    return f"{task_state}: {reason}" if reason else task_state
