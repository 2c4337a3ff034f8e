"""A model's call of a tool: as a conversation record, and as the wait on the operator it
opens.

Every transcript and hook states a call its own way; the record and the wait say the same
in every provider: the call's arguments are its input when they are a JSON object
(anything else reads as no input). A call of a provider's question tool is the question
form itself, its dialog read from those same arguments. A parser that knows more of a
record (its time, the response it was part of) sets that on the record it gets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentspool.core import events as ev
from agentspool.core.seam import Message, PendingDialog

FormReader = Callable[[str, dict[str, Any]], PendingDialog]
"""A question tool's arguments (and its call id) as the dialog the operator sees."""


def call_input(arguments: object) -> dict[str, Any]:
    """A call's arguments as its input: an object as it is, anything else none."""
    return arguments if isinstance(arguments, dict) else {}


def tool_call(
    message_id: str, call_id: str, name: str, arguments: object, presentation: str
) -> Message:
    """The record of a call of tool ``name`` (``call_id``: the call's own id, which its
    result names), presented as ``presentation`` (the provider's class of the tool)."""
    return Message(
        id=message_id,
        kind="tool_call",
        role="assistant",
        tool_name=name,
        tool_use_id=call_id,
        tool_input=call_input(arguments),
        presentation=presentation,
    )


def tool_wait(
    turn_id: str,
    call_id: str,
    name: str,
    arguments: object,
    *,
    form: FormReader | None = None,
    agent_id: str = "",
    **base: Any,
) -> ev.InputRequested:
    """The call of tool ``name`` waiting on the operator: its approval, or with ``form``
    (the provider's reading of its question tool) the question form the call is. ``""``
    for a turn or call id the source does not name; ``base``: ``at``, ``source``, ``epoch``."""
    tool_input = call_input(arguments)
    return ev.InputRequested(
        turn_id=turn_id,
        kind="approval" if form is None else "question",
        tool_use_id=call_id,
        tool_name=name,
        tool_input=tool_input,
        agent_id=agent_id,
        dialog=None if form is None else form(call_id, tool_input),
        **base,
    )
