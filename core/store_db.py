"""The history store's connection: SQLite failures as one ``StoreError`` each, the
store file kept private, and ``Ingest``, the writer of one file's parse (one
transaction, opened by ``SessionStore.ingest``)."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator
from typing import Any

from agentspool.core.runs import TITLE_CHARS, prompt_title
from agentspool.core.seam import Message, TranscriptFacts
from agentspool.core.store_rows import FileCursor, Span, _row, epoch_of
from agentspool.core.store_schema import _SEARCH_WRITTEN, _UPSERT, MAX_SEQ
from agentspool.spool.errors import StoreError

__all__ = ["Ingest", "store_error", "write_records"]

# SQLite's primary result codes (``sqlite_errorcode & 0xff``) a user can act on.
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26


def store_error(path: str, exc: BaseException) -> StoreError:
    """What an ``sqlite3`` failure means for the store, as one ``StoreError``."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    detail = str(exc)
    if code == _FULL or "disk is full" in detail:
        problem = "disk full: nothing more was written; free some space and run it again"
    elif code in (_CORRUPT, _NOTADB):
        problem = f"damaged ({detail}); move it aside and run `agentspool index` to build it anew"
    elif code in (_BUSY, _LOCKED):
        problem = f"busy: another process holds it ({detail}); try again"
    elif code == _READONLY:
        problem = f"read-only ({detail})"
    elif code in (_IOERR, _CANTOPEN):
        problem = f"cannot be read or written ({detail})"
    elif isinstance(exc, UnicodeEncodeError):
        problem = "given text that is not valid Unicode (a non-UTF-8 argument?)"
    else:
        problem = detail
    return StoreError(path, problem)


_FAILURES = (sqlite3.Error, UnicodeEncodeError)
"""What the database layer raises: SQLite's own errors, and a string it cannot encode."""


class _Rows:
    """A cursor whose failures (rows are read lazily: a damaged page shows up while
    iterating) are ``StoreError``s."""

    def __init__(self, cursor: sqlite3.Cursor, path: str) -> None:
        self._cursor = cursor
        self._path = path

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except _FAILURES as exc:
            raise store_error(self._path, exc) from None

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except _FAILURES as exc:
            raise store_error(self._path, exc) from None

    def __iter__(self) -> Iterator[Any]:
        while True:
            try:
                row = next(self._cursor)
            except StopIteration:
                return
            except _FAILURES as exc:
                raise store_error(self._path, exc) from None
            yield row


class _Database:
    """The store's connection: every SQLite failure comes out as one ``StoreError``
    (disk full, damaged, busy: ``store_error``), never as ``sqlite3.*``."""

    def __init__(self, db: sqlite3.Connection, path: str) -> None:
        self.raw = db
        self._path = path

    def execute(self, sql: str, values: Any = ()) -> _Rows:
        try:
            return _Rows(self.raw.execute(sql, values), self._path)
        except _FAILURES as exc:
            raise store_error(self._path, exc) from None

    def executemany(self, sql: str, values: Iterable[Any]) -> _Rows:
        try:
            return _Rows(self.raw.executemany(sql, values), self._path)
        except _FAILURES as exc:
            raise store_error(self._path, exc) from None

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def close(self) -> None:
        self.raw.close()


def write_records(db: _Database, session: int, records: list[Message]) -> int:
    """Upsert ``records`` of ``session`` and write the search rows of those new (ADR
    0065); the rows inserted or changed. A parse hands a record out again among later
    ones (its usage restated): the seqs are not in order."""
    if not records:
        return 0
    written = db.executemany(_UPSERT, [_row(session, m) for m in records]).rowcount
    seqs = [m.seq for m in records]
    db.execute(_SEARCH_WRITTEN, (session, min(seqs), max(seqs)))
    return max(written, 0)


class Ingest:
    """One file's ingest, inside one transaction (``SessionStore.ingest``): records and
    cursor are written together or not at all."""

    def __init__(self, db: _Database, path: str, session: int, cursor: FileCursor | None) -> None:
        self._db = db
        self._path = path
        self.session = session
        self.cursor = cursor
        """The file's cursor as stored when the transaction began (``None``: never read)."""
        self.written = 0
        self._title = ""
        self._span = Span()
        self._fresh = False

    def start_over(self) -> None:
        """The records that follow are the file's whole parse from seq 1: what they do not
        rewrite is removed at ``finish``; title and times are recomputed."""
        self._fresh = True

    def write(self, records: list[Message]) -> None:
        """Records new or changed since the last ingest (``seq`` decides which is which)."""
        if not records:
            return
        for message in records:
            if message.seq > MAX_SEQ or message.seq < 1:
                raise StoreError(self._path, f"record seq {message.seq} out of range")
            if not self._title:
                self._title = prompt_title(message)
            self._span.see(message.seq, message.timestamp)
        self.written += write_records(self._db, self.session, records)

    def finish(self, *, count: int, facts: TranscriptFacts, cursor: FileCursor) -> None:
        """Record the session's facts and the file's new cursor. ``count``: the records the
        file's parse holds in all (``seq`` 1…count)."""
        db = self._db
        # The file's records are all here now: what a usage-first index kept of it goes.
        db.execute("DELETE FROM usage_first WHERE session = ?", (self.session,))
        db.execute("DELETE FROM pending WHERE session = ?", (self.session,))
        if self._fresh:
            gone = db.execute(
                "DELETE FROM records WHERE session = ? AND seq > ?", (self.session, count)
            )
            self.written += max(gone.rowcount, 0)
        first, last = self._span.stamps()
        started, updated = epoch_of(first), epoch_of(last)
        last_seq = self._span.last[0] if self._span.last else 0
        if facts.title:  # the CLI's own title of the session wins over its first prompt
            self._title = " ".join(facts.title.split())[:TITLE_CHARS]
        if self._fresh:
            db.execute(
                "UPDATE sessions SET title = ?, started = ?, updated = ? WHERE id = ?",
                (self._title, started, updated, self.session),
            )
        else:
            # Appended records come after those stored (``records`` of them): the last
            # one with a time is the session's last; a record handed out again (its
            # usage restated) keeps its place, and the span its time had.
            db.execute(
                "UPDATE sessions SET title = CASE WHEN title = '' OR ? THEN ? ELSE title END, "
                "started = CASE WHEN started = 0 THEN ? ELSE started END, "
                "updated = CASE WHEN ? > records THEN ? ELSE updated END WHERE id = ?",
                (bool(facts.title), self._title, started, last_seq, updated, self.session),
            )
        db.execute(
            "UPDATE sessions SET session_id = ?, agent_id = ?, parent_session_id = ?, "
            "cwd = CASE WHEN ? = '' THEN cwd ELSE ? END, cli_version = CASE WHEN ? = '' "
            "THEN cli_version ELSE ? END, records = ?, gone = 0 WHERE id = ?",
            (
                facts.session_id,
                facts.agent_id,
                facts.parent_session_id,
                facts.cwd,
                facts.cwd,
                facts.cli_version,
                facts.cli_version,
                count,
                self.session,
            ),
        )
        db.execute(
            'INSERT OR REPLACE INTO cursors (session, device, inode, size, mtime_ns, "offset", '
            "fingerprint, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.session,
                cursor.device,
                cursor.inode,
                cursor.size,
                cursor.mtime_ns,
                cursor.offset,
                cursor.fingerprint,
                cursor.state,
            ),
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _private_file(path: str) -> str:
    """Create ``path`` 0600 if missing; tighten this user's store (and its WAL and
    shared-memory files) that group or others could read; refuse one that is not a
    regular file of this user. Returns what was tightened (``""``: nothing)."""
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    tightened = ""
    for name in (path, path + "-wal", path + "-shm"):
        try:
            fd = os.open(name, flags if name == path else flags & ~os.O_CREAT, 0o600)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(path, f"{name} cannot be opened: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise StoreError(path, f"{name} is not a regular file; refused")
            if st.st_uid != os.getuid():
                raise StoreError(
                    path, f"{name} is owned by uid {st.st_uid}, not {os.getuid()}; refused"
                )
            if st.st_mode & 0o077:
                os.fchmod(fd, 0o600)  # every conversation is in it
                if name == path:
                    tightened = f"mode {stat.S_IMODE(st.st_mode):o}"
        finally:
            os.close(fd)
    return tightened
