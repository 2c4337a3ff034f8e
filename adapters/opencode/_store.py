"""OpenCode's SQLite store, read without ever standing in the agent's way.

OpenCode 1.18.33 keeps every session in one SQLite database in WAL mode
(``$XDG_DATA_HOME/opencode/opencode.db``; docs/providers/opencode.md §2). A session's
transcript is named here ``<database path>#<session id>``: one file holds every session,
so the session travels in the name (``split``/``join``).

The session's history is read from the ``event`` table, OpenCode's append-only log of
every change to the session's ``message`` and ``part`` rows (``seq`` 0, 1, 2, … per
session): the follower hands on only the rows past the last ``seq`` it saw, and a message
deleted after ``/undo`` stays in the log (``message.removed.1``), so ``seq`` numbers of
records never move. A session without log rows (none seen in 1.18.33; a store migrated
from an older layout could have them) is read from its ``message``/``part`` rows, whole.

Reading never locks the agent out: the database is opened read-only (``mode=ro``), in
autocommit mode, one connection per read, closed before the read returns. In WAL mode a
reader takes no lock a writer waits on; the read transaction lasts one statement
(``tests/adapters/opencode/test_store.py`` writes and checkpoints throughout reads).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from typing import Any

import msgspec

from agentspool.spool.errors import TranscriptGoneError

SEPARATOR = "#"
BUSY_TIMEOUT = 2.0
"""Seconds a read waits when the database is locked (only a WAL recovery locks readers)."""

OnLines = Callable[[memoryview], None]


def join(database: str, session_id: str) -> str:
    return f"{database}{SEPARATOR}{session_id}"


def split(path: str) -> tuple[str, str]:
    """``(database, session id)``; a path without a session names the database alone."""
    database, sep, session = path.rpartition(SEPARATOR)
    if not sep or not session or "/" in session:
        return path, ""
    return database, session


@contextmanager
def connect(database: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection, in autocommit mode: each statement is its own read
    transaction, over once its rows are fetched. Closed on leaving."""
    from urllib.parse import quote  # here: every command that loads the adapters paid 3 ms

    uri = f"file:{quote(os.path.abspath(database))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    with closing(conn):
        conn.execute("PRAGMA query_only = 1")
        yield conn


def _line(seq: int, kind: str, data: str | bytes) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return b'{"seq":%d,"type":"%s","data":%s}\n' % (seq, kind.encode(), raw)


def _has_log(conn: sqlite3.Connection) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event'"
    ).fetchone()
    return found is not None


def _session_row(conn: sqlite3.Connection, session_id: str) -> tuple[object, ...] | None:
    row: tuple[object, ...] | None = conn.execute(
        "SELECT id, parent_id, directory, title, version, revert, time_created, time_updated"
        " FROM session WHERE id = ?",
        (session_id,),
    ).fetchone()
    return row


class EventLogFollower:
    """Follows one session of the database the way ``JsonlFollower`` follows a file:
    ``read(on_lines, reset)`` hands on what was added since the last call as JSON lines
    ``{"seq", "type", "data"}`` (the log's own rows; for a session without a log, its
    rows as the log would carry them), and calls ``reset`` first when the database was
    replaced or the session's log restarted. ``TranscriptGoneError`` when the database or
    the session no longer exists."""

    def __init__(self, path: str, run_id: str = "") -> None:
        self.path = path
        self.database, self.session_id = split(path)
        self._run_id = run_id
        self._identity: tuple[int, int] | None = None
        self.seq = -1
        """The last log ``seq`` handed on (-1: none)."""
        self._rows_sig: tuple[object, ...] | None = None
        """Without a log: what the rows looked like when last handed on."""

    def _gone(self) -> TranscriptGoneError:
        return TranscriptGoneError(self._run_id, self.path)

    def read(self, on_lines: OnLines, reset: Callable[[], None]) -> None:
        try:
            st = os.stat(self.database)
        except (FileNotFoundError, NotADirectoryError):
            raise self._gone() from None
        identity = (st.st_dev, st.st_ino)
        if identity != self._identity:
            self._identity, self.seq, self._rows_sig = identity, -1, None
            reset()
        if not self.session_id:
            raise self._gone()
        try:
            with connect(self.database) as conn:
                session = _session_row(conn, self.session_id)
                if session is None:
                    raise self._gone()
                if _has_log(conn):
                    lines = self._from_log(conn, reset)
                    if lines is not None:
                        if lines:
                            on_lines(memoryview(lines))
                        return
                lines = self._from_rows(conn, session, reset)
        except sqlite3.DatabaseError as exc:
            if "no such table" in str(exc) or "unable to open" in str(exc):
                raise self._gone() from None
            return  # locked past the timeout, or mid-recovery: the next read catches up
        if lines:
            on_lines(memoryview(lines))

    def _from_log(self, conn: sqlite3.Connection, reset: Callable[[], None]) -> bytes | None:
        """The log rows past ``seq``; ``None`` when the session has no log at all."""
        if self.seq >= 0:
            newest = conn.execute(
                "SELECT max(seq) FROM event WHERE aggregate_id = ?", (self.session_id,)
            ).fetchone()[0]
            if newest is None or newest < self.seq:
                self.seq = -1  # the log restarted (the session was imported again)
                reset()
        rows = conn.execute(
            "SELECT seq, type, data FROM event WHERE aggregate_id = ? AND seq > ? ORDER BY seq",
            (self.session_id, self.seq),
        ).fetchall()
        if not rows:
            return None if self.seq < 0 else b""
        self.seq = rows[-1][0]
        return b"".join(_line(seq, kind, data) for seq, kind, data in rows)

    def _from_rows(
        self, conn: sqlite3.Connection, session: tuple[object, ...], reset: Callable[[], None]
    ) -> bytes:
        """The session's rows as the log would carry them: the session, then each message
        (first as created, its parts, then whole), in the order OpenCode wrote them."""
        sid, parent, directory, title, version, revert, created, updated = session
        messages = conn.execute(
            "SELECT id, time_created, time_updated, data FROM message"
            " WHERE session_id = ? ORDER BY time_created, id",
            (self.session_id,),
        ).fetchall()
        parts = conn.execute(
            "SELECT id, message_id, time_updated, data FROM part"
            " WHERE session_id = ? ORDER BY message_id, id",
            (self.session_id,),
        ).fetchall()
        sig = (updated, len(messages), len(parts), max((p[2] for p in parts), default=0))
        if sig == self._rows_sig:
            return b""
        if self._rows_sig is not None:
            reset()
        self._rows_sig = sig
        return session_lines(
            {
                "id": sid,
                "parentID": parent,
                "directory": directory,
                "title": title,
                "version": version,
                "revert": revert,
                "time": {"created": created, "updated": updated},
            },
            messages,
            parts,
        )


def _object(data: object) -> dict[str, Any]:
    try:
        found = msgspec.json.decode(data if isinstance(data, str | bytes) else b"")
    except msgspec.DecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def session_lines(
    session: dict[str, Any],
    messages: list[tuple[Any, ...]],
    parts: list[tuple[Any, ...]],
) -> bytes:
    """A session's rows as log lines: ``session.updated.1``, then per message
    ``message.updated.1`` as it was created (no completion yet), its parts
    (``message.part.updated.1``, stamped with the row's ``time_updated``), and the
    message whole. The row keeps its id and session in columns; the lines carry them
    inside, as the log does. ``seq`` is -1: these lines have no place in a log."""
    sid = session["id"]
    revert = session.get("revert")
    session = {**session, "revert": _object(revert) if revert else None}
    encode = msgspec.json.encode
    out = [_line(-1, "session.updated.1", encode({"sessionID": sid, "info": session}))]
    by_message: dict[str, list[tuple[Any, ...]]] = {}
    for row in parts:
        by_message.setdefault(row[1], []).append(row)
    for message_id, _created, _updated, data in messages:
        info = {**_object(data), "id": message_id, "sessionID": sid}
        opened = {**info, "time": {"created": (info.get("time") or {}).get("created")}}
        for done in ("finish", "error"):
            opened.pop(done, None)
        out.append(_line(-1, "message.updated.1", encode({"sessionID": sid, "info": opened})))
        for part_id, _, part_updated, part_data in by_message.get(message_id, ()):
            fields = {**_object(part_data), "id": part_id, "messageID": message_id}
            body = {"sessionID": sid, "part": {**fields, "sessionID": sid}, "time": part_updated}
            out.append(_line(-1, "message.part.updated.1", encode(body)))
        out.append(_line(-1, "message.updated.1", encode({"sessionID": sid, "info": info})))
    return b"".join(out)


def session_exists(path: str) -> bool:
    """The database exists and holds the session. A database that cannot be read right
    now (locked past the timeout) is taken to hold it: only its absence is proof."""
    database, session_id = split(path)
    if not session_id or not os.path.isfile(database):
        return False
    try:
        with connect(database) as conn:
            return _session_row(conn, session_id) is not None
    except sqlite3.OperationalError as exc:
        return "no such table" not in str(exc)
    except sqlite3.DatabaseError:
        return False


def sessions_since(database: str, since_ms: int) -> list[tuple[str, str, int]]:
    """``(session id, directory, time_updated)`` of the top-level sessions (no parent)
    updated at or after ``since_ms``, newest first; ``[]`` when the database cannot be
    read."""
    if not os.path.isfile(database):
        return []
    try:
        with connect(database) as conn:
            rows: list[tuple[str, str, int]] = conn.execute(
                "SELECT id, directory, time_updated FROM session"
                " WHERE parent_id IS NULL AND time_updated >= ? ORDER BY time_updated DESC",
                (since_ms,),
            ).fetchall()
            return rows
    except sqlite3.DatabaseError:
        return []


class _ToolState(msgspec.Struct, gc=False):
    status: str = ""
    input: Any = None
    metadata: Any = None


class _ToolPart(msgspec.Struct, gc=False):
    """A tool call's part, as far as the queries below read it."""

    tool: str = ""
    callID: str = ""  # noqa: N815 - OpenCode's own field name
    state: _ToolState | None = None


_tool_part = msgspec.json.Decoder(_ToolPart).decode
_PART_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


def subagents(database: str, session_id: str) -> list[tuple[str, str, str]]:
    """``(session id, spawning call id, title)`` of the subagent sessions ``session_id``
    spawned (``parent_id``), oldest first. The call is the ``task`` tool part whose
    ``state.metadata.sessionId`` names the child (docs/providers/opencode.md §2.8);
    ``""`` when no part does. ``[]`` when the database cannot be read."""
    try:
        with connect(database) as conn:
            children: list[tuple[str, str]] = conn.execute(
                "SELECT id, title FROM session WHERE parent_id = ? ORDER BY time_created, id",
                (session_id,),
            ).fetchall()
            if not children:
                return []
            # LIKE only narrows the rows decoded: the decoded part decides.
            parts = conn.execute(
                "SELECT data FROM part WHERE session_id = ? AND data LIKE '%task%'",
                (session_id,),
            ).fetchall()
    except sqlite3.DatabaseError:
        return []
    spawned_by: dict[str, str] = {}
    for (data,) in parts:
        try:
            part = _tool_part(data)
        except _PART_ERRORS:
            continue
        metadata = part.state.metadata if part.state is not None else None
        child = metadata.get("sessionId") if isinstance(metadata, dict) else None
        if part.tool == "task" and isinstance(child, str) and part.callID:
            spawned_by.setdefault(child, part.callID)
    return [(child, spawned_by.get(child, ""), title or "") for child, title in children]


def open_calls(
    database: str, sessions: Iterable[str], tool: str, needle: str
) -> list[tuple[str, Any]]:
    """``(session id, input)`` of the ``tool`` calls of ``sessions`` not finished yet
    (``pending``/``running``), oldest first, among the parts whose JSON holds
    ``needle``; ``[]`` when the database cannot be read."""
    wanted = sorted(set(sessions))
    if not wanted or not os.path.isfile(database):
        return []
    marks = ", ".join("?" * len(wanted))
    try:
        with connect(database) as conn:
            rows: list[tuple[str, str]] = conn.execute(
                f"SELECT session_id, data FROM part WHERE session_id IN ({marks})"  # noqa: S608
                " AND instr(data, ?) ORDER BY time_created, id",
                (*wanted, needle),
            ).fetchall()
    except sqlite3.DatabaseError:
        return []
    found = []
    for session_id, data in rows:
        try:
            part = _tool_part(data)
        except _PART_ERRORS:
            continue
        state = part.state
        if part.tool == tool and state is not None and state.status in ("pending", "running"):
            found.append((session_id, state.input))
    return found


def versions(database: str) -> dict[str, int]:
    """Session id → a number that grows whenever the session's records or its subagents'
    change: the sum, over the session and every session under it (``parent_id``), of the
    newest ``seq`` of its log (``event_sequence``, one row per session; docs/providers/
    opencode.md §2.3). A session without log rows is left out (``{}``, as when the
    database cannot be read): its rows are the only record of its changes."""
    try:
        with connect(database) as conn:
            parents = dict(conn.execute("SELECT id, parent_id FROM session").fetchall())
            newest = dict(conn.execute("SELECT aggregate_id, seq FROM event_sequence").fetchall())
    except sqlite3.DatabaseError:
        return {}
    found: dict[str, int] = {}
    for logged, seq in newest.items():
        session, depth = logged, 0
        while session in parents and depth < 64:  # up to its top-level session
            # + 1: a log whose newest seq is 0 still versions its session (0: unknown).
            found[session] = found.get(session, 0) + int(seq) + 1
            session, depth = parents[session], depth + 1
    return found
