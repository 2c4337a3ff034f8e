"""``SessionStore``: a transcript identity's canonical records, persisted in SQLite.

One row per record, keyed by ``(transcript_id, seq)``, one column per ``Message`` field
(``_COLUMNS``; a test keeps it equal to the seam's fields). Scalars are stored as they
are (booleans as 0/1); the nested values ``tool_input`` and ``usage`` as msgspec JSON
text, ``NULL`` for ``None``. The round trip is exact: ``store.load(store.save(tid, x))
== x`` field for field, for every record a parse produces (strings are valid Unicode,
nested values are JSON-native with finite numbers — which is all a JSON transcript can
hold; msgspec refuses a number out of range).

``save(transcript_id, messages)`` makes the stored records of that identity equal to
``messages`` (a complete parse: ``seq`` strictly increasing), in one transaction:
changed rows are updated, new rows inserted, rows the new parse no longer holds deleted,
and an unchanged row is not written at all, so saving the same records again, or saving
each time the transcript grows, writes only what changed.

The database is private to the user (created 0600), in WAL mode (readers do not block
the writer), with a busy timeout for concurrent writers. A ``schema_version`` table
holds the layout's version; an older layout is migrated in place (``_MIGRATIONS``, one
transaction), a store written by a newer layout raises ``StoreError`` instead of being
misread.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from types import TracebackType
from typing import Any

import msgspec

from agentspool.core.seam import Message, Usage
from agentspool.errors import StoreError

__all__ = ["SCHEMA_VERSION", "SessionStore"]

SCHEMA_VERSION = 2

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # version n → the statements that take a store from n to n + 1, each run once, in
    # one transaction with the version bump.
    1: ("ALTER TABLE records ADD COLUMN \"model\" TEXT NOT NULL DEFAULT ''",),
}

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("seq", "INTEGER NOT NULL"),
    ("id", "TEXT NOT NULL"),
    ("kind", "TEXT NOT NULL"),
    ("role", "TEXT NOT NULL"),
    ("text", "TEXT NOT NULL"),
    ("timestamp", "TEXT NOT NULL"),
    ("visibility", "TEXT NOT NULL"),
    ("is_meta", "INTEGER NOT NULL"),
    ("tool_name", "TEXT NOT NULL"),
    ("tool_use_id", "TEXT NOT NULL"),
    ("tool_input", "TEXT"),
    ("presentation", "TEXT NOT NULL"),
    ("is_error", "INTEGER NOT NULL"),
    ("parent_id", "TEXT NOT NULL"),
    ("agent_id", "TEXT NOT NULL"),
    ("usage", "TEXT"),
    ("message_id", "TEXT NOT NULL"),
    ("model", "TEXT NOT NULL DEFAULT ''"),
)
"""Every ``Message`` field, in the seam's order, with its column type."""

_NAMES = tuple(name for name, _ in _COLUMNS)
_DATA = tuple(name for name in _NAMES if name != "seq")
_BOOLS = frozenset({"is_meta", "is_error"})

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    transcript_id TEXT NOT NULL,
    {", ".join(f'"{name}" {kind}' for name, kind in _COLUMNS)},
    PRIMARY KEY (transcript_id, seq)
) WITHOUT ROWID;
"""


def _quoted(names: Iterable[str], prefix: str = "") -> str:
    return ", ".join(f'{prefix}"{name}"' for name in names)


# Statements are built from the constant column names above; every value is bound.
_UPSERT = (
    f"INSERT INTO records (transcript_id, {_quoted(_NAMES)}) "  # noqa: S608
    f"VALUES (?, {', '.join('?' for _ in _NAMES)}) "
    "ON CONFLICT (transcript_id, seq) DO UPDATE SET "
    + ", ".join(f'"{name}" = excluded."{name}"' for name in _DATA)
    # An unchanged row is not written: re-saving the same records is a no-op.
    + f" WHERE ({_quoted(_DATA, 'records.')}) IS NOT ({_quoted(_DATA, 'excluded.')})"
)
_SELECT = f"SELECT {_quoted(_NAMES)} FROM records WHERE transcript_id = ? ORDER BY seq"  # noqa: S608

_encode = msgspec.json.Encoder().encode
_decode_input = msgspec.json.Decoder(dict[str, Any]).decode
_decode_usage = msgspec.json.Decoder(Usage).decode


def _row(transcript_id: str, m: Message) -> tuple[object, ...]:
    return (
        transcript_id,
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


class SessionStore:
    """Canonical records per transcript identity in one SQLite file (``":memory:"`` too).

    One instance per thread (an ``sqlite3`` connection); several processes may share
    the file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        if path != ":memory:" and not os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(path, timeout=10.0)
        try:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._db:
                self._db.executescript(_SCHEMA)
                found = self._db.execute("SELECT version FROM schema_version").fetchall()
                if not found:
                    self._db.execute(
                        "INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,)
                    )
                elif len(found) == 1 and found[0][0] in _MIGRATIONS:
                    self._migrate(found[0][0])
                elif found != [(SCHEMA_VERSION,)]:
                    versions = ", ".join(str(v) for (v,) in found)
                    raise StoreError(
                        path, f"schema version {versions}; this agentspool reads {SCHEMA_VERSION}"
                    )
        except BaseException:
            self._db.close()
            raise

    def _migrate(self, version: int) -> None:
        """Bring an older layout up to ``SCHEMA_VERSION`` (inside the open transaction:
        a migration that fails leaves the store as it was)."""
        while version < SCHEMA_VERSION:
            for statement in _MIGRATIONS[version]:
                self._db.execute(statement)
            version += 1
        self._db.execute("UPDATE schema_version SET version = ?", (version,))

    def save(self, transcript_id: str, messages: Iterable[Message]) -> str:
        """Make the identity's stored records equal ``messages``; return ``transcript_id``
        (so ``store.load(store.save(tid, messages))`` reads back what was saved)."""
        rows = []
        last = 0
        for message in messages:
            if message.seq <= last:
                raise StoreError(
                    self.path,
                    f"records of {transcript_id!r} must have strictly increasing seq "
                    f"(seq {message.seq} after {last})",
                )
            last = message.seq
            rows.append(_row(transcript_id, message))
        keep = {row[1] for row in rows}
        with self._db:
            stored = self._db.execute(
                "SELECT seq FROM records WHERE transcript_id = ?", (transcript_id,)
            ).fetchall()
            gone = [(transcript_id, seq) for (seq,) in stored if seq not in keep]
            if gone:
                self._db.executemany(
                    "DELETE FROM records WHERE transcript_id = ? AND seq = ?", gone
                )
            self._db.executemany(_UPSERT, rows)
        return transcript_id

    def load(self, transcript_id: str) -> list[Message]:
        """The identity's records in ``seq`` order; ``[]`` when none were saved."""
        return [_message(row) for row in self._db.execute(_SELECT, (transcript_id,))]

    def transcript_ids(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT transcript_id FROM records ORDER BY 1")
        return [tid for (tid,) in rows]

    @property
    def changes(self) -> int:
        """Rows written through this connection so far (``sqlite3`` ``total_changes``)."""
        return self._db.total_changes

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
