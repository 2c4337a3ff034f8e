"""``SessionStore``: exact round trips (every real capture, edge values, properties),
idempotent re-saves, the schema guard."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentspool.adapters import registry
from agentspool.adapters._fake_kit import Kit as FakeKit
from agentspool.adapters.fake import ScriptedAdapter
from agentspool.core import store as store_module
from agentspool.core import store_rows, store_schema
from agentspool.core.detail import assemble_session_detail
from agentspool.core.seam import Message, TranscriptFacts, Usage
from agentspool.core.store import SessionStore
from agentspool.errors import AgentspoolError, StoreError

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"


def real_captures() -> list[tuple[str, Path]]:
    found = [("claude-code", p) for p in sorted(CAPTURES.glob("claude-code/*/transcript/*.jsonl"))]
    found += [("codex", p) for p in sorted(CAPTURES.glob("codex/*/rollout-*.jsonl"))]
    return found


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with SessionStore(str(tmp_path / "store.sqlite")) as opened:
        yield opened


def test_there_is_a_column_for_every_message_field_in_order() -> None:
    assert tuple(name for name, _ in store_schema._COLUMNS) == Message.__struct_fields__


def test_every_real_capture_round_trips_exactly_through_one_database(tmp_path: Path) -> None:
    database = str(tmp_path / "all.sqlite")
    saved: dict[str, list[Message]] = {}
    with SessionStore(database) as store:
        for name, path in real_captures():
            chat = registry.load(name).read_chat("run-1", "", str(path))
            assert chat.transcript_id
            saved[chat.transcript_id] = chat.messages
            assert store.load(store.save(chat.transcript_id, chat.messages)) == chat.messages
    assert len(saved) == len(real_captures()), "every capture is its own transcript identity"
    with SessionStore(database) as reopened:  # a new connection reads what was committed
        assert reopened.transcript_ids() == sorted(saved)
        for tid, messages in saved.items():
            loaded = reopened.load(tid)
            assert loaded == messages
            for include_inactive in (False, True):
                assert assemble_session_detail(
                    loaded, include_inactive=include_inactive
                ) == assemble_session_detail(messages, include_inactive=include_inactive)


def test_edge_values_survive_exactly(store: SessionStore) -> None:
    messages = [
        Message(seq=1, id="a", kind="text", role="user"),  # every default
        Message(
            seq=2,
            id="b",
            kind="tool_call",
            role="assistant",
            text="zero\x00byte, emoji 🧪, quote \" and 'apostrophe', newline\n",
            tool_input={},
            usage=Usage(),
            is_meta=True,
            is_error=True,
            visibility="inactive",
        ),
        Message(
            seq=7,  # seqs need not be contiguous for the store, only increasing
            id="c",
            kind="tool_result",
            role="tool",
            tool_input={
                "big": 2**80,
                "neg": -1,
                "float": 1.5,
                "whole_float": 2.0,
                "none": None,
                "nested": [{"a": [True, False, None, "ü"]}, []],
                "": "empty key",
            },
            usage=Usage(input_tokens=1, output_tokens=2, cached_input_tokens=3, reasoning_tokens=4),
            visibility="hidden",
            message_id="msg",
            agent_id="agent",
            parent_id="parent",
            presentation="shell",
            tool_name="Bash",
            tool_use_id="t",
            timestamp="2026-11-30T00:06:37.280Z",
        ),
    ]
    loaded = store.load(store.save("t", messages))
    assert loaded == messages
    assert loaded[0].tool_input is None and loaded[0].usage is None
    assert loaded[1].tool_input == {} and loaded[1].usage == Usage()
    assert type(loaded[2].tool_input and loaded[2].tool_input["whole_float"]) is float
    assert (loaded[1].is_meta, loaded[1].is_error) == (True, True)


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_messages = st.lists(
    st.builds(
        Message,
        id=st.text(),
        kind=st.sampled_from(["text", "tool_call", "tool_result", "summary", "subagent"]),
        role=st.sampled_from(["user", "assistant", "system", "tool"]),
        text=st.text(),
        visibility=st.sampled_from(["visible", "inactive", "hidden"]),
        is_meta=st.booleans(),
        tool_input=st.none() | st.dictionaries(st.text(), _json, max_size=4),
        is_error=st.booleans(),
        agent_id=st.sampled_from(["", "a1"]),
        usage=st.none()
        | st.builds(Usage, **{f: st.integers(0, 2**40) for f in Usage.__struct_fields__}),
        message_id=st.sampled_from(["", "m1", "m2"]),
        tool_use_id=st.sampled_from(["", "t1", "t2"]),
    ),
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(_messages)
def test_any_canonical_stream_round_trips_and_assembles_the_same(
    messages: list[Message],
) -> None:
    for seq, message in enumerate(messages, 1):
        message.seq = seq
    with SessionStore(":memory:") as memory:
        loaded = memory.load(memory.save("t", messages))
    assert loaded == messages
    assert assemble_session_detail(loaded, include_inactive=True) == assemble_session_detail(
        messages, include_inactive=True
    )


def test_saving_the_same_records_again_writes_nothing(store: SessionStore) -> None:
    messages = _fake_stream(Path(store.path).parent, turns=2)
    store.save("t", messages)
    before = store.changes
    store.save("t", messages)
    store.save("t", list(messages))
    assert store.changes == before
    assert store.load("t") == messages


def test_a_grown_parse_writes_only_its_new_and_changed_rows(
    store: SessionStore, tmp_path: Path
) -> None:
    kit, path = FakeKit(), str(tmp_path / "t")
    os.makedirs(path)
    transcript = kit.transcript(path, 1)
    first = ScriptedAdapter().read_chat("r", "", transcript).messages
    store.save("t", first)
    kit.append_turn(transcript)
    grown = ScriptedAdapter().read_chat("r", "", transcript).messages
    grown[0].text = "edited"
    before = store.changes
    store.save("t", grown)
    assert store.changes - before == len(grown) - len(first) + 1
    assert store.load("t") == grown


def test_a_shorter_parse_replaces_the_stored_records(store: SessionStore) -> None:
    messages = _fake_stream(Path(store.path).parent, turns=2)
    store.save("t", messages)
    store.save("t", messages[:3])
    assert store.load("t") == messages[:3]
    store.save("t", [])
    assert store.load("t") == []


def test_identities_are_kept_apart(store: SessionStore) -> None:
    a = [Message(seq=1, id="a", kind="text", role="user", text="first identity")]
    b = [Message(seq=1, id="b", kind="text", role="user", text="after /clear")]
    store.save("one", a)
    store.save("two", b)
    assert (store.load("one"), store.load("two"), store.load("unknown")) == (a, b, [])
    assert store.transcript_ids() == ["one", "two"]


@pytest.mark.parametrize("seqs", [[1, 1], [2, 1]])
def test_records_out_of_order_are_refused(store: SessionStore, seqs: list[int]) -> None:
    records = [Message(seq=s, id=str(i), kind="text", role="user") for i, s in enumerate(seqs)]
    with pytest.raises(StoreError) as info:
        store.save("t", records)
    assert isinstance(info.value, AgentspoolError)
    assert store.load("t") == []


def test_the_database_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "private.sqlite"
    with SessionStore(str(path)) as store:
        store.save("t", [Message(seq=1, id="a", kind="text", role="user")])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [
            (store_module.SCHEMA_VERSION,)
        ]
    finally:
        raw.close()


def test_a_store_written_by_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "newer.sqlite")
    SessionStore(path).close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE schema_version SET version = ?", (store_module.SCHEMA_VERSION + 1,))
    raw.close()
    with pytest.raises(StoreError, match="schema version"):
        SessionStore(path)


def test_a_version_1_store_is_migrated_in_place_and_keeps_its_records(tmp_path: Path) -> None:
    # The layout of agentspool 0.1 (schema 1): every column but ``model``.
    path = tmp_path / "v1.sqlite"
    columns = [(name, kind) for name, kind in store_schema._COLUMNS if name != "model"]
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        raw.execute("INSERT INTO schema_version VALUES (1)")
        raw.execute(
            "CREATE TABLE records (transcript_id TEXT NOT NULL, "
            + ", ".join(f'"{name}" {kind}' for name, kind in columns)
            + ", PRIMARY KEY (transcript_id, seq)) WITHOUT ROWID"
        )
        raw.execute(
            f"INSERT INTO records VALUES ('t', {', '.join('?' for _ in columns)})",
            (
                1,
                "a",
                "text",
                "assistant",
                "hi",
                "",
                "visible",
                0,
                "",
                "",
                None,
                "",
                0,
                "",
                "",
                '{"input_tokens":5,"output_tokens":1,"cached_input_tokens":2,"reasoning_tokens":0}',
                "m1",
            ),
        )
    raw.close()
    with SessionStore(str(path)) as store:
        (message,) = store.load("t")
        assert message.text == "hi" and message.model == ""
        assert message.usage == Usage(input_tokens=5, output_tokens=1, cached_input_tokens=2)
        store.save("t", [msgspec.structs.replace(message, model="claude-x")])
        assert store.load("t")[0].model == "claude-x"
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [
            (store_module.SCHEMA_VERSION,)
        ]
    finally:
        raw.close()


def _fake_stream(directory: Path, turns: int) -> list[Message]:
    transcript = FakeKit().transcript(str(directory), turns)
    return ScriptedAdapter().read_chat("r", "", transcript).messages


def test_a_version_2_store_is_migrated_in_place_keeps_its_records_and_searches_them(
    tmp_path: Path,
) -> None:
    # The layout of schema 2: records keyed by the transcript id, nothing else.
    path = tmp_path / "v2.sqlite"
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        raw.execute("INSERT INTO schema_version VALUES (2)")
        raw.execute(
            "CREATE TABLE records (transcript_id TEXT NOT NULL, "
            + ", ".join(f'"{name}" {kind}' for name, kind in store_schema._V3_COLUMNS)
            + ", PRIMARY KEY (transcript_id, seq)) WITHOUT ROWID"
        )
    raw.close()
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    messages = {tid: _fake_stream(tmp_path / tid, turns=2) for tid in ("first", "second")}
    # Written as version 2 wrote them: the same values, keyed by transcript id.
    raw = sqlite3.connect(path)
    with raw:
        for tid, records in messages.items():
            raw.executemany(
                f"INSERT INTO records VALUES (?, {', '.join('?' for _ in store_schema._COLUMNS)})",
                [(tid, *store_rows._row(0, m)[1:]) for m in records],
            )
    raw.close()
    with SessionStore(str(path)) as store:
        assert store.transcript_ids() == ["first", "second"]
        assert {tid: store.load(tid) for tid in messages} == messages
        (first,) = store.find_sessions("first")
        assert (first.key, first.records, first.provider) == ("first", len(messages["first"]), "")
        hits = store.search("hello")
        assert {h.session.key for h in hits} == {"first", "second"}
        assert store.sessions() and store.session(first.id) == first
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [
            (store_module.SCHEMA_VERSION,)
        ]
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
        assert "records_v2" not in tables and {"sessions", "cursors", "search"} <= tables
    finally:
        raw.close()


def _search_rows(path: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The search rows as stored, and as the records say they should be (ADR 0065)."""
    with sqlite3.connect(path) as raw:
        stored = raw.execute("SELECT rowid, body FROM search ORDER BY rowid").fetchall()
        wanted = raw.execute(
            f"SELECT (r.session << 32) | r.seq, {store_schema._search_body('r')} "
            f"FROM records r WHERE {store_schema._searched('r')} ORDER BY 1"
        ).fetchall()
    return stored, wanted


def _said(seq: int, text: str, **more: Any) -> Message:
    return Message(seq=seq, id=f"m{seq}", kind="text", role="assistant", text=text, **more)


def test_the_search_rows_are_what_the_records_say_however_they_were_written(
    store: SessionStore,
) -> None:
    """Search rows are written after each block of records, not by a trigger row by row
    (ADR 0065): new records get theirs, a changed one has its row replaced, a removed or
    hidden one has none, and a record handed out again among later ones (its usage
    restated: the block's seqs out of order) is not searched twice."""
    store.save("t", [_said(1, "alpha"), _said(2, "bravo"), _said(3, "charlie")])
    stored, wanted = _search_rows(store.path)
    assert stored == wanted and len(stored) == 3
    store.save(
        "t", [_said(1, "alpha"), _said(2, "bravo edited"), _said(3, "x", visibility="hidden")]
    )
    stored, wanted = _search_rows(store.path)
    assert stored == wanted and len(stored) == 2
    assert [h.seq for h in store.search("edited")] == [2] and not store.search("charlie")
    store.save("t", [_said(1, "alpha")])
    stored, wanted = _search_rows(store.path)
    assert stored == wanted and len(stored) == 1
    cursor = store_rows.FileCursor(
        device=1, inode=1, size=1, mtime_ns=1, offset=1, fingerprint=b"", state=b""
    )
    with store.ingest("/f.jsonl", "claude-code") as ingest:
        ingest.write([_said(1, "delta"), _said(2, "echo")])
        # The next block: new records, then the first again with its usage restated.
        ingest.write([_said(3, "foxtrot"), _said(1, "delta", usage=Usage(output_tokens=2))])
        ingest.finish(count=3, facts=TranscriptFacts(), cursor=cursor)
    stored, wanted = _search_rows(store.path)
    assert stored == wanted and len(stored) == 4
    assert [h.seq for h in store.search("delta")] == [1]


def test_a_version_6_store_searches_as_before_without_its_insert_trigger(tmp_path: Path) -> None:
    """Version 6 wrote a record's search row by trigger; version 7 drops the trigger (ADR
    0065) and keeps the rows: a record written after the migration is searched once."""
    path = str(tmp_path / "v6.sqlite")
    with SessionStore(path) as store:
        store.save("t", [_said(1, "alpha")])
    with sqlite3.connect(path) as raw:  # the trigger as version 6 had it
        raw.execute(next(e for e in store_schema._V3_RECORD_EXTRAS if "searched_insert" in e))
        raw.execute("UPDATE schema_version SET version = 6")
    with SessionStore(path) as store:
        store.save("t", [_said(1, "alpha"), _said(2, "bravo")])
        assert [h.seq for h in store.search("alpha")] == [1]
        assert [h.seq for h in store.search("bravo")] == [2]
    stored, wanted = _search_rows(path)
    assert stored == wanted and len(stored) == 2
    with sqlite3.connect(path) as raw:
        triggers = {
            n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        assert triggers == {"records_searched_delete", "records_searched_update"}
        assert raw.execute("SELECT version FROM schema_version").fetchone() == (
            store_module.SCHEMA_VERSION,
        )


def test_usage_records_come_from_the_usage_index(store: SessionStore, tmp_path: Path) -> None:
    messages = _fake_stream(tmp_path, turns=2)
    store.save("t", messages)
    store.save("u", [Message(seq=1, id="x", kind="text", role="user", text="no usage")])
    with_usage = [m for m in messages if m.usage is not None]
    (session,) = store.find_sessions("t")
    found = list(store.usage_records())
    assert [(u.session, u.seq, u.message_id, u.usage) for u in found] == [
        (session.id, m.seq, m.message_id, m.usage) for m in with_usage
    ]
    assert list(store.usage_records([session.id + 1])) == []
    plan = store._db.execute(
        "EXPLAIN QUERY PLAN SELECT session, seq, timestamp, model, message_id, usage "
        "FROM records INDEXED BY records_with_usage WHERE usage IS NOT NULL"
    ).fetchall()
    assert any("COVERING INDEX records_with_usage" in str(row) for row in plan)


def test_find_sessions_by_path_prefix_and_session_id_prefix(store: SessionStore) -> None:
    from agentspool.core.seam import TranscriptFacts
    from agentspool.core.store import FileCursor

    cursor = FileCursor(device=1, inode=1, size=0, mtime_ns=0, offset=0, fingerprint=b"", state=b"")
    for path, facts in (
        ("/p/a/main.jsonl", TranscriptFacts(session_id="abc-1")),
        ("/p/a/main/subagents/agent-x.jsonl", TranscriptFacts(session_id="abc-1", agent_id="x")),
        ("/p/b_c.jsonl", TranscriptFacts(session_id="zzz")),
    ):
        with store.ingest(path, "prov") as ingest:
            ingest.finish(count=0, facts=facts, cursor=cursor)
    assert [s.path for s in store.find_sessions("abc")] == [
        "/p/a/main.jsonl",
        "/p/a/main/subagents/agent-x.jsonl",
    ]
    assert [s.path for s in store.find_sessions("/p/a/")] == [
        "/p/a/main.jsonl",
        "/p/a/main/subagents/agent-x.jsonl",
    ]
    assert [s.path for s in store.find_sessions("/p/b_")] == ["/p/b_c.jsonl"]
    assert store.find_sessions("/p/b%") == store.find_sessions("") == []
    assert [s.session_id for s in store.sessions(include_subagents=False)] == ["abc-1", "zzz"]
    assert store.sessions(provider="other") == []


def test_a_remembered_result_stands_until_the_store_changes_and_then_is_dropped(store) -> None:
    store.remember("a", b"first")
    assert store.remembered("a") == b"first"
    store.save("t1", [])  # a write: the generation moves on
    assert store.remembered("a") is None
    store.remember("b", b"second")  # the stale one can never stand again: gone
    rows = store._db.execute("SELECT key FROM remembered").fetchall()
    assert [key for (key,) in rows] == ["b"]
