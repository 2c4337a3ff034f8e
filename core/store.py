"""``SessionStore``: canonical records per session, persisted in SQLite, with full-text search.

Sessions (``sessions``)
    One row per session: either a transcript identity a caller saved (``save``; its
    ``key`` is the given transcript id) or a transcript file the history indexer ingested
    (``core/history.py``; its ``key`` is the file's absolute path). A session has an
    integer ``id`` that the other tables refer to, and what the indexer learned of it:
    provider, session id, subagent id and parent session, cwd, title (the first prompt),
    the CLI's version, the epoch seconds of its first and last record, how many records
    it holds, and whether its file is gone. A file that disappears keeps its session and
    records (``gone``): the CLIs delete old transcripts, the history keeps them.

Records (``records``)
    One row per record, keyed by ``(session, seq)``, one column per ``Message`` field
    (``_COLUMNS``; a test keeps it equal to the seam's fields). Scalars are stored as they
    are (booleans as 0/1); the nested values ``tool_input`` and ``usage`` as msgspec JSON
    text, ``NULL`` for ``None``. The round trip is exact: ``store.load(store.save(tid, x))
    == x`` field for field, for every record a parse produces (strings are valid Unicode,
    nested values are JSON-native with finite numbers — which is all a JSON transcript can
    hold; msgspec refuses a number out of range). Writing is an upsert that skips
    unchanged rows, so re-saving the same records, or re-ingesting a rewritten file,
    writes only what changed. A partial index holds the records with usage, so a usage
    report reads them without reading the conversation.

Search (``search``)
    An FTS5 table (``unicode61`` tokens, diacritics folded) over each record that is not
    ``hidden``: its text, and for a tool call its tool's name and the first
    ``SEARCHED_INPUT`` characters of its input's JSON; tool results are not searched (file
    contents and command output would drown the conversation). Triggers keep it in the
    same transaction as the records, whatever writes them. A search row's rowid is
    ``session << 32 | seq``.

Cursors (``cursors``)
    Per ingested file, where the indexer got to: device, inode, size and mtime as last
    seen, the byte offset parsed up to, a fingerprint of the bytes before it, and the
    adapter's opaque parse state (core/history.py).

The database is private to the user (created 0600), in WAL mode (readers do not block
the writer), with a busy timeout for concurrent writers. A ``schema_version`` table
holds the layout's version; an older layout is migrated in place (``_MIGRATIONS``, one
transaction), a store written by a newer layout raises ``StoreError`` instead of being
misread. Query API for the commands built on the history (``usage``, ``show``):
``sessions``, ``session``, ``find_sessions``, ``records``, ``usage_records``, ``search``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from types import TracebackType
from typing import Any

import msgspec

from agentspool.core.runs import TITLE_CHARS, prompt_title
from agentspool.core.seam import Message, TranscriptFacts, Usage
from agentspool.spool.errors import StoreError

__all__ = [
    "SCHEMA_VERSION",
    "FileCursor",
    "Ingest",
    "SearchHit",
    "SessionStore",
    "StoredSession",
    "UsageParse",
    "UsageRecord",
]

SCHEMA_VERSION = 4
SEARCHED_INPUT = 2000
"""Characters of a tool call's input (its JSON) that search sees."""
MAX_SEQ = (1 << 32) - 1
"""A search row's rowid is ``session << 32 | seq``."""

# The record columns of version 3 (the same as version 2's), spelled out: the 2 → 3
# migration must keep building exactly these. A later version adds its columns to
# ``_COLUMNS`` (and a migration), never here.
_V3_COLUMNS: tuple[tuple[str, str], ...] = (
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
_COLUMNS = _V3_COLUMNS
"""Every ``Message`` field, in the seam's order, with its column type."""

_NAMES = tuple(name for name, _ in _COLUMNS)
_DATA = tuple(name for name in _NAMES if name != "seq")
_BOOLS = frozenset({"is_meta", "is_error"})


def _quoted(names: Iterable[str], prefix: str = "") -> str:
    return ", ".join(f'{prefix}"{name}"' for name in names)


def _search_body(row: str) -> str:
    return (
        f"CASE WHEN {row}.kind = 'tool_call' THEN {row}.tool_name || ' ' || "
        f"substr(coalesce({row}.tool_input, ''), 1, {SEARCHED_INPUT}) ELSE {row}.text END"
    )


def _searched(row: str) -> str:
    return f"{row}.visibility != 'hidden' AND {row}.kind != 'tool_result'"


_V3_RECORDS = (
    "CREATE TABLE records (session INTEGER NOT NULL, "
    + ", ".join(f'"{name}" {kind}' for name, kind in _V3_COLUMNS)
    + ", PRIMARY KEY (session, seq)) WITHOUT ROWID"
)
_V3_TABLES: tuple[str, ...] = (
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        provider TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL DEFAULT '',
        agent_id TEXT NOT NULL DEFAULT '',
        parent_session_id TEXT NOT NULL DEFAULT '',
        cwd TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        cli_version TEXT NOT NULL DEFAULT '',
        started REAL NOT NULL DEFAULT 0,
        updated REAL NOT NULL DEFAULT 0,
        records INTEGER NOT NULL DEFAULT 0,
        gone INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX sessions_by_session_id ON sessions (session_id)",
    "CREATE INDEX sessions_by_updated ON sessions (updated)",
    """CREATE TABLE cursors (
        session INTEGER PRIMARY KEY,
        device INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        "offset" INTEGER NOT NULL,
        fingerprint BLOB NOT NULL,
        state BLOB NOT NULL
    )""",
)
_V3_RECORD_EXTRAS: tuple[str, ...] = (
    "CREATE INDEX records_with_usage ON records (session, seq, timestamp, model, message_id, "
    "usage) WHERE usage IS NOT NULL",
    "CREATE VIRTUAL TABLE search USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2')",
    f"""CREATE TRIGGER records_searched_insert AFTER INSERT ON records
        WHEN {_searched("new")} BEGIN
        INSERT INTO search (rowid, body)
            VALUES ((new.session << 32) | new.seq, {_search_body("new")});
    END""",  # noqa: S608
    """CREATE TRIGGER records_searched_delete AFTER DELETE ON records BEGIN
        DELETE FROM search WHERE rowid = (old.session << 32) | old.seq;
    END""",
    f"""CREATE TRIGGER records_searched_update AFTER UPDATE ON records BEGIN
        DELETE FROM search WHERE rowid = (old.session << 32) | old.seq;
        INSERT INTO search (rowid, body) SELECT (new.session << 32) | new.seq, {_search_body("new")}
            WHERE {_searched("new")};
    END""",  # noqa: S608
)
# Version 4 (ADR 0043): what a usage-first index stored of a file whose records are not
# written yet — its records that carry usage, with the seq the full parse gives them, and
# the stat the file had, so an unchanged file is not parsed again for ``usage``.
_V4_TABLES: tuple[str, ...] = (
    """CREATE TABLE usage_first (
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        model TEXT NOT NULL,
        message_id TEXT NOT NULL,
        usage TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE pending (
        session INTEGER PRIMARY KEY,
        device INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL
    )""",
    # Bumped by every write transaction: a result computed from the store at one
    # generation (``remembered``) is the result as long as it stands.
    "CREATE TABLE generation (n INTEGER NOT NULL)",
    "INSERT INTO generation (n) VALUES (0)",
    "CREATE TABLE remembered (key TEXT PRIMARY KEY, generation INTEGER NOT NULL, "
    "value BLOB NOT NULL)",
)
_SCHEMA: tuple[str, ...] = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    *_V3_TABLES,
    _V3_RECORDS,
    *_V3_RECORD_EXTRAS,
    *_V4_TABLES,
)

# The columns of version 2 (and 1 once migrated): what the 2 → 3 migration copies.
_V2_NAMES = tuple(name for name, _ in _V3_COLUMNS)

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # version n → the statements that take a store from n to n + 1, each run once, in
    # one transaction with the version bump.
    1: ("ALTER TABLE records ADD COLUMN \"model\" TEXT NOT NULL DEFAULT ''",),
    # Records keyed by an integer session (a row in ``sessions``) instead of the
    # transcript id; sessions, cursors and search added.
    2: (
        "ALTER TABLE records RENAME TO records_v2",
        *_V3_TABLES,
        "INSERT INTO sessions (key) SELECT DISTINCT transcript_id FROM records_v2",
        _V3_RECORDS,
        *_V3_RECORD_EXTRAS,
        f"INSERT INTO records (session, {_quoted(_V2_NAMES)}) "  # noqa: S608
        f"SELECT sessions.id, {_quoted(_V2_NAMES, 'records_v2.')} FROM records_v2 "
        "JOIN sessions ON sessions.key = records_v2.transcript_id",
        "DROP TABLE records_v2",
        "UPDATE sessions SET records = (SELECT count(*) FROM records "
        "WHERE records.session = sessions.id)",
    ),
    3: _V4_TABLES,
}


# Statements are built from the constant column names above; every value is bound.
_UPSERT = (
    f"INSERT INTO records (session, {_quoted(_NAMES)}) "  # noqa: S608
    f"VALUES (?, {', '.join('?' for _ in _NAMES)}) "
    "ON CONFLICT (session, seq) DO UPDATE SET "
    + ", ".join(f'"{name}" = excluded."{name}"' for name in _DATA)
    # An unchanged row is not written: re-saving the same records is a no-op.
    + f" WHERE ({_quoted(_DATA, 'records.')}) IS NOT ({_quoted(_DATA, 'excluded.')})"
)
_SELECT = f"SELECT {_quoted(_NAMES)} FROM records WHERE session = ? ORDER BY seq"  # noqa: S608
_SESSION_FIELDS = (
    "id",
    "key",
    "provider",
    "session_id",
    "path",
    "agent_id",
    "parent_session_id",
    "cwd",
    "title",
    "cli_version",
    "started",
    "updated",
    "records",
    "gone",
)
_SELECT_SESSIONS = f"SELECT {_quoted(_SESSION_FIELDS, 'sessions.')} FROM sessions"  # noqa: S608

_encode = msgspec.json.Encoder().encode
_decode_input = msgspec.json.Decoder(dict[str, Any]).decode
_decode_usage = msgspec.json.Decoder(Usage).decode


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
    """Epoch seconds of the first record with a timestamp (0: none has one)."""
    updated: float = 0.0
    """Epoch seconds of the last record with a timestamp."""
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


class UsageParse(msgspec.Struct, kw_only=True):
    """What a usage-first index keeps of one file's full parse (``ingest_usage``)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    """The file as seen before the parse: a later change makes the next run read it."""
    count: int
    """Records the parse holds in all."""
    rows: list[tuple[int, str, str, str, str]]
    """(seq, timestamp, model, message_id, usage as JSON) of each record with usage."""
    facts: TranscriptFacts
    title: str
    """The first prompt's title (``prompt_title``)."""
    first: str
    """The earliest and the latest record timestamp."""
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
        self._first = ""
        self._last = ""
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
            stamp = message.timestamp
            if stamp:
                if not self._first or stamp < self._first:
                    self._first = stamp
                self._last = max(self._last, stamp)
        cursor = self._db.executemany(_UPSERT, [_row(self.session, m) for m in records])
        self.written += max(cursor.rowcount, 0)

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
        started, updated = epoch_of(self._first), epoch_of(self._last)
        if facts.title:  # the CLI's own title of the session wins over its first prompt
            self._title = " ".join(facts.title.split())[:TITLE_CHARS]
        if self._fresh:
            db.execute(
                "UPDATE sessions SET title = ?, started = ?, updated = ? WHERE id = ?",
                (self._title, started, updated, self.session),
            )
        else:
            db.execute(
                "UPDATE sessions SET title = CASE WHEN title = '' OR ? THEN ? ELSE title END, "
                "started = CASE WHEN started = 0 OR (? != 0 AND ? < started) THEN ? "
                "ELSE started END, updated = max(updated, ?) WHERE id = ?",
                (bool(facts.title), self._title, started, started, started, updated, self.session),
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


class SessionStore:
    """Canonical records per session in one SQLite file (``":memory:"`` too).

    One instance per thread (an ``sqlite3`` connection); several processes may share
    the file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.tightened = ""
        """What ``__init__`` tightened (``"mode 644"``) of a store others could read: a
        restored backup, an old umask. The CLI says so in one line."""
        if path != ":memory:":
            self.tightened = _private_file(path)
        self._written = 0
        self._has_generation = False
        try:
            # Transactions are explicit (``_transaction``): DDL is then atomic too.
            raw = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise store_error(path, exc) from None
        self._db = _Database(raw, path)
        try:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            # A big file's ingest is one transaction; the WAL it grows is cut back after.
            self._db.execute("PRAGMA journal_size_limit = 67108864")
            with self._transaction(changes=False):  # a new layout holds nothing kept
                self._open_schema()
        except BaseException:
            raw.close()
            raise

    def _open_schema(self) -> None:
        known = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if known is None:
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            return
        found = self._db.execute("SELECT version FROM schema_version").fetchall()
        if len(found) == 1 and found[0][0] in _MIGRATIONS:
            self._migrate(found[0][0])
        elif found != [(SCHEMA_VERSION,)]:
            versions = ", ".join(str(v) for (v,) in found)
            raise StoreError(
                self.path, f"schema version {versions}; this agentspool reads {SCHEMA_VERSION}"
            )

    @contextmanager
    def _transaction(self, *, changes: bool = True) -> Iterator[None]:
        """One write transaction, taken at once (no lock upgrade that could deadlock).
        ``changes``: it may change what the store holds (the generation moves on)."""
        self._db.execute("BEGIN IMMEDIATE")  # busy past the timeout, read-only, damaged
        try:
            yield
            if changes and self._generation_kept():
                self._db.execute("UPDATE generation SET n = n + 1")
            self._db.execute("COMMIT")
        except BaseException:
            # SQLite has already rolled back after some failures (a full disk): a second
            # rollback would raise "no transaction is active" over the real error.
            if self._db.in_transaction:
                with suppress(sqlite3.Error):
                    self._db.raw.execute("ROLLBACK")
            raise

    def _generation_kept(self) -> bool:
        """Whether the layout has a generation yet (not while a migration builds it)."""
        if not self._has_generation:
            found = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'generation'"
            ).fetchone()
            self._has_generation = found is not None
        return self._has_generation

    def remembered(self, key: str) -> bytes | None:
        """What ``remember`` kept under ``key``, if the store has not changed since."""
        row = self._db.execute(
            "SELECT value FROM remembered WHERE key = ? "
            "AND generation = (SELECT n FROM generation)",
            (key,),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def remember(self, key: str, value: bytes) -> None:
        """Keep ``value``, computed from the store as it is now, under ``key``: a result
        that only the store's contents decide (``usage``'s report)."""
        with self._transaction(changes=False):
            self._db.execute(
                "INSERT OR REPLACE INTO remembered (key, generation, value) "
                "VALUES (?, (SELECT n FROM generation), ?)",
                (key, value),
            )

    def _migrate(self, version: int) -> None:
        """Bring an older layout up to ``SCHEMA_VERSION`` (inside the open transaction:
        a migration that fails leaves the store as it was)."""
        while version < SCHEMA_VERSION:
            for statement in _MIGRATIONS[version]:
                self._db.execute(statement)
            version += 1
        self._db.execute("UPDATE schema_version SET version = ?", (version,))

    def _session_id(self, key: str, provider: str = "", path: str = "") -> int:
        found = self._db.execute("SELECT id FROM sessions WHERE key = ?", (key,)).fetchone()
        if found is not None:
            return int(found[0])
        inserted = self._db.execute(
            "INSERT INTO sessions (key, provider, path) VALUES (?, ?, ?)", (key, provider, path)
        )
        return int(inserted.lastrowid or 0)

    # -- saving a parse ----------------------------------------------------------------
    def save(self, transcript_id: str, messages: Iterable[Message]) -> str:
        """Make the identity's stored records equal ``messages``; return ``transcript_id``
        (so ``store.load(store.save(tid, messages))`` reads back what was saved)."""
        records = list(messages)
        last = 0
        for message in records:
            if message.seq <= last or message.seq > MAX_SEQ:
                raise StoreError(
                    self.path,
                    f"records of {transcript_id!r} must have strictly increasing seq "
                    f"from 1 to {MAX_SEQ} (seq {message.seq} after {last})",
                )
            last = message.seq
        with self._transaction():
            session = self._session_id(transcript_id)
            keep = {m.seq for m in records}
            stored = self._db.execute("SELECT seq FROM records WHERE session = ?", (session,))
            gone = [(session, seq) for (seq,) in stored.fetchall() if seq not in keep]
            if gone:
                deleted = self._db.executemany(
                    "DELETE FROM records WHERE session = ? AND seq = ?", gone
                )
                self._written += deleted.rowcount
            upserted = self._db.executemany(_UPSERT, [_row(session, m) for m in records])
            self._written += max(upserted.rowcount, 0)
            self._db.execute(
                "UPDATE sessions SET records = ? WHERE id = ?", (len(records), session)
            )
        return transcript_id

    def load(self, transcript_id: str) -> list[Message]:
        """The identity's records in ``seq`` order; ``[]`` when none were saved."""
        found = self._db.execute(
            "SELECT id FROM sessions WHERE key = ?", (transcript_id,)
        ).fetchone()
        return [] if found is None else self.records(int(found[0]))

    def transcript_ids(self) -> list[str]:
        """The keys of every session holding records."""
        rows = self._db.execute(
            "SELECT key FROM sessions WHERE EXISTS (SELECT 1 FROM records "
            "WHERE records.session = sessions.id) ORDER BY 1"
        )
        return [key for (key,) in rows]

    @property
    def changes(self) -> int:
        """Record rows written (inserted, updated, deleted) through this store so far."""
        return self._written

    # -- ingesting files (core/history.py) ----------------------------------------------
    def cursors(self, provider: str) -> dict[str, tuple[int, FileCursor, bool]]:
        """Path → (session id, cursor, whether marked gone) of every file of ``provider``
        ingested so far. The cursors come without their parse state (``b""``): the one
        ``ingest`` reads has it."""
        rows = self._db.execute(
            "SELECT sessions.path, sessions.id, sessions.gone, device, inode, size, mtime_ns, "
            '"offset", fingerprint FROM cursors JOIN sessions ON sessions.id = cursors.session '
            "WHERE sessions.provider = ?",
            (provider,),
        )
        return {
            path: (
                session,
                FileCursor(
                    device=device,
                    inode=inode,
                    size=size,
                    mtime_ns=mtime_ns,
                    offset=offset,
                    fingerprint=fingerprint,
                    state=b"",
                ),
                bool(gone),
            )
            for path, session, gone, device, inode, size, mtime_ns, offset, fingerprint in rows
        }

    @contextmanager
    def ingest(self, path: str, provider: str) -> Iterator[Ingest]:
        """One transcript file's ingest, in one write transaction: all of it is committed
        (records, session facts, cursor), or nothing if anything raises."""
        with self._transaction():
            session = self._session_id(path, provider, path)
            row = self._db.execute(
                'SELECT device, inode, size, mtime_ns, "offset", fingerprint, state '
                "FROM cursors WHERE session = ?",
                (session,),
            ).fetchone()
            cursor = None
            if row is not None:
                device, inode, size, mtime_ns, offset, fingerprint, state = row
                cursor = FileCursor(
                    device=device,
                    inode=inode,
                    size=size,
                    mtime_ns=mtime_ns,
                    offset=offset,
                    fingerprint=fingerprint,
                    state=state,
                )
            ingest = Ingest(self._db, self.path, session, cursor)
            yield ingest
            self._written += ingest.written

    def pending(self, provider: str) -> dict[str, tuple[int, tuple[int, int, int, int], bool]]:
        """Path → (session id, the file's device, inode, size and mtime when its usage was
        stored, whether marked gone) of every file of ``provider`` a usage-first index
        read and whose records are not written yet (``ingest_usage``)."""
        rows = self._db.execute(
            "SELECT sessions.path, sessions.id, sessions.gone, device, inode, size, mtime_ns "
            "FROM pending JOIN sessions ON sessions.id = pending.session "
            "WHERE sessions.provider = ?",
            (provider,),
        )
        return {
            path: (session, (device, inode, size, mtime_ns), bool(gone))
            for path, session, gone, device, inode, size, mtime_ns in rows
        }

    def has_pending(self) -> bool:
        """Whether a file's records are still to be written (``ingest_usage``)."""
        return self._db.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is not None

    def ingest_usage(self, path: str, provider: str, parsed: UsageParse) -> None:
        """A usage-first index of one file (ADR 0043), in one transaction: its records
        that carry usage (``seq`` as its full parse numbers them) and its session's
        facts; the file stays pending — ``ingest`` of its full parse replaces all of it."""
        with self._transaction():
            session = self._session_id(path, provider, path)
            db = self._db
            db.execute("DELETE FROM usage_first WHERE session = ?", (session,))
            db.execute("DELETE FROM cursors WHERE session = ?", (session,))
            inserted = db.executemany(
                "INSERT INTO usage_first (session, seq, timestamp, model, message_id, usage) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session, *row) for row in parsed.rows],
            )
            self._written += max(inserted.rowcount, 0)
            facts = parsed.facts
            title = " ".join(facts.title.split())[:TITLE_CHARS] if facts.title else parsed.title
            db.execute(
                "UPDATE sessions SET session_id = ?, agent_id = ?, parent_session_id = ?, "
                "cwd = ?, cli_version = ?, title = ?, started = ?, updated = ?, records = ?, "
                "gone = 0 WHERE id = ?",
                (
                    facts.session_id,
                    facts.agent_id,
                    facts.parent_session_id,
                    facts.cwd,
                    facts.cli_version,
                    title,
                    epoch_of(parsed.first),
                    epoch_of(parsed.last),
                    parsed.count,
                    session,
                ),
            )
            db.execute(
                "INSERT OR REPLACE INTO pending (session, device, inode, size, mtime_ns) "
                "VALUES (?, ?, ?, ?, ?)",
                (session, parsed.device, parsed.inode, parsed.size, parsed.mtime_ns),
            )

    def move(self, session: int, path: str) -> bool:
        """The session's file was renamed to ``path``: it keeps its records and cursor
        under the new name, no longer gone. ``False`` (nothing changed) if another
        session is known by ``path`` already."""
        with self._transaction():
            moved = self._db.execute(
                "UPDATE sessions SET key = ?1, path = ?1, gone = 0 WHERE id = ?2 "
                "AND NOT EXISTS (SELECT 1 FROM sessions WHERE key = ?1)",
                (path, session),
            )
            return moved.rowcount == 1

    def mark_gone(self, sessions: Iterable[int]) -> None:
        """Their files are no longer there: keep the records, say so."""
        with self._transaction():
            self._db.executemany(
                "UPDATE sessions SET gone = 1 WHERE id = ?", [(s,) for s in sessions]
            )

    def forget(self, sessions: Iterable[int]) -> None:
        """Remove the sessions, their records and cursors."""
        with self._transaction():
            for session in sessions:
                for table, column in (
                    ("records", "session"),
                    ("cursors", "session"),
                    ("usage_first", "session"),
                    ("pending", "session"),
                ):
                    self._db.execute(
                        f"DELETE FROM {table} WHERE {column} = ?",  # noqa: S608
                        (session,),
                    )
                self._db.execute("DELETE FROM sessions WHERE id = ?", (session,))

    # -- queries -----------------------------------------------------------------------
    def sessions(
        self,
        provider: str | None = None,
        *,
        since: float | None = None,
        until: float | None = None,
        include_subagents: bool = True,
    ) -> list[StoredSession]:
        """Sessions, most recently updated last: of ``provider`` (every one with
        ``None``), with a record at or after ``since`` and one at or before ``until``
        (epoch seconds) — those the window touches."""
        where: list[str] = ["1"]
        values: list[object] = []
        if provider is not None:
            where.append("provider = ?")
            values.append(provider)
        if since is not None:
            where.append("updated >= ?")
            values.append(since)
        if until is not None:
            where.append("started <= ?")
            values.append(until)
        if not include_subagents:
            where.append("agent_id = ''")
        rows = self._db.execute(
            f"{_SELECT_SESSIONS} WHERE {' AND '.join(where)} ORDER BY updated, id",
            values,
        )
        return [_session(row) for row in rows]

    def session(self, id: int) -> StoredSession | None:
        row = self._db.execute(f"{_SELECT_SESSIONS} WHERE id = ?", (id,)).fetchone()
        return None if row is None else _session(row)

    def find_sessions(self, ref: str) -> list[StoredSession]:
        """Sessions ``ref`` names: its key (a file path, or the transcript id given to
        ``save``), a prefix of a file path (a directory), a session id or a prefix of
        one. Main sessions first, then subagents; each group most recently updated
        first."""
        if not ref or not _encodable(ref):
            return []  # a non-UTF-8 argument: no key or id stored can be it
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._db.execute(
            f"{_SELECT_SESSIONS} WHERE key = ? OR path LIKE ? ESCAPE '\\' "
            "OR session_id LIKE ? ESCAPE '\\' "
            "ORDER BY agent_id != '', updated DESC, id",
            (ref, escaped + "%", escaped + "%"),
        )
        return [_session(row) for row in rows]

    def records(self, session: int) -> list[Message]:
        """A session's records in ``seq`` order: for an indexed file, one complete parse
        (seq 1…n), which ``assemble_session_detail`` takes as it is."""
        return [_message(row) for row in self._db.execute(_SELECT, (session,))]

    def usage_records(self, sessions: Iterable[int] | None = None) -> Iterator[UsageRecord]:
        """Every record carrying usage (of ``sessions``, or of every session), in session
        and ``seq`` order, read from the usage index alone (no conversation text is read).
        Each API message's usage counts once: dedupe by ``(session, message_id)``."""
        chosen = None if sessions is None else list(sessions)
        # A file a usage-first index read (ADR 0043) has its usage in ``usage_first``
        # until its records are written; a session is in one table or the other.
        indexed = (
            "SELECT session, seq, timestamp, model, message_id, usage FROM records "
            "INDEXED BY records_with_usage WHERE usage IS NOT NULL"
        )
        first = "SELECT session, seq, timestamp, model, message_id, usage FROM usage_first"
        batches: list[list[int] | None] = [None]
        if chosen is not None:
            batches = [chosen[i : i + 500] for i in range(0, len(chosen), 500)]
        for batch in batches:
            if batch is None:
                rows = self._db.execute(f"{indexed} UNION ALL {first} ORDER BY session, seq")
            else:
                marks = ", ".join("?" for _ in batch)
                rows = self._db.execute(
                    f"{indexed} AND session IN ({marks}) UNION ALL {first} "
                    f"WHERE session IN ({marks}) ORDER BY session, seq",
                    batch + batch,
                )
            for session, seq, timestamp, model, message_id, usage in rows:
                yield UsageRecord(
                    session=session,
                    seq=seq,
                    timestamp=timestamp,
                    model=model,
                    message_id=message_id,
                    usage=_decode_usage(usage),
                )

    def search(
        self,
        text: str,
        *,
        limit: int = 20,
        provider: str | None = None,
        marks: tuple[str, str] = ("«", "»"),
        words: int = 16,
    ) -> list[SearchHit]:
        """Records whose searched text holds every word of ``text`` (a word ending in
        ``*`` is a prefix), best first (bm25), at most ``limit``. The snippet is about
        ``words`` tokens around the match, the matched words between ``marks``."""
        query = match_query(text)
        if not query or not _encodable(text):
            return []  # indexed text is valid Unicode: a non-UTF-8 word matches nothing
        where = "search MATCH ?"
        values: list[object] = [marks[0], marks[1], words, query]
        if provider is not None:
            where += " AND sessions.provider = ?"
            values.append(provider)
        values.append(limit)
        rows = self._db.execute(
            "SELECT snippet(search, 0, ?, ?, '…', ?), rank, records.seq, records.kind, "  # noqa: S608
            f"records.role, records.timestamp, {_quoted(_SESSION_FIELDS, 'sessions.')} "
            "FROM search JOIN records ON records.session = search.rowid >> 32 "
            "AND records.seq = search.rowid & 4294967295 "
            f"JOIN sessions ON sessions.id = records.session WHERE {where} "
            "ORDER BY rank LIMIT ?",
            values,
        )
        return [
            SearchHit(
                snippet=snippet,
                rank=rank,
                seq=seq,
                kind=kind,
                role=role,
                timestamp=timestamp,
                session=_session(rest),
            )
            for snippet, rank, seq, kind, role, timestamp, *rest in rows
        ]

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


def _session(row: Iterable[Any]) -> StoredSession:
    fields = dict(zip(_SESSION_FIELDS, row, strict=True))
    fields["gone"] = bool(fields["gone"])
    return StoredSession(**fields)


def match_query(text: str) -> str:
    """User words → an FTS5 query that needs them all: each word quoted (so punctuation
    and FTS5 operators in it are plain text), a trailing ``*`` kept as a prefix search."""
    terms = []
    for word in text.split():
        prefix = word.endswith("*") and len(word) > 1
        term = word.rstrip("*") if prefix else word
        if term:
            terms.append('"' + term.replace('"', '""') + '"' + ("*" if prefix else ""))
    return " ".join(terms)
