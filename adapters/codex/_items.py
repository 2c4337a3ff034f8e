"""Codex ``response_item`` records (the model's input and output as the Responses API
has them): messages, reasoning, tool calls and their outputs, and the shapes peers'
fixtures write (docs/providers/codex.md §6.2).

One handler per item kind, ``(parser, line, item)``, named in ``ITEM_READERS``; the
parser's dispatch finds it by the item's ``type`` (``_rollout.RolloutParser``). The
first item of each kind goes through ``_response_item``, which checks its shape's
fields and remembers the kind's handler, so every later one is one lookup away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from agentspool.adapters.codex._records import (
    CALLS,
    ITEMS_IGNORED,
    OUTPUTS,
    QUESTION_TOOL,
    Line,
    ResponseItem,
    ResponseItemLine,
    arguments_of,
    as_dict,
    dialog_for,
    injected,
    output_text,
    part_texts,
    presentation,
    text_of,
    tool_names,
)
from agentspool.adapters.codex._state import RolloutState
from agentspool.adapters.common.calls import tool_wait
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind

ItemReader = Callable[["ItemRecords", ResponseItemLine, ResponseItem], None]


class ItemRecords(RolloutState):
    """The handlers of ``response_item`` records."""

    def _response_item(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """An item whose kind has no handler remembered yet (the first of its kind), or
        no ``type`` at all: a Responses API input message may leave it out."""
        kind = item.type or ("message" if item.role else "")
        read = self._items_met.get(kind)
        if read is None:
            self._first("response_item:" + kind)
            read = self.ITEM_READERS.get(kind, ItemRecords._other_item)
            if kind:
                self._items_met[kind] = read
        read(self, line, item)

    def _turn_of(self, item: ResponseItem) -> str:
        passthrough = item.internal_chat_message_metadata_passthrough
        return (passthrough.turn_id if passthrough else "") or self.turn

    def _other_item(self, line: ResponseItemLine, item: ResponseItem) -> None:
        kind = item.type
        if kind not in ITEMS_IGNORED:
            self.unknown += 1
            self.drift.unknown_type("response_item:" + kind)

    def _message(self, line: ResponseItemLine, item: ResponseItem) -> None:
        text = text_of(item.content)
        passthrough = item.internal_chat_message_metadata_passthrough
        kinds = passthrough.content_item_kinds if passthrough else ()
        role: Literal["user", "assistant", "system"]
        kind: MessageKind = "text"
        hidden = False
        if item.role == "user":
            role = "user"
            stripped = text.lstrip()
            if "generic.turn_aborted" in kinds or stripped.startswith("<turn_aborted>"):
                kind = "interrupt"
            elif "multi_agent.subagent_notification" in kinds or stripped.startswith(
                "<subagent_notification>"
            ):
                kind = "subagent"
            elif not ("user.text" in kinds or (not kinds and not injected(stripped))):
                hidden = True  # context Codex injects for the model (environment, rules)
            is_meta = hidden or kind != "text"
            # 0.169 marks its items (content_item_kinds) and writes no UI-event copies.
            if not (is_meta or kinds) and self._item_echo("user", text):
                return
        elif item.role == "assistant":
            call = self._rich_item(line).function_call if item.content is None else None
            if isinstance(call, dict):
                # A peer's fixture: a chat-completions call carried by the message.
                self._done_call(
                    line, item, str(call.get("name") or "tool"), arguments_of(call.get("arguments"))
                )
                return
            role = "assistant"
            # The summary the model wrote when compacting; the ``compacted`` record
            # that follows carries it to the reader as the summary message.
            hidden = line.metadata is not None and line.metadata.compaction_output
            kind = "summary" if hidden else "text"
            is_meta = hidden
            if not (hidden or kinds) and self._item_echo("assistant", text):
                return
        elif item.role in ("function", "tool"):
            # A peer's fixture: a chat-completions tool result, by the tool's name.
            self._done_result(line, item.name, text)
            return
        else:  # developer / system instructions
            role = "system"
            hidden = is_meta = True
        message = Message(
            id=item.id or self._fallback_id(line),
            kind=kind,
            role=role,
            text=text,
            timestamp=line.timestamp,
            visibility="hidden" if hidden else "visible",
            is_meta=is_meta,
        )
        self._append(message)
        if role == "user" and not is_meta:
            self._prompt(message)

    def _reasoning(self, line: ResponseItemLine, item: ResponseItem) -> None:
        pending = self._copies.get("thinking")
        if pending:
            # Its reasoning events came first (0.34-0.108): one per summary part.
            parts = part_texts(item.summary) + part_texts(item.content)
            if all(t in pending for t in parts):
                for text in parts:
                    pending.remove(text)
                return
        text = text_of(item.summary) or text_of(item.content)
        self._recent["thinking"] = text
        self._append(
            Message(
                id=item.id or self._fallback_id(line),
                kind="thinking",
                role="assistant",
                text=text,
                timestamp=line.timestamp,
                # Only encrypted (no summary, as 0.34 writes most): nothing to show.
                visibility="visible" if text else "hidden",
            )
        )

    def _call_item(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """``function_call``, ``custom_tool_call``, ``local_shell_call``."""
        self._call(line, item, self._turn_of(item), item.name or item.type)

    def _tool_search_call(self, line: ResponseItemLine, item: ResponseItem) -> None:
        # Codex looking up tools it may call (0.146, run locally: its output follows).
        self._call(line, item, self._turn_of(item), "tool_search")

    def _call(self, line: ResponseItemLine, item: ResponseItem, turn: str, name: str) -> None:
        call_id = item.call_id or item.id or self._fallback_id(line)
        arguments = arguments_of(item.arguments if item.arguments is not None else item.input)
        self.open_calls[call_id] = (name, arguments, turn)
        self._call_record(
            line,
            item.id or "call:" + call_id,
            call_id,
            name,
            arguments,
            shown=presentation(name, item.namespace or ""),
        )
        at = self._at(line.timestamp)
        source = "transcript:" + item.type
        self.events.append(
            ev.ToolStarted(
                turn_id=turn,
                tool_use_id=call_id,
                tool_name=name,
                at=at,
                source=source,
                epoch=self.thread_id,
            )
        )
        if name == QUESTION_TOOL:
            # The call's execution *is* the question form: while it has no output the
            # form is on screen (docs/providers/codex.md §5.4). Refused at once in Default
            # mode, where its output follows within milliseconds and resolves it.
            self.events.append(
                tool_wait(
                    turn,
                    call_id,
                    name,
                    arguments,
                    form=dialog_for,
                    at=at,
                    source=source,
                    epoch=self.thread_id,
                )
            )

    def _output_item(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """``function_call_output``, ``custom_tool_call_output``."""
        self._output(line, item, self._turn_of(item), output_text(item.output))

    def _tool_search_output(self, line: ResponseItemLine, item: ResponseItem) -> None:
        self._output(line, item, self._turn_of(item), tool_names(self._rich_item(line).tools))

    def _output(self, line: ResponseItemLine, item: ResponseItem, turn: str, text: str) -> None:
        call_id = item.call_id
        opened = self.open_calls.pop(call_id, None)
        if opened is not None:
            turn = opened[2] or turn
        stamp = line.timestamp
        self._append(
            Message(
                id=item.id or "output:" + call_id,
                kind="tool_result",
                role="tool",
                text=text,
                timestamp=stamp,
                tool_name=self._names.get(call_id, ""),
                tool_use_id=call_id,
            )
        )
        self.events.append(
            ev.ToolFinished(
                turn_id=turn,
                tool_use_id=call_id,
                at=self._at(stamp),
                source="transcript:" + item.type,
                epoch=self.thread_id,
            )
        )

    def _web_search_call(self, line: ResponseItemLine, item: ResponseItem) -> None:
        # The model's own search (run by the API, not here): done when recorded.
        self._done_call(line, item, "web_search", as_dict(self._rich_item(line).action))

    def _image_generation_call(self, line: ResponseItemLine, item: ResponseItem) -> None:
        revised = self._rich_item(line).revised_prompt
        self._done_call(line, item, "image_generation", {"prompt": revised} if revised else {})

    def _agent_message(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """A message one agent sent another (multi-agent, 0.146: ``author`` →
        ``recipient``): the conversation between agents, not an answer to the user."""
        recipient = self._rich_item(line).recipient or ""
        text = text_of(item.content)
        uid = item.id or self._fallback_id(line)
        self._note(line, uid, "subagent", "system", text, tool_name=recipient, presentation="agent")

    def _peer_tool_call(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """A peer's fixture: ``{function: {name}, arguments}``."""
        rich = self._rich_item(line)
        name = rich.function.get("name", "") if isinstance(rich.function, dict) else ""
        self._done_call(line, item, str(name or "tool"), arguments_of(item.arguments))

    def _peer_tool_result(self, line: ResponseItemLine, item: ResponseItem) -> None:
        """A peer's fixture: ``{name, result}``."""
        self._done_result(line, item.name, output_text(self._rich_item(line).result))

    def _done_call(
        self, line: Line, item: ResponseItem | None, name: str, arguments: dict[str, Any]
    ) -> None:
        """A call recorded once it was over, or one no output will answer here (a search
        the API ran, a peer's shape): the record alone — nothing runs, nothing to wait
        on."""
        call_id = (item.call_id or item.id or "") if item is not None else ""
        call_id = call_id or self._fallback_id(line)
        uid = (item.id if item is not None else None) or f"call:{call_id}"
        self._call_record(line, uid, call_id, name, arguments, shown=presentation(name))

    def _done_result(self, line: Line, name: str, text: str) -> None:
        """A result that names its tool, not its call: kept as the record it is, joined
        to no call (none is guessed)."""
        self._note(
            line, f"output:{self._fallback_id(line)}", "tool_result", "tool", text, tool_name=name
        )

    ITEM_READERS: ClassVar[dict[str, ItemReader]] = {
        "message": _message,
        "reasoning": _reasoning,
        **dict.fromkeys(CALLS, _call_item),
        **dict.fromkeys(OUTPUTS, _output_item),
        "tool_search_call": _tool_search_call,
        "tool_search_output": _tool_search_output,
        "web_search_call": _web_search_call,
        "image_generation_call": _image_generation_call,
        "agent_message": _agent_message,
        "tool_call": _peer_tool_call,
        "tool_result": _peer_tool_result,
    }
