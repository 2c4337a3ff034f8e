"""OpenCode's sessions in the history index and ``agentspool usage``: a transcript kept in
a database shared by every session (``TranscriptFile.within``) is indexed by the
database's stat, read whole when it changed, and gone once OpenCode lists it no more."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.opencode import OpenCode, _store
from agentspool.adapters.opencode._kit import SESSION, Kit
from agentspool.core.history import index_history
from agentspool.core.store import SessionStore


@pytest.fixture
def kit_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Kit, str]:
    """A kit session of one turn in the store OpenCode uses here ($XDG_DATA_HOME)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    kit = Kit()
    return kit, kit.transcript(str(tmp_path / "xdg"), 1)


def test_sessions_in_the_database_are_indexed_and_re_read_when_it_changes(
    kit_store: tuple[Kit, str], tmp_path: Path
) -> None:
    kit, path = kit_store
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        first = index_history(store, [OpenCode()])
        assert (first.files, first.new, first.failed) == (1, 1, 0), first
        (session,) = [s for s in store.sessions() if s.provider == "opencode"]
        assert (session.path, session.session_id) == (path, SESSION)
        again = index_history(store, [OpenCode()])
        assert (again.unchanged, again.new, again.rewritten) == (1, 0, 0), again
        kit.append_turn(path)
        grown = index_history(store, [OpenCode()])
        assert grown.rewritten == 1 and grown.records > 0, grown


def test_a_session_deleted_from_the_database_is_gone_but_kept(
    kit_store: tuple[Kit, str], tmp_path: Path
) -> None:
    _, path = kit_store
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        index_history(store, [OpenCode()])
        with closing(sqlite3.connect(_store.split(path)[0])) as conn, conn:
            conn.execute("DELETE FROM session WHERE id = ?", (SESSION,))
        report = index_history(store, [OpenCode()])
        assert report.gone == 1, report
        (session,) = store.sessions()
        assert session.gone


def test_usage_counts_opencode_sessions(kit_store: tuple[Kit, str], tmp_path: Path) -> None:
    """The kit's turn has two steps of the mock's usage (120 prompt tokens, 64 of them
    read from the cache; 12 output)."""
    _, path = kit_store
    report = agentspool.usage(
        by="session", providers=["opencode"], store=str(tmp_path / "history.sqlite")
    )
    (row,) = report.rows
    assert (row.key, row.provider, row.path) == (SESSION, "opencode", path)
    assert row.models == ["mock-model"]
    assert (row.input_tokens, row.cache_read_tokens, row.output_tokens) == (112, 128, 24)
    assert OpenCode().read_chat("r", "", path).usage.input_tokens == 240
