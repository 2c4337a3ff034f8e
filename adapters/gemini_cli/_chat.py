"""Gemini CLI chat file (``<home>/.gemini/tmp/<project>/chats/session-*.jsonl``) →
canonical messages and canonical events, incrementally.

Grammar: docs/providers/gemini-cli.md §4 (the older releases' file, one JSON document
of the same records, is ``_document``'s, folded by these record rules). The file is not
a list of messages but the log of a message map the CLI keeps, folded line by line:

* the first line is the session's metadata (``sessionId``, ``kind``, …);
* a message record (``id``, ``type``: user | gemini | info | error | warning) sets that
  id in the map: a new id is appended, a known one replaced in place (the CLI re-appends
  a ``gemini`` record whole once its tool calls completed, ``toolCalls`` added);
* ``{"$rewindTo": id}`` deletes that message and every later one (an unknown id: all);
* ``{"$set": {...}}`` merges metadata; its ``messages`` member is a checkpoint that
  replaces the whole map (the opening context, a history re-sync after a cancel,
  ``/rewind``, ``/compress``).

Every record id becomes canonical messages once, in the order it first appears, so
``seq`` never moves; what the CLI itself dropped from its map (``$rewindTo``, a
checkpoint without it) is ``inactive``, and ``visible`` again if a checkpoint brings it
back. The injected ``<session_context>`` and empty ``info`` records are ``hidden``. A
message first seen inside a later checkpoint is what ``/compress`` wrote: the summary
(``kind="summary"``) and the model's acknowledgement (meta).

Tool calls are recorded only once completed, in the ``gemini`` record's ``toolCalls``
(call and result together, ``status`` success | error | cancelled); the function
response is then also recorded as a ``user`` record, which adds nothing. After a cancel
the CLI re-records its whole history under new ids (the model's turns as raw
``functionCall``/``functionResponse`` parts) and closes the re-sync with a checkpoint:
those records are conversation again, never new prompts.

A subagent's own chat file (metadata ``kind: "subagent"``, under
``chats/<parent session id>/``) is parsed the same way, every message carrying the
subagent's session id as ``agent_id``; the parent's completed ``invoke_agent`` call names
that id (``agentId``), kept in ``spawned``.

Events. Always, for every read (nothing else shows them: Esc or "No" on a confirmation
fires no hook): a ``cancelled`` tool call ends the wait on it (``input_resolved``), and
the ``Request cancelled.`` record ends the turn (``interrupted``). With ``lifecycle``
(a transcript-only read: no hooks to say it) the file also says what it can of the
turn: a prompt opens it, a completed tool call is a tool started and finished, a model
answer with text and no tool call ends it, an ``error`` record fails it. The file cannot
tell a model still streaming, a tool waiting on an approval or a question form open from
a tool running: each reads ``working``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.common.calls import tool_call
from agentspool.adapters.common.lines import LineParser
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.gemini_cli._records import (
    CANCELLED,
    CONTEXT_PREFIX,
    MESSAGE_TYPES,
    UPDATE_NOTICE,
    Line,
    Record,
    Set,
    ToolCall,
    calls_in,
    decode_line,
    entry_result,
    first_tool_call_keys,
    member_keys,
    parts_of,
    presentation,
    result_text,
    text_parts,
    thought_text,
)
from agentspool.adapters.gemini_cli._schema import CHAT_FIELDS
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, Usage, Visibility


class ChatParser(LineParser):
    """Parse state for one chat file: ``feed`` blocks of complete lines in file order.

    ``lifecycle``: also derive the turn's lifecycle from the file (a transcript-only
    read); otherwise the hooks own it and the file adds only what they cannot see."""

    def __init__(self, *, lifecycle: bool = True) -> None:
        super().__init__(CHAT_FIELDS)
        # cli_version: the version the CLI's update notice names (a chat file names none else)
        self.lifecycle = lifecycle
        self.agent_id = ""
        """The session id, when the file is a subagent's (``kind: "subagent"``)."""
        self.spawned: dict[str, str] = {}
        """Subagent session id → the ``invoke_agent`` call that ran it."""
        self._current: dict[str, None] = {}
        """The CLI's message map: its ids, in its order."""
        self._derived: dict[str, list[int]] = {}
        """Record id → positions (seq - 1) of the canonical messages made from it."""
        self._made: set[str] = set()
        """Canonical message ids made so far (a re-appended record adds only what is new)."""
        self._answered: set[str] = set()
        """Call ids whose result a ``toolCalls`` entry gave."""
        self._unpriced: dict[str, tuple[Usage, str]] = {}
        """Usage of a record no canonical message was made from yet, and its model."""
        self._priced: dict[str, Usage] = {}
        """Record id → the usage counted for it (its latest version's ``tokens``)."""
        self._positional: set[str] = set()
        """Record ids made up from a record's position: the record had none (a
        hand-written document); no usage dedup key."""
        self._checkpoints = 0
        self._resync = False
        """Between a cancel and the checkpoint that closes the CLI's history re-sync."""
        self._turn = ""

    # -- reading ---------------------------------------------------------------------
    def feed_line(self, raw: bytes) -> None:
        line = self._decoded(decode_line, raw)
        if line is None:
            return
        if line.set is not None:
            self._check("$set", raw, lambda r: [f"$set.{k}" for k in member_keys(r, "$set")])
            self._set(line.set, line)
        elif line.rewind_to is not None:
            self._check("$rewindTo", raw)
            self._rewind(line.rewind_to)
        elif line.id and line.type:
            if line.type in MESSAGE_TYPES:
                self._check(line.type, raw)
                if line.toolCalls and "toolCall" not in self.drift.checked:
                    self._check("toolCall", raw, first_tool_call_keys)
                self._current[line.id] = None
                self._record(line, checkpoint=False)
            else:
                self.drift.unknown_type(line.type)
        elif line.sessionId:
            self._check("metadata", raw)
            self._metadata(line)
        else:
            self.drift.unknown_type("?")

    def _check(
        self, shape: str, raw: bytes | memoryview | msgspec.Raw, members: Any = None
    ) -> None:
        if shape not in self.drift.checked:
            if members is None:
                self.drift.see(shape, raw)
            else:
                self.drift.check(shape, members(raw) or ())

    # -- the map ---------------------------------------------------------------------
    def _metadata(self, line: Line) -> None:
        if self.session_id:
            return
        self.session_id = line.sessionId
        if line.kind == "subagent":
            self.agent_id = line.sessionId
        self.events.append(
            ev.SessionStarted(
                at=epoch_seconds(line.startTime),
                source="transcript:metadata",
                epoch=self.session_id,
            )
        )

    def _set(self, members: Set, line: Line) -> None:
        if members.sessionId and not self.session_id:
            self.session_id = members.sessionId
        if members.messages is None:
            return
        ids = [r.id for r in members.messages if r.id]
        for record in members.messages:
            if record.id and record.id not in self._derived:
                self._record(record, checkpoint=True)
        before = self._current
        self._current = dict.fromkeys(ids)
        self._restate([i for i in before if i not in self._current])
        self._restate([i for i in self._current if i not in before])
        self._checkpoints += 1
        self._resync = False

    def _rewind(self, target: str) -> None:
        ids = list(self._current)
        cut = ids.index(target) if target in self._current else 0
        for gone in ids[cut:]:
            del self._current[gone]
        self._restate(ids[cut:])

    def _restate(self, record_ids: list[str]) -> None:
        """The visibility of the records whose membership in the map changed."""
        for record_id in record_ids:
            wanted: Visibility = "visible" if record_id in self._current else "inactive"
            for index in self._derived.get(record_id, ()):
                message = self.messages[index]
                if message.visibility not in ("hidden", wanted):
                    # A copy in its place: what a read handed out never changes.
                    self.messages[index] = msgspec.structs.replace(message, visibility=wanted)

    # -- records ---------------------------------------------------------------------
    def _record(self, record: Record, *, checkpoint: bool) -> None:
        """Make the canonical messages of a record's current version that were not made
        yet. ``checkpoint``: first seen inside a ``$set.messages``."""
        kind = record.type
        if kind == "user":
            self._user(record, checkpoint)
        elif kind in ("gemini", "model"):
            self._gemini(record, checkpoint)
        elif kind == "info":
            self._info(record)
        elif kind == "error":
            if self._notice(record, "error", is_error=True) and self.lifecycle and not self._resync:
                self._stop("failed", record.timestamp, "transcript:error")
        elif kind == "warning":
            self._notice(record, "text", is_meta=True)

    def _notice(self, record: Record, kind: MessageKind, **flags: Any) -> bool:
        """An ``error`` or ``warning`` record: the CLI's own words, a system message."""
        text = str(record.content or "")
        return self._add(
            record, Message(id=record.id, kind=kind, role="system", text=text, **flags)
        )

    def _add(self, record: Record, message: Message, *, hidden: bool = False) -> bool:
        """Make ``message`` from ``record``, unless it was made: then only its text, if
        the record's new version states another (``_restated``). Whether it was made now."""
        if message.id in self._made:
            self._restated(record.id, message)
            return False
        self._made.add(message.id)
        message.seq = len(self.messages) + 1
        message.timestamp = message.timestamp or record.timestamp
        if self.agent_id:
            message.agent_id = self.agent_id
        if hidden:
            message.visibility = "hidden"
        elif record.id not in self._current and record.id in self._derived:
            message.visibility = "inactive"
        priced = self._unpriced.pop(record.id, None)
        if priced is not None:
            message.usage, message.model = priced
            message.message_id = self._usage_key(record.id)
        self._derived.setdefault(record.id, []).append(len(self.messages))
        self.messages.append(message)
        return True

    def _restated(self, record_id: str, message: Message) -> None:
        """A record replaced in place (re-appended, or its document rewritten) with
        another text for a message made from it: the new text, in a copy."""
        for index in self._derived.get(record_id, ()):
            made = self.messages[index]
            if made.id == message.id:
                if message.text and made.text != message.text:
                    self.messages[index] = msgspec.structs.replace(made, text=message.text)
                return

    def _usage_key(self, record_id: str) -> str:
        return "" if record_id in self._positional else record_id

    def _user(self, record: Record, checkpoint: bool) -> None:
        parts = parts_of(record.content)
        texts = text_parts(parts)
        context = [t for t in texts if t.startswith(CONTEXT_PREFIX)]
        prompt = "\n".join(t for t in texts if not t.startswith(CONTEXT_PREFIX))
        self._derived.setdefault(record.id, [])
        if context:
            self._add(
                record,
                Message(
                    id=record.id if not prompt else f"{record.id}/context",
                    kind="text",
                    role="user",
                    text="\n".join(context),
                    is_meta=True,
                ),
                hidden=True,
            )
        if prompt:
            summary = checkpoint and self._checkpoints > 0  # what /compress wrote
            kind: MessageKind = "summary" if summary else "text"
            made = self._add(
                record, Message(id=record.id, kind=kind, role="user", text=prompt, is_meta=summary)
            )
            if made and self.lifecycle and not (checkpoint or self._resync or context):
                self._turn = record.id
                self.events.append(
                    ev.TurnStarted(
                        turn_id=record.id,
                        at=epoch_seconds(record.timestamp),
                        source="transcript:user",
                        epoch=self.session_id,
                    )
                )
        restating = checkpoint or self._resync
        for response in calls_in(parts, "functionResponse"):
            call_id = str(response.get("id") or "")
            if call_id in self._answered and not restating:
                continue  # the tool call's own entry already gave its result
            self._add(
                record,
                Message(
                    id=f"{record.id}/result/{call_id}",
                    kind="tool_result",
                    role="tool",
                    text=result_text(response.get("response")),
                    tool_name=str(response.get("name") or ""),
                    tool_use_id=call_id,
                    is_error=isinstance(response.get("response"), dict)
                    and "error" in response["response"],
                ),
            )

    def _gemini(self, record: Record, checkpoint: bool) -> None:
        self._derived.setdefault(record.id, [])
        self._price(record)
        parts = parts_of(record.content if record.content is not None else record.parts)
        for index, thought in enumerate(
            record.thoughts if isinstance(record.thoughts, list) else ()
        ):
            text = thought_text(thought)
            if text:
                self._add(
                    record,
                    Message(
                        id=f"{record.id}/thought/{index}",
                        kind="thinking",
                        role="assistant",
                        text=text,
                    ),
                )
        text = "\n".join(text_parts(parts))
        answered = False
        if text:
            acknowledgement = checkpoint and self._checkpoints > 0
            answered = self._add(
                record,
                Message(
                    id=record.id, kind="text", role="assistant", text=text, is_meta=acknowledgement
                ),
            )
        for index, call in enumerate(calls_in(parts, "functionCall")):
            call_id, name = str(call.get("id") or ""), str(call.get("name") or "")
            message_id = f"{record.id}/call/{call_id or index}"
            self._add(
                record, tool_call(message_id, call_id, name, call.get("args"), presentation(name))
            )
        for index, entry in enumerate(record.toolCalls or ()):
            self._tool_call(record, entry, index)
        # An answer ends the turn once, when its text is first read: a record read again
        # (re-appended, its document rewritten) is not another answer.
        if (
            answered
            and self.lifecycle
            and not record.toolCalls
            and not (checkpoint or self._resync)
        ):
            self._stop("completed", record.timestamp, "transcript:gemini")

    def _tool_call(self, record: Record, entry: ToolCall, index: int) -> None:
        # A fixture's call may carry no id: its place in the record names it.
        call = entry.id or f"#{index}"
        message_id = f"{record.id}/call/{call}"
        if message_id in self._made:
            return
        args = entry.args if isinstance(entry.args, dict) else {}
        failed = entry.status in ("error", "cancelled")
        if entry.agentId:
            self.spawned.setdefault(entry.agentId, entry.id)
        self._add(
            record,
            Message(
                id=message_id,
                kind="tool_call",
                role="assistant",
                timestamp=entry.timestamp,
                tool_name=entry.name,
                tool_use_id=entry.id,
                tool_input=args,
                presentation=presentation(entry.name),
            ),
        )
        text, error = entry_result(entry.result)
        self._add(
            record,
            Message(
                id=f"{record.id}/result/{call}",
                kind="tool_result",
                role="tool",
                timestamp=entry.timestamp,
                text=text,
                tool_name=entry.name,
                tool_use_id=entry.id,
                is_error=failed or error,
            ),
        )
        if entry.id:
            self._answered.add(entry.id)
        at = epoch_seconds(entry.timestamp or record.timestamp)
        source = f"transcript:toolCalls({entry.status})"
        if entry.status == "cancelled":
            # Denied (the "No" option), or Esc: no hook fires for either; this is the
            # only evidence the confirmation closed (docs/providers/gemini-cli.md §3.3).
            self.events.append(ev.InputResolved(at=at, source=source, epoch=self.session_id))
        if self.lifecycle and not self._resync:
            turn = self._turn
            epoch = self.session_id
            self.events.append(
                ev.ToolStarted(
                    turn_id=turn,
                    tool_use_id=entry.id,
                    tool_name=entry.name,
                    at=epoch_seconds(record.timestamp),
                    source=source,
                    epoch=epoch,
                )
            )
            self.events.append(
                ev.ToolFinished(
                    turn_id=turn, tool_use_id=entry.id, at=at, source=source, epoch=epoch
                )
            )

    # Whether a cancel is followed by the CLI re-recording its whole history, closed by a
    # checkpoint (the log's fold, §4.4); the older document is rewritten, never re-synced.
    resyncs_after_cancel = True

    def _info(self, record: Record) -> None:
        text = str(record.content or "")
        if not self.cli_version:
            notice = UPDATE_NOTICE.match(text)
            self.cli_version = notice.group(1) if notice else ""
        if text == CANCELLED:
            made = self._add(
                record, Message(id=record.id, kind="interrupt", role="system", text=text)
            )
            if not made:
                return
            # The whole history is re-recorded next, closed by a checkpoint.
            self._resync = self.resyncs_after_cancel
            self._stop(
                "interrupted",
                record.timestamp,
                "transcript:info(Request cancelled.)",
                any_turn=True,
            )
            return
        self._add(
            record,
            Message(id=record.id, kind="text", role="system", text=text, is_meta=True),
            hidden=not text,
        )

    def _stop(self, outcome: Any, stamp: str, source: str, *, any_turn: bool = False) -> None:
        """End the turn: the file's own (``lifecycle``), or whichever is open (hooks')."""
        if not (self.lifecycle or any_turn):
            return
        self.events.append(
            ev.TurnStopped(
                turn_id=self._turn if self.lifecycle else "",
                outcome=outcome,
                at=epoch_seconds(stamp),
                source=source,
                epoch=self.session_id,
            )
        )

    def _price(self, record: Record) -> None:
        """The record's usage: its latest version's ``tokens`` count (a record replaced in
        place restates them; a version without them changes nothing)."""
        tokens = record.tokens
        if tokens is None:
            return
        # ``cached`` is part of ``input`` already (the API's cachedContentTokenCount is
        # a subset of promptTokenCount); ``tool`` (tool-use prompt) and ``thoughts`` are
        # counted apart by the API and billed as input and output (ADR 0025, Gemini CLI).
        usage = Usage(
            input_tokens=tokens.input + tokens.tool,
            output_tokens=tokens.output + tokens.thoughts,
            cached_input_tokens=tokens.cached,
            reasoning_tokens=tokens.thoughts,
        )
        model = record.model or ""
        counted = self._priced.get(record.id)
        if counted == usage:
            return
        self._priced[record.id] = usage
        if counted is not None:
            _take(self.usage, counted)
        self.usage.add(usage)
        made = self._derived.get(record.id, [])
        carrier = next((i for i in made if self.messages[i].usage is not None), None)
        if carrier is None and made:
            carrier = made[0]
        if carrier is None:
            self._unpriced[record.id] = (usage, model)
            return
        # Messages were made from an earlier version: the usage moves onto them, a copy.
        self.messages[carrier] = msgspec.structs.replace(
            self.messages[carrier],
            usage=usage,
            model=model,
            message_id=self._usage_key(record.id),
        )


def _take(total: Usage, part: Usage) -> None:
    total.input_tokens -= part.input_tokens
    total.output_tokens -= part.output_tokens
    total.cached_input_tokens -= part.cached_input_tokens
    total.reasoning_tokens -= part.reasoning_tokens
    total.cache_write_tokens -= part.cache_write_tokens
