"""The OpenCode adapter on what the real CLI wrote (tests/live/captures/opencode/): each
capture's store and plugin spool are rebuilt as they stood at a moment of the run, and
``read_chat`` must compose what the CLI showed then."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from harness import opencode_captures as captures

from agentspool.adapters.opencode import OpenCode, _store
from agentspool.core.detail import assemble_session_detail
from agentspool.core.seam import Chat, Session

CAPTURES = {p.name: p for p in captures.capture_dirs()}
PERMISSION = CAPTURES["tui_permission_approve_deny_exit"]
ESC_CLEAR = CAPTURES["tui_esc_while_streaming_then_clear"]
QUESTION = CAPTURES["tui_question_then_undo"]
SUBAGENT = CAPTURES["tui_subagent_task"]


def _sessions(capture: Path) -> list[str]:
    """The capture's sessions, in the order they were created."""
    rows = [
        msgspec.json.decode(line)
        for line in (capture / "rows.jsonl").read_bytes().splitlines()
        if line.strip()
    ]
    found = [r for r in rows if r["table"] == "session"]
    return [r["id"] for r in sorted(found, key=lambda r: r["time_created"])]


def replay(
    capture: Path, tmp_path: Path, until: float = 0.0, *, log: bool = True
) -> tuple[Chat, OpenCode, str, str]:
    """Store and spool as they stood at ``until`` (the end: 0), read live by a fresh
    adapter the way a reader finds them (``locate_transcript``)."""
    database = tmp_path / "data" / "opencode.db"
    captures.build_store(capture, database, log=log, until=until)
    runtime = str(tmp_path / "runtime")
    captures.build_spool(capture, runtime, "run", database=str(database), until=until)
    adapter = OpenCode()
    path = adapter.locate_transcript("run", runtime)
    return adapter.read_chat("run", runtime, path), adapter, runtime, path


def visible(chat: Chat, role: str) -> list[str]:
    return [
        m.text
        for m in chat.messages
        if m.role == role and m.kind == "text" and m.visibility == "visible" and not m.is_meta
    ]


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_every_capture_reads_without_drift(name: str, tmp_path: Path) -> None:
    chat, *_ = replay(CAPTURES[name], tmp_path)
    assert not chat.drift, chat.drift.describe()
    assert chat.drift.cli_version == "1.18.33"
    assert chat.messages and chat.transcript_id.startswith("ses_")


def test_permission_open_is_seen_in_the_spool_alone(tmp_path: Path) -> None:
    """The store shows the call ``running``, nothing more (docs/providers/opencode.md
    §5.2); the plugin's ``permission.asked`` is what opens the wait."""
    (asked, _) = captures.spool_times(PERMISSION, "permission_asked")
    chat, adapter, _, path = replay(PERMISSION, tmp_path, asked + 0.1)
    assert (chat.state, chat.activity) == ("needs_input", "needs_input")
    approval = chat.pending_approval
    assert approval is not None
    assert (approval.tool_name, approval.tool_use_id) == ("bash", "call_approve")
    assert approval.tool_input == {
        "command": "touch approved.txt",
        "description": "Runs touch approved.txt",
    }
    assert chat.evidence[0].source == "plugin:permission.asked"
    # Without the spool the same store reads working: the prompt is not in it.
    store_only = adapter.read_chat("run", "", path)
    assert (store_only.state, store_only.pending_approval) == ("working", None)


def test_approved_then_denied_turns_end_idle(tmp_path: Path) -> None:
    (_, denied) = captures.spool_times(PERMISSION, "permission_asked")
    mid, *_ = replay(PERMISSION, tmp_path / "mid", denied + 0.1)
    assert mid.pending_approval is not None
    assert mid.pending_approval.tool_use_id == "call_deny"
    chat, adapter, _, path = replay(PERMISSION, tmp_path / "end")
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert (chat.pending_approval, chat.pending_dialog) == (None, None)
    calls = [m for m in chat.messages if m.kind == "tool_result"]
    assert [(m.tool_use_id, m.is_error) for m in calls] == [
        ("call_approve", False),
        ("call_deny", True),
    ]
    assert calls[1].text == "The user rejected permission to use this specific tool call."
    # The store alone says the denied turn ended too: OpenCode stops at a rejection.
    store_only = adapter.read_chat("run", "", path)
    assert (store_only.state, store_only.activity) == ("needs_input", "idle")


def test_usage_folds_cache_into_input(tmp_path: Path) -> None:
    """1.18.33 writes ``tokens.input`` without the cache (56 of the mock's 120 prompt
    tokens, 64 read from the cache): folded back, per step, and named after the model."""
    chat, *_ = replay(PERMISSION, tmp_path)
    steps = [m for m in chat.messages if m.usage is not None]
    assert len(steps) == 3  # tool call, answer, denied tool call
    assert all(m.visibility == "hidden" and m.model == "mock-model" for m in steps)
    assert {(m.usage.input_tokens, m.usage.cached_input_tokens) for m in steps if m.usage} == {
        (120, 64)
    }
    assert chat.usage.input_tokens == 360 and chat.usage.output_tokens == 36
    assert chat.usage.cached_input_tokens == 192 and chat.usage.cache_write_tokens == 0


def test_esc_while_streaming_is_an_interrupt_and_clear_follows_the_new_session(
    tmp_path: Path,
) -> None:
    first, second = _sessions(ESC_CLEAR)
    (idle, *_) = captures.spool_times(ESC_CLEAR, "session_idle")
    esc, *_ = replay(ESC_CLEAR, tmp_path / "esc", idle + 0.5)
    assert (esc.state, esc.activity, esc.transcript_id) == ("needs_input", "idle", first)
    shown = [m for m in esc.messages if m.visibility == "visible"]
    assert shown[-1].kind == "interrupt" and shown[-1].text == "Aborted"
    assert visible(esc, "assistant")[0].startswith("word0 word1")

    chat, adapter, runtime, path = replay(ESC_CLEAR, tmp_path / "end")
    assert _store.split(path) == (str(tmp_path / "end" / "data" / "opencode.db"), second)
    assert chat.transcript_id == second
    assert visible(chat, "user") == ["second prompt"]
    assert chat.messages[0].seq == 1
    old = adapter.read_chat("run", runtime, _store.join(_store.split(path)[0], first))
    assert visible(old, "user") == ["write a long answer", "and now briefly"]


def test_question_open_is_durable_in_the_store(tmp_path: Path) -> None:
    """The running ``question`` tool is the form: the store alone shows it open."""
    (asked,) = captures.spool_times(QUESTION, "question_asked")
    chat, adapter, _, path = replay(QUESTION, tmp_path, asked + 0.1)
    for read in (chat, adapter.read_chat("run", "", path)):
        assert (read.state, read.activity) == ("question", "needs_input")
        dialog = read.pending_dialog
        assert dialog is not None and dialog.tool_use_id == "call_question"
        assert dialog.prompt == "Which color do you prefer?"
        assert [o.label for o in dialog.options] == ["Red", "Blue"]


def test_undo_makes_a_turn_inactive_and_its_deletion_keeps_it_so(tmp_path: Path) -> None:
    (reverted,) = [
        e["time"]
        for e in captures._read_jsonl(QUESTION / "spool.jsonl")
        if e["event"] == "session_idle"
    ][:1]
    answered, *_ = replay(QUESTION, tmp_path / "answered", reverted + 0.5)
    shown = {m.id: m.seq for m in answered.messages if m.visibility == "visible"}
    assert shown
    end, *_ = replay(QUESTION, tmp_path / "end")
    ids = {m.id: m for m in end.messages}
    assert all(ids[i].seq == seq and ids[i].visibility == "inactive" for i, seq in shown.items())
    assert visible(end, "assistant") == ["Answered in text this time."]
    assert [m.seq for m in end.messages] == list(range(1, len(end.messages) + 1))


def _session_rows(capture: Path) -> list[dict[str, Any]]:
    rows = [
        msgspec.json.decode(line) for line in (capture / "rows.jsonl").read_bytes().splitlines()
    ]
    return [r for r in rows if r["table"] == "session"]


def test_a_subagent_is_read_with_its_session_under_the_task_call(tmp_path: Path) -> None:
    """OpenCode keeps a ``task`` subagent's conversation as a session of its own
    (``parent_id``); the ``task`` part names it (``state.metadata.sessionId``)."""
    chat, adapter, _, path = replay(SUBAGENT, tmp_path)
    parent, child = _sessions(SUBAGENT)
    assert chat.transcript_id == parent and not [m for m in chat.messages if m.agent_id]
    whole = adapter.read_session_with_subagents(Session(session_id=parent, transcript_path=path))
    assert whole.messages[: len(chat.messages)] == chat.messages
    assert [m.seq for m in whole.messages] == list(range(1, len(whole.messages) + 1))
    detail = assemble_session_detail(whole.messages)
    (group,) = detail.subagents
    assert (group.agent_id, group.spawned_by) == (child, "call_task")
    assert [m.text for m in group.messages if m.kind == "text"] == [
        "List what you see and say SUBDONE",
        "SUBDONE from the subagent",
    ]
    (call,) = [t for t in detail.tools if t.call.tool_name == "task"]
    assert call.call.tool_use_id == "call_task"
    # Usage: the session's own and the subagent's, as OpenCode totals each session.
    rows = _session_rows(SUBAGENT)
    assert {r["id"]: r["parent_id"] for r in rows} == {parent: None, child: parent}
    cached = sum(r["tokens_cache_read"] for r in rows)
    assert whole.usage.input_tokens == sum(r["tokens_input"] for r in rows) + cached
    assert whole.usage.cached_input_tokens == cached
    assert whole.usage.output_tokens == sum(r["tokens_output"] for r in rows)
    assert whole.usage.input_tokens > chat.usage.input_tokens


def test_the_history_indexes_a_subagent_with_its_session(tmp_path: Path) -> None:
    """The index lists OpenCode's top-level sessions (``sessions``): a subagent's session
    is stored with the session that spawned it, its usage counted there, once."""
    from agentspool.core.history import index_history
    from agentspool.core.store import SessionStore

    database = Path(os.environ["XDG_DATA_HOME"], "opencode", "opencode.db")
    captures.build_store(SUBAGENT, database)
    parent, child = _sessions(SUBAGENT)
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        assert index_history(store, [OpenCode()]).new == 1
        (stored,) = store.sessions()
        assert stored.session_id == parent
        records = store.records(stored.id)
        assert {m.agent_id for m in records} == {"", child}
        expected = OpenCode().read_session_with_subagents(
            Session(session_id=parent, transcript_path=_store.join(str(database), parent))
        )
        assert records == expected.messages


def test_the_history_reads_a_session_again_only_when_its_log_grew(tmp_path: Path) -> None:
    """A session is known by its log's newest ``seq`` (its subagents' too), not by the
    database's stat: another session's change does not read it again."""
    import sqlite3
    from contextlib import closing

    from agentspool.core.history import index_history
    from agentspool.core.store import SessionStore

    database = Path(os.environ["XDG_DATA_HOME"], "opencode", "opencode.db")
    captures.build_store(SUBAGENT, database)
    child = _sessions(SUBAGENT)[1]

    def change(sql: str, *args: object) -> None:
        with closing(sqlite3.connect(database)) as conn, conn:
            conn.execute(sql, args)

    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        assert index_history(store, [OpenCode()]).new == 1
        change(
            "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, 0, ?, '{}')",
            "evt_other",
            "ses_another",
            "session.created.1",
        )
        change("INSERT INTO event_sequence (aggregate_id, seq) VALUES ('ses_another', 0)")
        again = index_history(store, [OpenCode()])
        assert (again.unchanged, again.rewritten, again.records) == (1, 0, 0)
        change("UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = ?", child)
        assert index_history(store, [OpenCode()]).rewritten == 1, "its subagent's log grew"


def _bash_part(database: str, session: str, part_id: str, status: str, command: str) -> None:
    """A ``bash`` call's part as OpenCode writes it, ``status`` as given; parts are
    created in the order of their ids (``prt_a``, ``prt_b``, …)."""
    import json
    import sqlite3
    from contextlib import closing

    data = {
        "type": "tool",
        "tool": "bash",
        "callID": part_id,
        "state": {"status": status, "input": {"command": command, "description": "Declare"}},
    }
    with closing(sqlite3.connect(database)) as conn, conn:
        conn.execute(
            "INSERT OR REPLACE INTO part (id, message_id, session_id, time_created,"
            " time_updated, data) VALUES (?, 'msg_x', ?, ?, ?, ?)",
            (part_id, session, ord(part_id[-1]), ord(part_id[-1]), json.dumps(data)),
        )


def test_who_declares_is_the_session_whose_bash_call_runs_the_declaration(
    tmp_path: Path,
) -> None:
    """ADR 0019: the store holds the ``bash`` call running while the command runs, in
    the session that made it — the run's own (``""``) or a subagent's (its id)."""
    _, adapter, runtime, path = replay(SUBAGENT, tmp_path)
    database, parent = _store.split(path)
    child = _sessions(SUBAGENT)[1]
    me = os.getpid()  # the capture's OpenCode process is gone: nothing to be outside of
    assert adapter.lifecycle_caller("run", runtime, me, {}) is None, "no call open"
    _bash_part(database, child, "prt_a", "running", "ls -la")
    assert adapter.lifecycle_caller("run", runtime, me, {}) is None, "not a declaration"
    _bash_part(database, child, "prt_b", "running", "agentspool lifecycle done")
    assert adapter.lifecycle_caller("run", runtime, me, {}) == child
    _bash_part(database, parent, "prt_c", "running", ".venv/bin/agentspool lifecycle done")
    assert adapter.lifecycle_caller("run", runtime, me, {}) == "", "the newest: the agent's"
    _bash_part(database, parent, "prt_c", "completed", ".venv/bin/agentspool lifecycle done")
    assert adapter.lifecycle_caller("run", runtime, me, {}) == child
    _bash_part(database, "ses_another_run", "prt_d", "running", "agentspool lifecycle done")
    _bash_part(database, child, "prt_b", "completed", "agentspool lifecycle done")
    assert adapter.lifecycle_caller("run", runtime, me, {}) is None, "another run's call"


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_a_store_without_its_log_reads_the_same_rows(name: str, tmp_path: Path) -> None:
    """A session with no log rows is read from its ``message``/``part`` rows: the same
    records as the log gives, less what OpenCode deleted (only the log keeps those)."""
    with_log, *_ = replay(CAPTURES[name], tmp_path / "log")
    rows_only, *_ = replay(CAPTURES[name], tmp_path / "rows", log=False)

    def shape(chat: Chat) -> list[tuple[str, str, str, str, bool]]:
        return [
            (m.id, m.kind, m.role, m.text, m.is_error)
            for m in chat.messages
            if m.visibility == "visible"
        ]

    assert shape(rows_only) == shape(with_log)
    assert rows_only.usage == with_log.usage or name == "tui_question_then_undo"
    assert (rows_only.state, rows_only.activity) == (with_log.state, with_log.activity)


def test_what_1_18_33_does_not_write_is_drift(tmp_path: Path) -> None:
    """A field OpenCode adds to an assistant message (not the log's first message) and a
    part type it adds are named in ``Chat.drift`` (ADR 0014); the read goes on."""
    import json
    import sqlite3
    from contextlib import closing

    database = tmp_path / "opencode.db"
    captures.build_store(PERMISSION, database)
    with closing(sqlite3.connect(database)) as conn, conn:
        rows = conn.execute("SELECT id, type, data FROM event ORDER BY seq").fetchall()
        assistant = next(r for r in rows if '"role":"assistant"' in r[2].replace(" ", ""))
        data = json.loads(assistant[2])
        data["info"]["futureField"] = 1
        conn.execute("UPDATE event SET data = ? WHERE id = ?", (json.dumps(data), assistant[0]))
        part = next(r for r in rows if r[1] == "message.part.updated.1")
        data = json.loads(part[2])
        data["part"]["type"] = "future-part"
        conn.execute("UPDATE event SET data = ? WHERE id = ?", (json.dumps(data), part[0]))
    (session,) = _sessions(PERMISSION)
    chat = OpenCode().read_chat("run", "", _store.join(str(database), session))
    assert chat.drift.transcript.unknown_fields == ["message:assistant.futureField"]
    assert chat.drift.transcript.unknown_types == {"part:future-part": 1}
    assert chat.state == "needs_input" and chat.messages
