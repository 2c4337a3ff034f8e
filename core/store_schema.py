"""The history store's layout: its tables, indexes and triggers, the statements built
from its column names, and the migrations from every older version (``core/store.py``
describes what each table holds)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_SEQ", "SCHEMA_VERSION", "SEARCHED_INPUT"]

SCHEMA_VERSION = 7
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
# Version 7 (ADR 0065): a record's search row is not written by a trigger row by row,
# but by ``_SEARCH_WRITTEN`` after each block of records: FTS5 flushed its pending terms
# at every trigger statement, which made search 3.5 s of a whole index's 7.
_V7_DROPPED_TRIGGER = "DROP TRIGGER IF EXISTS records_searched_insert"
_RECORD_EXTRAS = tuple(e for e in _V3_RECORD_EXTRAS if "records_searched_insert" not in e)
# Version 4 (ADR 0043): what a usage-first index stored of a file whose records are not
# written yet, and the stat the file had, so an unchanged file is not parsed again for
# ``usage``. Its ``usage_first`` held a row per record with usage; version 5 replaces it.
_V4_PENDING: tuple[str, ...] = (
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
_V4_USAGE_FIRST = """CREATE TABLE usage_first (
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        model TEXT NOT NULL,
        message_id TEXT NOT NULL,
        usage TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID"""
# Version 5 (ADR 0057): a file's records with usage as one value, written and read whole
# (a first ``usage`` wrote and read back 36 k rows, one statement each way per row): a
# JSON array of ``[seq, timestamp, model, message_id, usage]`` in ``seq`` order.
_V5_USAGE_FIRST = "CREATE TABLE usage_first (session INTEGER PRIMARY KEY, rows BLOB NOT NULL)"
_SCHEMA: tuple[str, ...] = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    *_V3_TABLES,
    _V3_RECORDS,
    *_RECORD_EXTRAS,
    *_V4_PENDING,
    _V5_USAGE_FIRST,
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
    3: (_V4_USAGE_FIRST, *_V4_PENDING),
    # What a usage-first index kept is read again (the next ``usage`` does it): its files
    # are pending no more, their sessions' facts are read anew.
    4: ("DELETE FROM pending", "DROP TABLE usage_first", _V5_USAGE_FIRST),
    # Version 6 (ADR 0063) writes a usage-first row's usage as an array, which a reader
    # of version 5 cannot decode: the number tells it so. The rows version 5 wrote, usage
    # as an object, read as they are: nothing to change.
    5: (),
    6: (_V7_DROPPED_TRIGGER,),
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
# The search rows of the records a block wrote (``session``, its least and greatest seq):
# those searched that have none. A changed record's row is replaced by the update
# trigger, an unchanged one has its row already.
_SEARCH_WRITTEN = (
    f"INSERT INTO search (rowid, body) SELECT (r.session << 32) | r.seq, {_search_body('r')} "  # noqa: S608
    f"FROM records r WHERE r.session = ? AND r.seq BETWEEN ? AND ? AND {_searched('r')} "
    "AND NOT EXISTS (SELECT 1 FROM search WHERE search.rowid = (r.session << 32) | r.seq)"
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
