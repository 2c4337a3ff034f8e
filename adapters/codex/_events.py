"""Codex ``event_msg`` records (the UI's events: a turn's start and end, errors, the
older releases' copies of prompts and answers, sub-agents spawned) and the usage
records (``token_count`` events, ``token_usage_record``; docs/providers/codex.md §10.3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import msgspec

from agentspool.adapters.codex._records import (
    EVENT_BOOKKEEPING,
    EventLine,
    EventMsg,
    SpawnAgent,
    UsageLine,
    arguments_of,
    error_text,
    presentation,
    usage_of,
)
from agentspool.adapters.codex._state import RolloutState
from agentspool.core import events as ev
from agentspool.core.seam import Message

EventReader = Callable[["EventRecords", EventLine, EventMsg], None]


class EventRecords(RolloutState):
    """The handlers of ``event_msg`` records, and of the usage they and
    ``token_usage_record`` carry."""

    def _event_msg(self, line: EventLine, msg: EventMsg) -> None:
        """An event whose kind has no handler remembered yet: the first of its kind."""
        kind = msg.type
        self._first("event_msg:" + kind)
        read: EventReader
        if kind in EVENT_BOOKKEEPING:
            read = EventRecords._ignored_event
        else:
            read = self.EVENT_READERS.get(kind, EventRecords._other_event)
        self._events_met[kind] = read
        read(self, line, msg)

    def _ignored_event(self, line: EventLine, msg: EventMsg) -> None:
        """An event known and not read (``_schema.IGNORED`` says why)."""

    def _other_event(self, line: EventLine, msg: EventMsg) -> None:
        self.unknown += 1
        self.drift.unknown_type("event_msg:" + msg.type)

    def _task_started(self, line: EventLine, msg: EventMsg) -> None:
        if msg.turn_id:
            self.turn = msg.turn_id
            self._turn_open, self._prompted = True, False
            self._started(line.timestamp, msg.turn_id, "transcript:task_started")

    def _task_complete(self, line: EventLine, msg: EventMsg) -> None:
        turn = msg.turn_id or self.turn
        error = error_text(msg.error)
        failed = error is not None
        if error is not None:
            self._note(line, f"error:{turn}", "error", "system", error, is_error=True)
        self._turn_closed()
        self.events.append(
            ev.TurnStopped(
                turn_id=turn,
                outcome="failed" if failed else "completed",
                at=self._at(line.timestamp),
                source="transcript:task_complete(error)" if failed else "transcript:task_complete",
                epoch=self.thread_id,
            )
        )

    def _turn_aborted(self, line: EventLine, msg: EventMsg) -> None:
        reason = f"({msg.reason})" if msg.reason else ""
        self._turn_closed()
        self._stopped(
            line.timestamp,
            msg.turn_id or self.turn,
            "interrupted",
            f"transcript:turn_aborted{reason}",
        )

    def _error(self, line: EventLine, msg: EventMsg) -> None:
        """The API error that ended a turn, as releases before 0.1xx report it (0.169
        puts it in ``task_complete.error``): an error record; an open turn ends failed."""
        text = msg.message if isinstance(msg.message, str) else error_text(msg.error)
        self._note(
            line, f"error:{self._fallback_id(line)}", "error", "system", text or "", is_error=True
        )
        if self._turn_open:
            self._turn_closed()
            self._stopped(line.timestamp, self.turn, "failed", "transcript:error")

    # The UI's copies of a prompt, an answer, the reasoning (before 0.169): a record
    # unless it is the echo of the response item before it.
    def _user_message(self, line: EventLine, msg: EventMsg) -> None:
        text = msg.message if isinstance(msg.message, str) else ""
        if not self._event_echo("user", text):  # else the prompt's response item came first
            self._prompt(self._note(line, self._fallback_id(line), "text", "user", text))

    def _agent_said(self, line: EventLine, msg: EventMsg) -> None:
        text = msg.message if isinstance(msg.message, str) else ""
        if not self._event_echo("assistant", text):
            self._note(line, self._fallback_id(line), "text", "assistant", text)

    def _agent_thought(self, line: EventLine, msg: EventMsg) -> None:
        text = msg.text if isinstance(msg.text, str) else ""
        if not self._event_echo("thinking", text):
            self._note(line, self._fallback_id(line), "thinking", "assistant", text)

    def _tool_call_event(self, line: EventLine, msg: EventMsg) -> None:
        """A call as a UI event only (a peer's fixture): the call record, joined to
        nothing (no output names it)."""
        rich = self._rich_event(line)
        arguments = arguments_of(rich.input)
        call_id = rich.call_id or self._fallback_id(line)
        self._call_record(
            line, f"call:{call_id}", call_id, rich.name, arguments, shown=presentation(rich.name)
        )

    def _review_done(self, line: EventLine, msg: EventMsg) -> None:
        """``/review``'s outcome (0.146): its explanation and findings, as the answer the
        reader sees."""
        output = self._rich_event(line).review_output
        review = output if isinstance(output, dict) else {}
        lines = [str(review.get("overall_explanation") or "")]
        for finding in review.get("findings") or ():
            if isinstance(finding, dict) and finding.get("title"):
                lines.append(f"- {finding['title']}")
        text = "\n".join(part for part in lines if part)
        self._note(line, f"review:{self._fallback_id(line)}", "text", "assistant", text)

    def _spawned(self, line: EventLine, msg: EventMsg) -> None:
        """``collab_agent_spawn_end`` (0.146-0.200): the sub-agent a ``spawn_agent`` call
        started, as 0.169's ``item_completed/CollabAgentToolCall`` names it."""
        rich = self._rich_event(line)
        if rich.new_thread_id:
            self._link(
                line, rich.call_id, rich.new_thread_id, rich.prompt or rich.new_agent_nickname or ""
            )

    def _item_completed(self, line: EventLine, msg: EventMsg) -> None:
        # Items duplicate the response_items (messages, command output); only the
        # sub-agent link is new here.
        item = msg.item
        if item is None or item.type != "CollabAgentToolCall" or item.tool != "spawn_agent":
            return
        try:
            spawn = msgspec.convert(item, SpawnAgent, from_attributes=True)
        except msgspec.ValidationError:
            self.corrupt += 1
            return
        nicknames = {a.thread_id: a.agent_nickname or "" for a in spawn.receiver_agents}
        for child in spawn.receiver_thread_ids:
            self._link(line, spawn.id, child, spawn.prompt or nicknames.get(child, ""))

    def _link(self, line: EventLine, call_id: str, child: str, text: str) -> None:
        if child in self.subagents:
            return
        self.subagents[child] = call_id
        self._note(
            line,
            f"subagent:{child}",
            "subagent",
            "system",
            text,
            tool_name="spawn_agent",
            tool_use_id=call_id,
            parent_id=call_id,
            agent_id=child,
            presentation="agent",
        )

    def _token_count(self, line: EventLine, msg: EventMsg) -> None:
        """Usage as releases before 0.1xx record it, and 0.169 repeats it: the thread's
        running total and the last response's usage (docs/providers/codex.md §10.3). A
        response counts once: a ``token_count`` right after a ``token_usage_record`` is
        its repeat; one whose running total did not move repeats the previous one (a
        compaction's or a resume's context estimate, or the same event twice). The last
        response's usage where the record gives it, else the running total's growth."""
        info = msg.info
        if info is None:
            return
        total, last = info.total_token_usage, info.last_token_usage
        key = previous = None
        if total is not None:
            key = (
                total.input_tokens,
                total.cached_input_tokens,
                total.output_tokens,
                total.reasoning_output_tokens,
            )
            previous = self._total
            self._total = key
        if self._recorded:
            self._recorded = False
            return
        if key is not None and key == previous:
            return
        if last is not None:
            usage = usage_of(last)
        elif total is not None:
            usage = usage_of(total)
            if previous is not None and all(
                n >= p for n, p in zip(key or (), previous, strict=True)
            ):
                usage.input_tokens -= previous[0]
                usage.cached_input_tokens -= previous[1]
                usage.output_tokens -= previous[2]
                usage.reasoning_tokens -= previous[3]
        else:
            return
        if not (usage.input_tokens or usage.output_tokens):
            return
        self.usage.add(usage)
        # Its own record (hidden), where the response's items are is not known: before
        # 0.1xx the usage comes before them, from 0.1xx after. The running total is the
        # response's id: a fork copies its parent's token_count events, running totals
        # and all, under new times (core/usage.py counts such a copy once).
        self._append(
            Message(
                id=f"usage:{self._fallback_id(line)}",
                kind="text",
                role="system",
                timestamp=line.timestamp,
                visibility="hidden",
                is_meta=True,
                usage=usage,
                message_id="" if key is None else f"total:{key[0]}/{key[1]}/{key[2]}/{key[3]}",
                model=info.model or self.model,
            )
        )

    def _token_usage(self, line: UsageLine) -> None:
        if "token_usage_record" not in self.drift.checked:
            self._first("token_usage_record")
        self._recorded = True
        record = line.payload
        u = record.usage
        if u is None:
            return
        key = record.response_id or (f"o{line.ordinal}" if line.ordinal >= 0 else "")
        if key:
            if key in self._usage_seen:
                return
            self._usage_seen.add(key)
        # Codex's input_tokens already includes the cached part (the API's
        # input_tokens, with input_tokens_details.cached_tokens beside it): nothing
        # to fold, the cached count is recorded as the part of it that hit the cache.
        usage = usage_of(u)
        self.usage.add(usage)
        # The usage record follows its response's items, so it is attached to the first
        # of them once it arrives (a re-read shows it; seq and ids never move). A
        # response that left no item keeps its usage in Chat.usage only.
        if self._unpriced:
            priced = self._unpriced[0]
            if priced.usage is None:
                # A copy in its place: the message may already be in a caller's Chat,
                # and what a read handed out never changes afterwards.
                priced = msgspec.structs.replace(
                    priced, usage=usage, message_id=key, model=self.model
                )
                self._replace(priced)
            self._unpriced.clear()

    EVENT_READERS: ClassVar[dict[str, EventReader]] = {
        "task_started": _task_started,
        "task_complete": _task_complete,
        "turn_aborted": _turn_aborted,
        "item_completed": _item_completed,
        "token_count": _token_count,
        "error": _error,
        "user_message": _user_message,
        "agent_message": _agent_said,
        "agent_reasoning": _agent_thought,
        "agent_reasoning_raw_content": _agent_thought,
        "tool_call": _tool_call_event,
        "exited_review_mode": _review_done,
        "collab_agent_spawn_end": _spawned,
    }
