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
    contents and command output would drown the conversation). It is written in the
    same transaction as the records: a new record's row after its block of records
    (``store_db.write_records``, ADR 0065), a changed or removed record's by trigger. A
    search row's rowid is ``session << 32 | seq``.

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

Beside this module: ``store_schema`` (the tables, the statements built from the column
names, the migrations), ``store_rows`` (rows as Python values and back), ``store_db``
(the connection, its failures as ``StoreError``, the private file, ``Ingest``: the
writer of one file's parse).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from types import TracebackType

from agentspool.core.runs import TITLE_CHARS
from agentspool.core.seam import Message
from agentspool.core.store_db import (
    Ingest,
    _Database,
    _encodable,
    _private_file,
    store_error,
    write_records,
)
from agentspool.core.store_rows import (
    FileCursor,
    KeptUsage,
    SearchHit,
    StoredSession,
    UsageParse,
    UsageRecord,
    _decode_usage,
    _message,
    _session,
    decode_usage_rows,
    epoch_of,
)
from agentspool.core.store_schema import (
    _MIGRATIONS,
    _SCHEMA,
    _SELECT,
    _SELECT_SESSIONS,
    _SESSION_FIELDS,
    MAX_SEQ,
    SCHEMA_VERSION,
    _quoted,
)
from agentspool.spool.errors import StoreError

__all__ = [
    "SCHEMA_VERSION",
    "FileCursor",
    "Ingest",
    "KeptUsage",
    "SearchHit",
    "SessionStore",
    "StoredSession",
    "UsageParse",
    "UsageRecord",
]


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

    def generation(self) -> int:
        """What the store holds, as a number that every change makes grow."""
        return int(self._db.execute("SELECT n FROM generation").fetchone()[0])

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
            # A result of an older generation can never stand again: the generation only grows.
            self._db.execute(
                "DELETE FROM remembered WHERE generation != (SELECT n FROM generation)"
            )
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
            self._written += write_records(self._db, session, records)
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

    def ingest_usage(self, path: str, provider: str, parsed: UsageParse) -> int:
        """A usage-first index of one file (ADR 0043), in one transaction: its records
        that carry usage (``seq`` as its full parse numbers them) and its session's
        facts; the file stays pending — ``ingest`` of its full parse replaces all of it.
        Returns the file's id in the store (``StoredSession.id``)."""
        with self._transaction():
            session = self._session_id(path, provider, path)
            db = self._db
            db.execute("DELETE FROM cursors WHERE session = ?", (session,))
            db.execute(
                "INSERT OR REPLACE INTO usage_first (session, rows) VALUES (?, ?)",
                (session, parsed.rows),
            )
            self._written += 1
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
        return session

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
    def providers(self) -> set[str]:
        """The providers the store holds a session of."""
        return {row[0] for row in self._db.execute("SELECT DISTINCT provider FROM sessions")}

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
        found = self.usage_by_session(sessions)
        for session in sorted(found):
            for kept in found[session]:
                yield UsageRecord.of(session, kept)

    def usage_by_session(self, sessions: Iterable[int] | None = None) -> dict[int, list[KeptUsage]]:
        """``usage_records`` by session (every session with any), each in ``seq`` order."""
        chosen = None if sessions is None else sorted(set(sessions))
        found: dict[int, list[KeptUsage]] = {}
        batches: list[list[int] | None] = [None]
        if chosen is not None:
            batches = [chosen[i : i + 500] for i in range(0, len(chosen), 500)]
        for batch in batches:
            where, values = "", batch or []
            if batch is not None:
                where = f"AND session IN ({', '.join('?' for _ in batch)})"
            # A file a usage-first index read (ADR 0043) has its usage in ``usage_first``
            # until its records are written; a session is in one table or the other.
            for session, rows in self._db.execute(
                f"SELECT session, rows FROM usage_first WHERE 1 {where}",  # noqa: S608 - marks only
                values,
            ):
                found[session] = decode_usage_rows(rows)
            indexed = self._db.execute(
                "SELECT session, seq, timestamp, model, message_id, usage FROM records "  # noqa: S608
                f"INDEXED BY records_with_usage WHERE usage IS NOT NULL {where} "
                "ORDER BY session, seq",
                values,
            )
            for session, seq, timestamp, model, message_id, usage in indexed:
                kept = found.get(session)
                if kept is None:
                    kept = found[session] = []
                kept.append(KeptUsage(seq, timestamp, model, message_id, _decode_usage(usage)))
        return found

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
