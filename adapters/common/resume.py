"""Parsing a transcript file from a byte offset, for the history index (ADR 0022).

``ResumedFile`` is the seam's ``ResumedParse`` for a JSONL transcript: it reads whole
lines from ``offset`` in blocks of about ``limit`` bytes (a last line without its
newline that is a whole JSON value is whole: ``jsonl.whole_tail``), hands each block to the
provider's parser (``Resumable``), and returns the records the parser took out since
the last read. The parser keeps no record it handed out (memory follows the block, not
the file), and says in ``state`` what it must remember to go on: the caller
persists that next to the offset, and hands both back for the next parse.

A state is the parser's own msgspec Struct (JSON: a tool input may hold any JSON number)
with a ``version``: a state of another version (an older agentspool's parser) is not
used — the file is parsed again from its first byte (``fresh``), which is always right.

What the parsers share lives here too: ``RecordLog`` (the records handed out, and a
changed copy handed out again), ``ParseState`` (what every parse keeps, and the fields
every parse saves) and ``SavedParse``, the state a parser's own ``ResumeState`` extends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import msgspec

from agentspool.adapters.common.drift import DriftCounter, check_first_lines
from agentspool.adapters.common.jsonl import DECODE_ERRORS, split_lines, whole_tail
from agentspool.core.events import Event
from agentspool.core.seam import Message, TranscriptFacts, Usage
from agentspool.spool.files import regular_fd


class RecordLog:
    """The records a parse made, in ``seq`` order; a history parse takes them out as it
    goes (``take``), so that it holds what the block made, not the file's."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._base = 0
        """Records handed out and let go before ``messages`` (``take``): the next
        record's ``seq`` is ``_base + len(messages) + 1``."""
        self._changed: dict[int, Message] = {}
        """Records changed after ``take`` handed them out: ``seq`` → the new copy."""

    @property
    def count(self) -> int:
        return self._base + len(self.messages)

    def take(self) -> list[Message]:
        taken = [self._changed[seq] for seq in sorted(self._changed)]
        taken += self.messages
        self._changed.clear()
        self._base += len(self.messages)
        self.messages = []
        return taken

    def _replace(self, record: Message) -> None:
        """``record``, a changed copy of one made before (what a read handed out never
        changes): in its place, or, already taken out, handed out again."""
        at = record.seq - 1 - self._base
        if at >= 0:
            self.messages[at] = record
        else:
            self._changed[record.seq] = record


class SavedParse(msgspec.Struct, gc=False):
    """What every resumable parse saves; a parser's own state adds its fields."""

    version: int
    count: int
    agent_id: str = ""
    cli_version: str = ""
    cwd: str = ""
    turn: str = ""
    usage_seen: list[str] = []


Saved = TypeVar("Saved", bound=SavedParse)
_encode = msgspec.json.Encoder().encode


def load_state(state: bytes, decode: Callable[[bytes], Saved], version: int) -> Saved | None:
    """A saved parse state of ``version``; ``None`` for another version's, or one that
    does not decode (the file is then parsed from its first byte)."""
    try:
        saved = decode(state)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return saved if saved.version == version else None


class ParseState(RecordLog):
    """What every transcript parse keeps: its records (``RecordLog``) and events, the
    usage counted, what it could not read (``corrupt``, ``unknown``, ``drift``), and the
    fields every parse is resumed with (``_saved``, ``_restore``)."""

    def __init__(self, known: Mapping[str, frozenset[str]]) -> None:
        super().__init__()
        self.events: list[Event] = []
        self.usage = Usage()
        self.corrupt = 0
        self.unknown = 0
        self.drift = DriftCounter(known)
        self.agent_id = ""
        """Set when the transcript is a subagent's: every message carries it."""
        self.cli_version = ""
        """The latest version the records name (a resumed session may be a newer CLI's)."""
        self.cwd = ""
        """The working directory, as the first record naming one says."""
        self.turn = ""
        """The turn that records naming none belong to."""
        self._usage_seen: set[str] = set()
        """Responses whose usage is counted (a later record of one is not counted again)."""
        self._unchecked: list[str] = []
        """Shapes whose first record was met in the block being read: their fields are
        checked once it is read (a decoded line keeps no bytes; ADR 0014)."""

    # -- reading: a block decoded in one call, a refused block line by line ----------
    def feed(self, block: memoryview) -> None:
        """A block of complete lines (what ``JsonlFollower`` hands on), decoded in one
        call. A block holding a line the decode refuses (corrupt, torn, of another
        shape) is read again line by line, so that line alone is counted and skipped, or
        read as far as it fits."""
        try:
            decoded = self._decode_block(block)
        except DECODE_ERRORS:
            for raw in split_lines(block):
                self.feed_line(raw)
            return
        self._read_block(block, decoded)
        if self._unchecked:
            self._check_fields(block)

    def feed_line(self, raw: bytes) -> None:
        if raw[:1] != b"{" and not raw.strip():
            return
        self._read_line(raw)
        if self._unchecked:
            self._check_fields(raw)

    def _check_fields(self, block: bytes | memoryview) -> None:
        """Check the fields of the first line of each shape met for the first time."""
        check_first_lines(
            self.drift, block, self._unchecked, self._shape_needle, self._shape_members
        )
        self._unchecked.clear()

    # -- what a parser says -------------------------------------------------------------
    def _decode_block(self, block: memoryview) -> list[Any]:
        """Every line of ``block`` through the parser's views, in one call."""
        raise NotImplementedError

    def _read_block(self, block: memoryview, decoded: list[Any]) -> None:
        raise NotImplementedError

    def _read_line(self, raw: bytes) -> None:
        """One line, decoded on its own (a block of it was refused)."""
        raise NotImplementedError

    @staticmethod
    def _shape_needle(shape: str) -> tuple[bytes, ...]:
        """Bytes every line of ``shape`` holds, in each spelling (``check_first_lines``)."""
        raise NotImplementedError

    @staticmethod
    def _shape_members(raw: bytes, shape: str) -> Iterable[str] | None:
        """The line's members if it is of ``shape``, else ``None``."""
        raise NotImplementedError

    # -- resuming -----------------------------------------------------------------------
    _KEPT: ClassVar[tuple[str, ...]] = ()
    """The parser's own attributes saved and restored as they are, each as the state's
    field of its name without the leading ``_``."""

    def _saved(self) -> dict[str, Any]:
        """The state's fields but ``version``: ``SavedParse``'s, and ``_KEPT``."""
        return {
            "count": self.count,
            "agent_id": self.agent_id,
            "cli_version": self.cli_version,
            "cwd": self.cwd,
            "turn": self.turn,
            "usage_seen": sorted(self._usage_seen),
            **{name.lstrip("_"): getattr(self, name) for name in self._KEPT},
        }

    def _facts(self, session_id: str, parent_session_id: str, title: str = "") -> TranscriptFacts:
        return TranscriptFacts(
            session_id=session_id,
            agent_id=self.agent_id,
            parent_session_id=parent_session_id,
            cwd=self.cwd,
            cli_version=self.cli_version,
            title=title,
        )

    def _encoded(self, state: type[Saved], version: int, **own: Any) -> bytes:
        """The parser's ``state``: ``SavedParse``'s fields and its ``own``, as JSON."""
        return _encode(state(version=version, **self._saved(), **own))

    def _restore(self, saved: SavedParse) -> None:
        self._base = saved.count
        self.agent_id = saved.agent_id
        self.cli_version = saved.cli_version
        self.cwd = saved.cwd
        self.turn = saved.turn
        self._usage_seen = set(saved.usage_seen)
        for name in self._KEPT:
            setattr(self, name, getattr(saved, name.lstrip("_")))


class Resumable(Protocol):
    def feed(self, block: memoryview) -> None: ...

    def take(self) -> list[Message]:
        """The records new or changed since the last ``take``, in ``seq`` order; the
        parser keeps none of them."""
        ...

    @property
    def count(self) -> int: ...

    def facts(self) -> TranscriptFacts: ...

    def state(self) -> bytes:
        """What the parser must remember to go on from here (a versioned state)."""
        ...


P = TypeVar("P", bound=Resumable)


class ResumedFile(Generic[P]):
    """A JSONL transcript parsed from ``offset`` by ``parser`` (``ResumedParse``)."""

    def __init__(
        self,
        path: str,
        offset: int,
        parser: P,
        *,
        fresh: bool,
    ) -> None:
        self.path = path
        self.offset = offset
        self.fresh = fresh
        self.parser = parser

    @property
    def count(self) -> int:
        return self.parser.count

    def read(self, limit: int) -> list[Message]:
        with open(regular_fd(self.path), "rb", buffering=0) as fh:
            fh.seek(self.offset)
            data = fh.read(max(limit, 1))
            cut = data.rfind(b"\n") + 1
            if not cut:  # a line longer than the limit: read on to its end
                pieces, size = [data], len(data)
                while not cut:
                    more = fh.read(max(limit, 1 << 16))
                    if not more:
                        data = b"".join(pieces)
                        if whole_tail(data):  # the last record, its newline missing
                            self.parser.feed(memoryview(data + b"\n"))
                            self.offset += len(data)
                        return self.parser.take()  # else a torn line: nothing whole yet
                    end = more.rfind(b"\n")
                    if end >= 0:
                        cut = size + end + 1
                    pieces.append(more)
                    size += len(more)
                data = b"".join(pieces)
        self.parser.feed(memoryview(data)[:cut])
        self.offset += cut
        return self.parser.take()

    def state(self) -> bytes:
        return self.parser.state()

    def facts(self) -> TranscriptFacts:
        return self.parser.facts()
