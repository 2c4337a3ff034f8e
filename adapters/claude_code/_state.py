"""The parse state of one Claude Code transcript, and what every record handler does
with it: number and keep a record (``_add``), give it a stable id where it has no uuid,
emit an event of the main agent's turn (an inline subagent's records make none), and
count a response's usage once, at its final figures (``_priced``, ``_reprice``). The
conversation records' handlers are ``_conversation.ConversationRecords``;
``_transcript.TranscriptParser`` reads the file's lines into them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentspool.adapters.claude_code._records import (
    RESPONSES_KEPT,
    ApiMessage,
    ApiUsage,
    Line,
    has_tokens,
    minus,
    usage_of,
)
from agentspool.adapters.claude_code._schema import TRANSCRIPT_FIELDS
from agentspool.adapters.common.resume import ParseState
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, Usage


class TranscriptState(ParseState):
    """Parse state for one transcript identity."""

    def __init__(self) -> None:
        super().__init__(TRANSCRIPT_FIELDS)
        self.session_id = ""
        self.sidechain: bool | None = None
        self.title = ""
        """The session's title as the CLI keeps it (``custom-title`` over ``ai-title``)."""
        self._title_rank = 0
        self.open_tools: dict[str, tuple[str, dict[str, Any]]] = {}
        self.background: dict[str, None] = {}
        """Background agents launched and not yet reported back (insertion-ordered)."""
        self._responses: dict[str, Message] = {}
        """message id → the record carrying that response's usage, for the latest
        ``RESPONSES_KEPT`` responses begun (a later line may change their figures)."""
        self._agent = ""
        """The subagent the record being read belongs to (``""``: the main agent)."""
        self._inline = False
        """The record being read is an inline subagent's (1.0.x, in the main file): it
        is shown under its subagent and is no evidence of the main agent's state."""
        self._side_agents: dict[str, str] = {}
        """uuid → inline subagent of its latest ``SIDE_RECORDS_KEPT`` records."""
        self._inline_agents: dict[str, None] = {}
        self._spawns: dict[str, tuple[str, str]] = {}
        """tool_use_id → (prompt digest, description) of the latest Task calls no inline
        subagent matched."""

    def _emit(self, event: ev.Event) -> None:
        """An event of the main agent's turn: an inline subagent's records make none."""
        if not self._inline:
            self.events.append(event)

    # -- drift (ADR 0014) ------------------------------------------------------------
    def _first(self, shape: str) -> None:
        """A record of a shape whose fields are not checked yet: a shape known here is
        checked once its block is read; an unknown one is counted, every record of it."""
        if shape not in TRANSCRIPT_FIELDS:
            self.drift.unknown_type(shape)
        elif shape not in self._unchecked:
            self._unchecked.append(shape)

    # -- usage: one count per response, its final figures ----------------------------
    def _priced(self, message_id: str, api: ApiUsage) -> Usage | None:
        """The usage to put on the first record of this line: the line begins a response
        (or has no id: counted on its own). ``None`` for a later line of a response,
        whose figures replace the ones counted (``_reprice``)."""
        usage = usage_of(api)
        if not message_id or message_id not in self._usage_seen:
            if message_id:
                self._usage_seen.add(message_id)
            self.usage.add(usage)
            return usage
        self._reprice(message_id, usage)
        return None

    def _carry(self, message_id: str, record: Message) -> None:
        if not message_id:
            return
        self._responses[message_id] = record
        if len(self._responses) > RESPONSES_KEPT:
            del self._responses[next(iter(self._responses))]

    def _reprice(self, message_id: str, usage: Usage) -> None:
        """A later line of a response states its usage as of that line: the last one
        with tokens is the response's. Its record is replaced by a copy (what a read
        handed out never changes) in its place, or handed out again (``_changed``)."""
        carrier = self._responses.get(message_id)
        if carrier is None or not has_tokens(usage) or carrier.usage == usage:
            return
        self.usage.add(minus(usage, carrier.usage or Usage()))
        priced = msgspec.structs.replace(carrier, usage=usage)
        self._responses[message_id] = priced
        self._replace(priced)

    def _add(self, message: Message) -> None:
        """Appends with the next ``seq`` (the hot handlers build their message with it)."""
        message.seq = self._base + len(self.messages) + 1
        if self._agent:
            message.agent_id = self._agent
        self.messages.append(message)

    def _from_user(self, line: Line, uid: str, kind: MessageKind, text: str, **fields: Any) -> None:
        """A user record's message (a prompt, an interrupt, a compaction's summary)."""
        self._add(
            Message(
                id=uid,
                kind=kind,
                role="user",
                text=text,
                timestamp=line.timestamp or "",
                parent_id=line.parent_uuid or "",
                **fields,
            )
        )

    def _paid(self, line: Line, msg: ApiMessage, usage: Usage, agent_id: str = "") -> Message:
        """A response paid for and not shown here: its usage on a hidden record of its
        own, so usage counted from the records holds it too (ADR 0025)."""
        record = Message(
            id=self._uid(line),
            kind="text",
            role="assistant",
            timestamp=line.timestamp or "",
            visibility="hidden",
            parent_id=line.parent_uuid or "",
            agent_id=agent_id,
            usage=usage,
            message_id=msg.id or "",
            model=msg.model or "",
        )
        self._add(record)
        return record

    def _uid(self, line: Line) -> str:
        """The record's uuid; for one without, an id from its place in the stream (as
        stable as ``seq`` across re-reads)."""
        return line.uuid or f"line-{self._base + len(self.messages)}"
