"""The history store's rows as Python values: a record's row and back (an exact round
trip), a session's row, and the values its query API and its indexer exchange."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import msgspec

from agentspool.core.seam import KeptUsage, Message, PackedUsage, TranscriptFacts, Usage
from agentspool.core.store_schema import _BOOLS, _NAMES, _SESSION_FIELDS

__all__ = [
    "FileCursor",
    "KeptUsage",
    "SearchHit",
    "Span",
    "StoredSession",
    "UsageParse",
    "UsageRecord",
    "decode_usage_rows",
    "encode_usage_rows",
    "epoch_of",
]

_encode = msgspec.json.Encoder().encode
_decode_input = msgspec.json.Decoder(dict[str, Any]).decode
_decode_usage = msgspec.json.Decoder(Usage).decode


class _PackedKept(KeptUsage, array_like=True, frozen=True, gc=False):
    """A kept row as a usage view makes it since ADR 0063: its usage an array."""

    usage: PackedUsage


_decode_packed = msgspec.json.Decoder(list[_PackedKept]).decode
_decode_kept = msgspec.json.Decoder(list[KeptUsage]).decode


def encode_usage_rows(rows: list[KeptUsage]) -> bytes:
    """``UsageParse.rows`` of a view's rows, each usage as the view made it (a
    ``PackedUsage``: an array)."""
    return _encode(rows)


def decode_usage_rows(rows: bytes) -> list[KeptUsage]:
    """The records a usage-first index kept of a file (``UsageParse.rows``): their usage
    an array (``PackedUsage``), or an object as stores written before ADR 0063 kept it."""
    try:
        return _decode_packed(rows)  # type: ignore[return-value]
    except msgspec.ValidationError:
        return _decode_kept(rows)


def _row(session: int, m: Message) -> tuple[object, ...]:
    return (
        session,
        m.seq,
        m.id,
        m.kind,
        m.role,
        m.text,
        m.timestamp,
        m.visibility,
        int(m.is_meta),
        m.tool_name,
        m.tool_use_id,
        None if m.tool_input is None else _encode(m.tool_input).decode(),
        m.presentation,
        int(m.is_error),
        m.parent_id,
        m.agent_id,
        None if m.usage is None else _encode(m.usage).decode(),
        m.message_id,
        m.model,
    )


def _message(row: tuple[Any, ...]) -> Message:
    fields = dict(zip(_NAMES, row, strict=True))
    for name in _BOOLS:
        fields[name] = bool(fields[name])
    if fields["tool_input"] is not None:
        fields["tool_input"] = _decode_input(fields["tool_input"])
    if fields["usage"] is not None:
        fields["usage"] = _decode_usage(fields["usage"])
    return Message(**fields)


class Span:
    """A session's span as its records come (ADR 0057): the first and the last record
    with a time in file order, by ``seq`` — a record handed out again (its usage
    restated) keeps its place."""

    __slots__ = ("first", "last")

    def __init__(self) -> None:
        self.first: tuple[int, str] | None = None
        self.last: tuple[int, str] | None = None
        """``(seq, timestamp)`` of each end; ``None`` while no record has a time."""

    def see(self, seq: int, stamp: str) -> None:
        if stamp:
            if self.first is None or seq < self.first[0]:
                self.first = (seq, stamp)
            if self.last is None or seq >= self.last[0]:
                self.last = (seq, stamp)

    def stamps(self) -> tuple[str, str]:
        """The first and the last timestamp (``""`` for none)."""
        return (self.first[1] if self.first else "", self.last[1] if self.last else "")


def epoch_of(stamp: str) -> float:
    """An ISO 8601 record timestamp as epoch seconds (0.0 when there is none)."""
    try:
        return datetime.fromisoformat(stamp).timestamp() if stamp else 0.0
    except ValueError:
        return 0.0


class StoredSession(msgspec.Struct, frozen=True, kw_only=True):
    """One session of the store (what ``sessions`` and ``find_sessions`` return)."""

    id: int
    """The store's own key for it: pass it to ``records``."""
    key: str
    """The transcript file's absolute path for an indexed session, else the transcript
    id given to ``save``."""
    provider: str = ""
    session_id: str = ""
    """The CLI's session id (a Codex thread id). A Claude Code subagent's file carries its
    parent's session id, with ``agent_id`` set."""
    path: str = ""
    """The transcript file (``""`` for a session saved by a caller)."""
    agent_id: str = ""
    """Set when the session is a subagent's own conversation."""
    parent_session_id: str = ""
    """The session that spawned this subagent (``""`` for a main session)."""
    cwd: str = ""
    title: str = ""
    """The title the CLI keeps for the session, else its first prompt; on one line, cut
    to ``TITLE_CHARS``."""
    cli_version: str = ""
    started: float = 0.0
    """Epoch seconds of the first record with a timestamp, in file order (0: none has
    one; ADR 0057)."""
    updated: float = 0.0
    """Epoch seconds of the last record with a timestamp, in file order."""
    records: int = 0
    gone: bool = False
    """The file is no longer there; its records are kept."""


class SearchHit(msgspec.Struct, frozen=True, kw_only=True):
    """One record matching a search, best first."""

    session: StoredSession
    seq: int
    kind: str
    role: str
    timestamp: str
    snippet: str
    """The matching text around the match, the matched words between the marks given."""
    rank: float
    """FTS5 bm25: lower is better."""


class UsageRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record that carries usage (``usage_records``)."""

    session: int
    seq: int
    timestamp: str
    model: str
    message_id: str
    usage: Usage

    @classmethod
    def of(cls, session: int, kept: KeptUsage) -> UsageRecord:
        """``kept`` of ``session``, its usage a plain ``Usage`` (which encodes as an
        object, as every other: a ``PackedUsage`` would encode as an array)."""
        usage = Usage(**msgspec.structs.asdict(kept.usage))
        return cls(session=session, **msgspec.structs.asdict(kept) | {"usage": usage})


class UsageParse(msgspec.Struct, kw_only=True):
    """What a usage-first index keeps of one file's full parse (``ingest_usage``)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    """The file as seen before the parse: a later change makes the next run read it."""
    count: int
    """Records the parse holds in all."""
    rows: bytes
    """Each record with usage, ``[seq, timestamp, model, message_id, usage]``, in a JSON
    array (``encode_usage_rows``): what the store keeps of them, as it keeps it."""
    facts: TranscriptFacts
    title: str
    """The first prompt's title (``prompt_title``)."""
    first: str
    """The first and the last record's timestamp, in file order."""
    last: str


class FileCursor(msgspec.Struct, frozen=True, kw_only=True):
    """Where the indexer got to in one file (``core/history.py``)."""

    device: int
    inode: int
    size: int
    """The file's size when it was last read (the parse may stop short, at a torn line)."""
    mtime_ns: int
    offset: int
    """Bytes parsed: whole lines only."""
    fingerprint: bytes
    """Digest of the bytes before ``offset``: its first and its last few KiB."""
    state: bytes
    """The adapter's parse state at ``offset`` (opaque here; ``b""``: none)."""


def _session(row: Iterable[Any]) -> StoredSession:
    fields = dict(zip(_SESSION_FIELDS, row, strict=True))
    fields["gone"] = bool(fields["gone"])
    return StoredSession(**fields)
