"""The parse state of one rollout, and what every record handler does with it: number
and keep a record (``_append``), give it a stable id where it names none, look at a
line's rarer fields (``_rich_item``, ``_rich_event``), tell a record from its echo (the
releases before 0.169 write a prompt, an answer and the reasoning twice), and open a
turn at a prompt where the rollout marks none. The handlers of each record family are
``_items.ItemRecords`` and ``_events.EventRecords``; ``_rollout.RolloutParser`` joins
them under one dispatch.
"""

from __future__ import annotations

from typing import Any, Literal

from agentspool.adapters.codex._records import (
    COPIES_KEPT,
    DECODE_ERRORS,
    Line,
    RichEvent,
    RichItem,
    decode_rich_bare_item,
    decode_rich_event,
    decode_rich_item,
)
from agentspool.adapters.codex._schema import ROLLOUT_FIELDS
from agentspool.adapters.common.jsonl import split_lines
from agentspool.adapters.common.resume import ParseState
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.core import events as ev
from agentspool.core.seam import Message, MessageKind, Role

Outcome = Literal["completed", "interrupted", "failed"]


class RolloutState(ParseState):
    """Parse state for one rollout file (one thread).

    A bulk read builds every message and event of a long history, so the handlers
    construct them directly (no keyword dicts passed through helpers): per record Python
    is most of a cold read's cost (benchmarks/read.py)."""

    def __init__(self, fallback_thread_id: str = "") -> None:
        super().__init__(ROLLOUT_FIELDS)
        self.model = ""
        """The model the latest ``turn_context`` names: the one its usage is priced at."""
        self.thread_id = fallback_thread_id
        """The thread id: ``session_meta.id`` where that is one (a UUID, as Codex makes
        them), else the one the file's name carries (``fallback_thread_id``)."""
        self.parent_thread_id = ""
        self.forked_from = ""
        """The thread whose history this rollout copies: a fork's
        ``session_meta.forked_from_id``, or the thread a later ``session_meta`` names (a
        resumed thread's new file), else ``""``."""
        self.nickname = ""
        self._turn_open = False
        self._prompted = False
        """The open turn is one a prompt opened: the rollout marks no turn (before 0.1xx),
        so the next prompt closes it."""
        self.open_calls: dict[str, tuple[str, dict[str, Any], str]] = {}
        """call_id → (name, arguments, turn_id) of calls with no output yet."""
        self.subagents: dict[str, str] = {}
        """Sub-agent thread id → the ``spawn_agent`` call that started it (parent side)."""
        self._names: dict[str, str] = {}
        self._unpriced: list[Message] = []
        """Model output since the last usage record: the response that record prices."""
        self._total: tuple[int, int, int, int] | None = None
        """The running total of the latest ``token_count`` (input, cached, output,
        reasoning)."""
        self._recorded = False
        """A ``token_usage_record`` came since the latest ``token_count``: the next one
        repeats it."""
        self._copies: dict[str, list[str]] = {}
        """Role → texts recorded from UI events whose response item may follow (that item
        is their echo, not a record)."""
        self._block: memoryview | None = None
        self._decoded: list[Any] = []
        self._lines: list[bytes] | None = None
        """The block's lines, split once a rare record asks for its own (``_raw``)."""
        self._bare = False
        self._recent: dict[str, str] = {}
        """Role → the text of the latest record from a response item, which its UI event
        may repeat next."""
        self._meta_seen = False
        self._items_met: dict[str, Any] = {}
        """Item kind → its handler (``_items.ITEM_READERS``), for each kind met so far:
        its shape's fields are checked at the first (``_first``)."""
        self._events_met: dict[str, Any] = {}
        """The same for event kinds (``_events.EVENT_READERS``)."""
        self._stamp = ""
        self._stamp_at = 0.0
        """The latest stamp turned into evidence time, and that time (``_at``)."""

    def _first(self, shape: str) -> None:
        """The first record of a shape known here, met in a decoded block: its fields
        are checked once the block is read (a decoded line keeps no bytes)."""
        if shape in ROLLOUT_FIELDS and shape not in self._unchecked:
            self._unchecked.append(shape)

    def _append(self, message: Message) -> None:
        message.seq = self._base + len(self.messages) + 1
        if self.agent_id and not message.agent_id:
            message.agent_id = self.agent_id
        self.messages.append(message)
        if message.role == "assistant":
            self._unpriced.append(message)

    def _note(
        self, line: Line, uid: str, kind: MessageKind, role: Role, text: str, **fields: Any
    ) -> Message:
        """A record of the rarer kinds (an error, a review, an answer, the UI's copy of a
        text), stamped with its line's time; the hot handlers build theirs in place."""
        message = Message(
            id=uid, kind=kind, role=role, text=text, timestamp=line.timestamp, **fields
        )
        self._append(message)
        return message

    def _call_record(
        self,
        line: Line,
        uid: str,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        shown: str,
    ) -> None:
        """A tool call's record (``shown``: its presentation); its name kept for the
        output that names only the call."""
        self._names[call_id] = name
        self._append(
            Message(
                id=uid,
                kind="tool_call",
                role="assistant",
                timestamp=line.timestamp,
                tool_name=name,
                tool_use_id=call_id,
                tool_input=arguments,
                presentation=shown,
            )
        )

    def _at(self, stamp: str) -> float:
        """``stamp`` as evidence time, worked out once for a run of events of one stamp
        (a call and its output written together: 44 % of the real-world rollouts'
        events repeat the stamp before them)."""
        if stamp != self._stamp:
            self._stamp, self._stamp_at = stamp, epoch_seconds(stamp)
        return self._stamp_at

    def _started(self, stamp: str, turn: str, source: str) -> None:
        self.events.append(
            ev.TurnStarted(turn_id=turn, at=self._at(stamp), source=source, epoch=self.thread_id)
        )

    def _stopped(self, stamp: str, turn: str, outcome: Outcome, source: str) -> None:
        self.events.append(
            ev.TurnStopped(
                turn_id=turn,
                outcome=outcome,
                at=self._at(stamp),
                source=source,
                epoch=self.thread_id,
            )
        )

    def _raw(self, line: Line) -> bytes:
        """``line``'s bytes: ``feed`` splits its block only when a rare record asks (the
        decoded lines are the block's non-blank lines, in order; an equal line earlier in
        the block has the same bytes' meaning)."""
        if self._lines is None:
            block = self._block if self._block is not None else memoryview(b"")
            self._lines = [raw for raw in split_lines(block) if raw.strip()]
        return self._lines[self._decoded.index(line) if self._decoded else 0]

    def _rich_item(self, line: Line) -> RichItem:
        try:
            if self._bare:
                return decode_rich_bare_item(self._raw(line))
            return decode_rich_item(self._raw(line)).payload
        except DECODE_ERRORS:
            return RichItem()

    def _rich_event(self, line: Line) -> RichEvent:
        try:
            return decode_rich_event(self._raw(line)).payload
        except DECODE_ERRORS:
            return RichEvent()

    def _fallback_id(self, line: Line) -> str:
        """An id for a record that names none: its ordinal, else the seq its message
        gets (both stable however often the file is read)."""
        return (
            f"o{line.ordinal}" if line.ordinal >= 0 else f"seq{self._base + len(self.messages) + 1}"
        )

    # Codex 0.34-0.146 write a prompt, an answer and the reasoning twice: as a response
    # item and as a UI event, in either order. The first is the record; the second, the
    # same text from the other channel, is its echo (nothing is recorded for it).
    def _item_echo(self, role: str, text: str) -> bool:
        """An item's text: the echo of a UI event before it (consumed), or remembered as
        the latest item of the role, whose event may follow."""
        theirs = self._copies.get(role)
        if theirs and text in theirs:
            theirs.remove(text)
            return True
        self._recent[role] = text
        return False

    def _event_echo(self, role: str, text: str) -> bool:
        """A UI event's text: the echo of the latest item of the role (a reasoning event
        repeats one part of its item's summary), or remembered for the item that may
        follow."""
        recent = self._recent.get(role)
        if recent is not None and (text == recent or (role == "thinking" and text in recent)):
            return True
        if text:
            kept = self._copies.setdefault(role, [])
            kept.append(text)
            if len(kept) > COPIES_KEPT:
                del kept[:-COPIES_KEPT]
        return False

    # -- turns a prompt opens (releases that mark none) ----------------------------
    def _prompt(self, message: Message) -> None:
        """A prompt the user sent. Within a turn ``task_started`` opened it is that
        turn's; otherwise (no release before 0.1xx writes a turn's start or end) it opens
        a turn of its own, and ends the one the previous prompt opened: Codex takes a
        prompt only once its turn is over."""
        copies, recent = self._copies, self._recent
        if copies:
            copies.pop("assistant", None)
            copies.pop("thinking", None)
        if len(recent) > 1:
            recent.pop("assistant", None)
            recent.pop("thinking", None)
        if self._turn_open and not self._prompted:
            return
        if self._turn_open:
            self._stopped(message.timestamp, self.turn, "completed", "transcript:next-prompt")
        self.turn = f"prompt:{message.id}"
        self._turn_open = self._prompted = True
        self._started(message.timestamp, self.turn, "transcript:prompt")

    def _turn_closed(self) -> None:
        self._turn_open = self._prompted = False
