"""Reading OpenCode's store never stands in the agent's way, and never changes it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentspool.adapters.opencode import OpenCode, _store
from agentspool.adapters.opencode._kit import Kit
from agentspool.errors import TranscriptGoneError

# A writer like OpenCode's, as strict as can be: one connection held open for the whole
# run (OpenCode keeps its database open; the WAL and its index stay), no busy timeout, so
# any lock a reader held would fail its write at once (SQLITE_BUSY) instead of waiting it
# out. It appends turns the way the kit does, checkpoints the WAL after each, and counts
# what failed.
WRITER = """
import sqlite3, sys
sys.path[:0] = sys.argv[3:]
from agentspool.adapters.opencode._kit import Kit
kit = Kit()
kit._ids = iter(range(10_000, 10**9))
path = sys.argv[1]
held = sqlite3.connect(path.rpartition("#")[0], timeout=0)

class Held:
    def __enter__(self):
        return held.__enter__()
    def __exit__(self, *exc):
        return held.__exit__(*exc)
    def __getattr__(self, name):
        return getattr(held, name)
    def close(self):
        pass

sqlite3.connect = lambda *a, **k: Held()
failures = writes = 0
for _ in range(int(sys.argv[2])):
    try:
        for _ in kit.append_turn_in_steps(path):
            writes += 1
        held.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.OperationalError as exc:
        failures += 1
        print(exc, file=sys.stderr)
print(writes, failures)
"""


def _digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_the_agent_keeps_writing_while_the_adapter_reads(tmp_path: Path) -> None:
    path = Kit().transcript(str(tmp_path), 1)
    paths = [p for p in sys.path if p]
    adapter = OpenCode()
    adapter.read_chat("run", "", path)  # the reader is at work before the writer starts
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, path, "40", *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lengths = []
    while writer.poll() is None:
        lengths.append(len(adapter.read_chat("run", "", path).messages))
    out, err = writer.communicate()
    writes, failures = map(int, out.split())
    assert failures == 0, err
    assert writes == 40 * 15
    assert lengths == sorted(lengths)
    final = OpenCode().read_chat("run", "", path)
    assert adapter.read_chat("run", "", path).messages == final.messages


def test_a_read_holds_no_lock_once_it_returns(tmp_path: Path) -> None:
    path = Kit().transcript(str(tmp_path), 2)
    database = _store.split(path)[0]
    adapter = OpenCode()
    adapter.read_chat("run", "", path)
    with sqlite3.connect(database, timeout=0, isolation_level=None) as conn:
        conn.execute("BEGIN EXCLUSIVE")  # fails at once if any reader were still in
        conn.execute("COMMIT")
        # A truncating checkpoint waits for every reader: it completes at once (busy 0).
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0
    assert adapter.read_chat("run", "", path).state == "needs_input"


def test_reading_changes_nothing_in_the_store(tmp_path: Path) -> None:
    path = Kit().transcript(str(tmp_path), 2)
    database = _store.split(path)[0]
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = {
        name: _digest(os.path.join(os.path.dirname(database), name))
        for name in os.listdir(os.path.dirname(database))
        if not name.endswith("-shm")
    }
    for _ in range(3):
        OpenCode().read_chat("run", "", path)
        OpenCode().sessions(0.0)
    after = {
        name: _digest(os.path.join(os.path.dirname(database), name))
        for name in os.listdir(os.path.dirname(database))
        if not name.endswith("-shm")
    }
    assert after == before


def test_the_connection_cannot_write(tmp_path: Path) -> None:
    path = Kit().transcript(str(tmp_path), 1)
    with (
        _store.connect(_store.split(path)[0]) as conn,
        pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"),
    ):
        conn.execute("DELETE FROM message")


def test_a_session_or_store_that_is_gone_raises_transcript_gone(tmp_path: Path) -> None:
    path = Kit().transcript(str(tmp_path), 1)
    database, _ = _store.split(path)
    adapter = OpenCode()
    with pytest.raises(TranscriptGoneError):
        adapter.read_chat("run", "", _store.join(database, "ses_not_there"))
    assert adapter.read_chat("run", "", path).messages
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.unlink(database + suffix)
    with pytest.raises(TranscriptGoneError):
        adapter.read_chat("run", "", path)


def test_sessions_lists_the_store_opencode_uses_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    path = Kit().transcript(str(tmp_path), 1)
    assert _store.split(path)[0] == str(tmp_path / "opencode" / "opencode.db")
    adapter = OpenCode()
    (found,) = adapter.sessions(time.time() - 3600)
    assert (found.transcript_path, found.cwd, found.process) == (path, "/work", "unknown")
    assert adapter.sessions(time.time() + 3600) == []
    chat = adapter.read_session(found)
    assert (chat.state, chat.transcript_id) == ("needs_input", found.session_id)
    monkeypatch.setenv("OPENCODE_DB", "elsewhere.db")
    assert adapter.sessions(0.0) == []
