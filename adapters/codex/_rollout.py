"""Codex rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: docs/providers/codex.md §6. Every line is an envelope
``{timestamp, ordinal, type, payload, metadata?}``, decoded in one pass as the tagged
union of one view per record type: each declares only the payload fields read here
(msgspec skips the rest cheaply), so bookkeeping records cost a skip. A line that fails
to decode is counted (``corrupt``) and skipped; a record type not known here is counted
(``unknown``); neither is ever fatal. Both, and fields not known on the first record of
each shape, are schema drift (``drift``, ADR 0014). ``RolloutParser.feed`` takes a block of complete
lines and decodes it in one call (``feed_line`` takes one line); a follower
(``_jsonl.JsonlFollower``, or ``ZstFollower`` for ``.jsonl.zst``) hands it what was
appended, so a re-read costs what was appended, not the file.

Every event carries the turn id the record itself names (``payload.turn_id``, a
``response_item``'s ``internal_chat_message_metadata_passthrough.turn_id``), so records
Codex appends after a turn's ``turn_aborted``/``task_complete`` (a background command's
late ``item_completed``) stay with that finalized turn and cannot reopen it. The
transcript identity (``epoch``) is the thread id, ``session_meta.payload.id``; a
sub-agent's own file is its own identity, and all its messages carry ``agent_id``.

Older releases (0.34 to 0.146) write the same envelope with other records beside the
response items (docs/providers/codex.md §10): their UI events repeat the prompt, the
answer and the reasoning (the first of the two copies is the record, the second its
echo); their usage is ``event_msg/token_count`` (the running total and the last
response's); they mark no turn's start or end, so a prompt opens a turn and the next
prompt closes it. A line with no ``type`` is the pre-envelope format's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from agentspool.adapters.codex._events import EventRecords
from agentspool.adapters.codex._items import ItemRecords
from agentspool.adapters.codex._records import (
    BARE_ITEMS,
    DECODE_ERRORS,
    KNOWN_TYPES,
    QUESTION_TOOL,
    UUID,
    AgentMetadataLine,
    CompactedLine,
    EventLine,
    ResponseItemLine,
    RetainedLine,
    SessionMeta,
    SessionMetaLine,
    TurnContextLine,
    UsageLine,
    WorldStateLine,
    decode_any_line,
    decode_bare_item,
    decode_legacy_line,
    decode_line,
    decode_lines,
    thread_spawn,
)
from agentspool.adapters.codex._shapes import shape_members, shape_needle
from agentspool.adapters.common.jsonl import JsonlFollower, OnLines
from agentspool.adapters.common.resume import SavedParse, load_state
from agentspool.core import events as ev
from agentspool.core.seam import Message, TranscriptFacts
from agentspool.spool.errors import CompressedRolloutError


class RolloutParser(ItemRecords, EventRecords):
    """Parse state for one rollout file (one thread): ``feed`` blocks, or ``feed_line``
    single lines, in file order."""

    # -- dispatch ------------------------------------------------------------------
    def _decode_block(self, block: memoryview) -> list[Any]:
        return decode_lines(block)

    def _read_block(self, block: memoryview, decoded: list[Any]) -> None:
        """Every decoded line to its handler. Response items and events, most of a
        rollout, go straight to their kind's handler, or while their kind was not met yet
        to ``_response_item``/``_event_msg``, which meet it; the other record types to
        theirs."""
        self._block, self._decoded, self._lines = block, decoded, None
        items, events, handlers = self._items_met, self._events_met, self._HANDLERS
        first_item, first_event = ItemRecords._response_item, EventRecords._event_msg
        for line in decoded:
            record = type(line)
            if record is ResponseItemLine:
                item = line.payload
                items.get(item.type, first_item)(self, line, item)
            elif record is EventLine:
                msg = line.payload
                events.get(msg.type, first_event)(self, line, msg)
            else:
                handlers[record](self, line)
        self._block, self._decoded = None, []

    def _read_line(self, raw: bytes) -> None:
        try:
            line = decode_line(raw)
        except msgspec.ValidationError:
            self._untyped(raw)
            return
        except (msgspec.DecodeError, UnicodeDecodeError):
            self.corrupt += 1
            return
        self._read_block(memoryview(raw), [line])

    _shape_needle = staticmethod(shape_needle)
    _shape_members = staticmethod(shape_members)

    def _untyped(self, raw: bytes) -> None:
        """A line the typed decode refused: a record type not known here, a known one
        whose fields do not fit its view, or a line of the pre-envelope format."""
        try:
            head = decode_any_line(raw)
        except DECODE_ERRORS:
            self.corrupt += 1  # not even an object
            return
        kind = head.type
        if not kind:
            self._legacy(raw)
        elif not head.payload and kind in BARE_ITEMS:
            try:
                item = decode_bare_item(raw)
            except DECODE_ERRORS:
                self.corrupt += 1
                return
            self._decoded, self._lines, self._bare = [], [raw], True
            self._response_item(ResponseItemLine(payload=item), item)
            self._bare = False
        elif kind in KNOWN_TYPES:
            self.corrupt += 1  # a known record whose fields do not fit its view
        else:
            self.unknown += 1
            self.drift.unknown_type(kind)

    def _legacy(self, raw: bytes) -> None:
        """A line with no ``type``: the pre-envelope format's session header (first) or a
        ``record_type`` state snapshot. Any other such object names no record: nothing
        to read (a header is read once; its fields are not checked, the format is
        retired)."""
        try:
            line = decode_legacy_line(raw)
        except DECODE_ERRORS:
            self.corrupt += 1
            return
        if line.record_type is not None or self._meta_seen:
            return
        if isinstance(line.id, str) and line.id:
            stamp = line.timestamp if isinstance(line.timestamp, str) else ""
            self._session_meta(SessionMetaLine(timestamp=stamp, payload=SessionMeta(id=line.id)))

    # -- record types --------------------------------------------------------------
    def _session_meta(self, line: SessionMetaLine) -> None:
        meta = line.payload
        if meta.cli_version:
            self.cli_version = meta.cli_version
        if "session_meta" not in self.drift.checked:
            self._first("session_meta")
        if self._meta_seen:
            # A later session_meta does not change the identity. One naming another
            # thread begins that thread's history, copied: a resumed thread's new file
            # (0.36) or a fork holds its parent's lines under new times.
            if UUID.fullmatch(meta.id) and meta.id != self.thread_id and not self.agent_id:
                self.forked_from = self.forked_from or meta.id
            return
        self._meta_seen = True
        if UUID.fullmatch(meta.id) or not self.thread_id:
            # A header naming no thread id (a made-up name, or none) leaves the file
            # name's: ids like "parent-session" are shared by unrelated files.
            self.thread_id = meta.id or self.thread_id
        self.cwd = meta.cwd
        spawn = thread_spawn(meta.source)
        self.parent_thread_id = meta.parent_thread_id or spawn.get("parent_thread_id") or ""
        if not isinstance(self.parent_thread_id, str):
            self.parent_thread_id = ""
        subagent = isinstance(meta.source, dict) and "subagent" in meta.source
        if subagent or meta.thread_source == "subagent" or self.parent_thread_id:
            self.agent_id = self.thread_id
            self.nickname = meta.agent_nickname or ""
        elif meta.forked_from_id:
            self.forked_from = meta.forked_from_id
        self.events.append(
            ev.SessionStarted(
                how="subagent" if self.agent_id else "transcript",
                at=self._at(line.timestamp),
                source="transcript:session_meta",
                epoch=self.thread_id,
            )
        )

    def _turn_context(self, line: TurnContextLine) -> None:
        if "turn_context" not in self.drift.checked:
            self._first("turn_context")
        if line.payload.model:
            self.model = line.payload.model

    def _world_state(self, line: object) -> None:
        if "world_state" not in self.drift.checked:
            self._first("world_state")

    def _bookkeeping(self, line: object) -> None:
        """A record known and not read (``_schema.IGNORED`` says why)."""

    def _compacted(self, line: CompactedLine) -> None:
        if "compacted" not in self.drift.checked:
            self._first("compacted")
        text = line.payload.message or ""
        self._note(line, f"compacted:{self._fallback_id(line)}", "summary", "system", text)

    def _retained(self, line: RetainedLine) -> None:
        record = line.payload
        if record.type != "verified_answer":
            self.drift.unknown_type("retained_context:" + record.type)
            return
        if "retained_context:verified_answer" not in self.drift.checked:
            self._first("retained_context:verified_answer")
        lines = []
        for qa in record.questions:
            answer = qa.answer
            if isinstance(answer, list):
                answer = ", ".join(str(a) for a in answer)
            lines.append(f"{qa.question.splitlines()[0] if qa.question else ''}: {answer}")
        self._note(
            line,
            f"answer:{record.call_id}",
            "text",
            "user",
            "\n".join(lines),
            tool_name=QUESTION_TOOL,
            tool_use_id=record.call_id,
            presentation="question",
        )

    _HANDLERS: ClassVar[dict[type, Callable[[RolloutParser, Any], None]]] = {
        SessionMetaLine: _session_meta,
        TurnContextLine: _turn_context,
        WorldStateLine: _world_state,
        AgentMetadataLine: _bookkeeping,
        UsageLine: EventRecords._token_usage,
        CompactedLine: _compacted,
        RetainedLine: _retained,
    }


def thread_id_from_path(path: str) -> str:
    """``rollout-YYYY-MM-DDTHH-MM-SS-<thread id>.jsonl[.zst]`` → the thread id."""
    name = os.path.basename(path)
    for suffix in (".zst", ".jsonl"):
        name = name.removesuffix(suffix)
    parts = name.split("-")
    return "-".join(parts[-5:]) if len(parts) >= 11 else ""


class ZstFollower(JsonlFollower):
    """A ``.jsonl.zst`` rollout (a finished, archived file): there is no byte offset into
    a compressed stream, so a changed file is read anew."""

    _stamp: tuple[int, int, int] | None = None

    def read(self, on_lines: OnLines, reset: Callable[[], None]) -> None:
        try:
            import zstandard
        except ImportError:
            raise CompressedRolloutError(self.path) from None
        with self._open() as fh:
            st = os.fstat(fh.fileno())
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            if stamp == self._stamp:
                return
            self._stamp = stamp
            reset()
            pending = b""
            try:
                with zstandard.ZstdDecompressor().stream_reader(fh) as reader:
                    while chunk := reader.read(self.BLOCK):
                        data = pending + chunk
                        cut = data.rfind(b"\n") + 1
                        pending = data[cut:]
                        if cut:
                            on_lines(memoryview(data)[:cut])
            except zstandard.ZstdError:
                pass  # a truncated or damaged frame: what decoded so far stands
            if pending:
                on_lines(memoryview(pending + b"\n"))


# -- resuming a parse (the history index, ADR 0022) --------------------------------------

RESUME_VERSION = 2
"""Bump when the parse state below, or what the parser makes of a record, changes: a
state of another version makes the file be parsed again from its first byte. (2: the
releases before 0.169 read — token_count usage, echoes, prompt-opened turns, forks.)"""


class ResumeState(SavedParse, msgspec.Struct, gc=False):
    """What ``HistoryParser`` needs to go on from an offset: exactly the parser's fields
    that shape a later record."""

    thread_id: str = ""
    parent_thread_id: str = ""
    forked_from: str = ""
    nickname: str = ""
    model: str = ""
    turn_open: bool = False
    prompted: bool = False
    meta_seen: bool = False
    names: dict[str, str] = {}
    """call_id → tool name of every call so far (an output names its call's tool)."""
    subagents: dict[str, str] = {}
    unpriced: Message | None = None
    """The first model output since the last usage record: the next one prices it."""
    total: tuple[int, int, int, int] | None = None
    recorded: bool = False
    copies: dict[str, list[str]] = {}
    recent: dict[str, str] = {}


_decode_state = msgspec.json.Decoder(ResumeState).decode


class HistoryParser(RolloutParser):
    """``RolloutParser`` for the history index: records are taken out as they are
    parsed (``take``) — with an earlier one again when a usage record prices it — and
    the parse state round-trips through ``state``/``resumed``."""

    _KEPT: ClassVar[tuple[str, ...]] = (
        "thread_id",
        "parent_thread_id",
        "forked_from",
        "nickname",
        "model",
        "_turn_open",
        "_prompted",
        "_meta_seen",
        "_names",
        "subagents",
        "_total",
        "_recorded",
        "_copies",
        "_recent",
    )

    def facts(self) -> TranscriptFacts:
        return self._facts(self.thread_id, self.parent_thread_id or self.forked_from)

    def state(self) -> bytes:
        return self._encoded(
            ResumeState,
            RESUME_VERSION,
            unpriced=self._unpriced[0] if self._unpriced else None,
        )

    @classmethod
    def resumed(cls, state: bytes) -> HistoryParser | None:
        """A parser that goes on where ``state`` was taken; ``None`` if it cannot."""
        saved = load_state(state, _decode_state, RESUME_VERSION)
        if saved is None:
            return None
        parser = cls(saved.thread_id)
        parser._restore(saved)
        parser._unpriced = [] if saved.unpriced is None else [saved.unpriced]
        return parser
