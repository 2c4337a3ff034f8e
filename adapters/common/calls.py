"""A model's call of a tool as a conversation record.

Every transcript states a call its own way; the record says the same in every provider:
the call is the assistant's, with the call's arguments as its input when they are a JSON
object (anything else reads as no input). A parser that knows more of it (its time, the
response it was part of) sets that on the record it gets.
"""

from __future__ import annotations

from agentspool.core.seam import Message


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
        tool_input=arguments if isinstance(arguments, dict) else {},
        presentation=presentation,
    )
