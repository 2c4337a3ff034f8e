"""What Claude Code versions before the pinned one wrote, and other tools' copies of its
files (docs/providers/claude-code.md §9): each rule learned from real transcripts, on
small files written here, line by line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentspool.adapters.claude_code import ClaudeCode
from agentspool.adapters.claude_code._transcript import HistoryParser, TranscriptParser
from agentspool.core import events as ev
from agentspool.core.detail import assemble_session_detail
from agentspool.core.history import index_history
from agentspool.core.seam import Message, Usage
from agentspool.core.store import SessionStore

SESSION = "5e550000-0000-4000-8000-000000000001"


def line(**fields: Any) -> bytes:
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def prompt(uid: str, text: str, at: str, **more: Any) -> bytes:
    return line(
        parentUuid=more.pop("parentUuid", None),
        isSidechain=False,
        type="user",
        message={"role": "user", "content": text},
        uuid=uid,
        timestamp=at,
        sessionId=more.pop("sessionId", SESSION),
        cwd="/srv/app",
        version=more.pop("version", "2.0.76"),
        **more,
    )


def reply(
    uid: str, message_id: str, block: dict[str, Any], usage: dict[str, int], at: str, **more: Any
) -> bytes:
    return line(
        parentUuid=more.pop("parentUuid", None),
        isSidechain=more.pop("isSidechain", False),
        type="assistant",
        message={
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": more.pop("model", "claude-sonnet-4-5-20250929"),
            "content": [block],
            "stop_reason": more.pop("stop_reason", None),
            "usage": usage,
        },
        requestId="req_" + message_id,
        uuid=uid,
        timestamp=at,
        sessionId=more.pop("sessionId", SESSION),
        cwd="/srv/app",
        version="2.0.76",
        **more,
    )


def out(n: int, read: int = 0) -> dict[str, int]:
    return {"input_tokens": 3, "cache_read_input_tokens": read, "output_tokens": n}


# A response streamed as the versions before 2.1.5x wrote it: a line per content block as
# the block finished, each with the usage as of then.
STREAMED = [
    prompt("u1", "fix the test", "2026-01-05T10:00:00.000Z"),
    reply(
        "a1",
        "msg_A",
        {"type": "thinking", "thinking": "look first"},
        out(8, 900),
        "2026-01-05T10:00:02.000Z",
    ),
    reply(
        "a2",
        "msg_A",
        {"type": "text", "text": "Reading it."},
        out(40, 900),
        "2026-01-05T10:00:03.000Z",
        parentUuid="a1",
    ),
    reply(
        "a3",
        "msg_A",
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "t.py"}},
        out(727, 900),
        "2026-01-05T10:00:04.000Z",
        parentUuid="a2",
    ),
]


def parsed(*lines: bytes) -> TranscriptParser:
    parser = TranscriptParser()
    for raw in lines:
        parser.feed_line(raw.rstrip(b"\n"))
    return parser


def priced(messages: list[Message]) -> list[tuple[str, int]]:
    return [(m.id, m.usage.output_tokens) for m in messages if m.usage is not None]


def test_a_streamed_response_counts_the_usage_of_its_last_line_once() -> None:
    parser = parsed(*STREAMED)
    assert priced(parser.messages) == [("a1", 727)]  # on its first record, final figures
    assert parser.usage == Usage(
        input_tokens=3 + 900, output_tokens=727, cached_input_tokens=900, cache_write_tokens=0
    )
    assert assemble_session_detail(parser.messages).usage == parser.usage


def test_a_response_whose_first_line_has_no_figures_counts_its_later_ones() -> None:
    """A model served through another API (``usage: {}`` on the first line)."""
    first = reply("a1", "msg_B", {"type": "text", "text": "Hi"}, {}, "2026-01-05T10:00:02.000Z")
    later = reply(
        "a2",
        "msg_B",
        {"type": "text", "text": "there"},
        out(12),
        "2026-01-05T10:00:03.000Z",
        parentUuid="a1",
    )
    parser = parsed(first, later)
    assert priced(parser.messages) == [("a1", 12)]
    assert parser.usage.output_tokens == 12


def test_a_line_with_usage_and_no_message_id_counts_on_its_own() -> None:
    one, two = (
        line(
            type="assistant",
            uuid=f"a{n}",
            timestamp=f"2026-01-05T10:00:0{n}.000Z",
            sessionId=SESSION,
            message={
                "role": "assistant",
                "content": "ok",
                "usage": {"input_tokens": 50, "output_tokens": 20},
            },
        )
        for n in (1, 2)
    )
    parser = parsed(one, two)
    assert [m.message_id for m in parser.messages] == ["", ""]
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (100, 40)


@pytest.mark.parametrize("limit", [1, 200, 1 << 20])
def test_the_history_hands_the_repriced_record_again_with_its_seq(
    tmp_path: Path, limit: int
) -> None:
    """Read in blocks, and resumed from a saved state between the lines of one response:
    the record carrying the usage comes again, changed, under its own seq."""
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(STREAMED[:2]))
    first = ClaudeCode().resume_transcript(str(path), 0, b"")
    handed: dict[int, Message] = {}
    while batch := first.read(limit):
        handed.update({m.seq: m for m in batch})
    with path.open("ab") as fh:
        fh.write(b"".join(STREAMED[2:]))
    later = ClaudeCode().resume_transcript(str(path), first.offset, first.state())
    again: list[Message] = []
    while batch := later.read(limit):
        again += batch
    handed.update({m.seq: m for m in again})
    assert 2 in [m.seq for m in again]  # the thinking record (seq 2), handed out again
    whole = parsed(*STREAMED).messages
    assert [handed[seq] for seq in sorted(handed)] == whole
    assert later.count == len(whole)


def test_the_store_counts_the_final_figures_of_a_response_read_in_two_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude"
    project = claude / "projects" / "-srv-app"
    project.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    path = project / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(STREAMED[:2]))
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        index_history(store, [ClaudeCode()])
        with path.open("ab") as fh:
            fh.write(b"".join(STREAMED[2:]))
        assert index_history(store, [ClaudeCode()]).appended == 1
        (stored,) = store.sessions()
        assert [(r.seq, r.usage.output_tokens) for r in store.usage_records()] == [(2, 727)]
        assert store.records(stored.id) == parsed(*STREAMED).messages


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("AGENTSPOOL_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(mode=0o700)
    project = claude / "projects" / "-srv-app"
    project.mkdir(parents=True)
    return project


def test_a_continued_session_is_its_own_file_and_its_copied_history_counts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1.0.x ``--continue``: the new file begins with a copy of the old session — the
    prompt with the old session id and time, the response with the new session's id and
    the time of the copy — then goes on. The copy is the old session's response."""
    import agentspool

    project = _home(tmp_path, monkeypatch)
    old, new = "01d00000-0000-4000-8000-000000000001", "0e000000-0000-4000-8000-000000000002"
    answer = {"type": "text", "text": "lol"}
    (project / f"{old}.jsonl").write_bytes(
        prompt("p1", "say lol", "2025-07-19T22:21:00.000Z", sessionId=old, version="1.0.56")
        + reply(
            "r1",
            "msg_C",
            answer,
            out(5),
            "2025-07-19T22:21:04.000Z",
            sessionId=old,
            parentUuid="p1",
            stop_reason="end_turn",
        )
    )
    (project / f"{new}.jsonl").write_bytes(
        line(type="summary", summary="Casual chat", leafUuid="r1")
        + prompt("p1", "say lol", "2025-07-19T22:21:00.000Z", sessionId=old, version="1.0.56")
        + reply(
            "r1",
            "msg_C",
            answer,
            out(5),
            "2025-07-19T22:32:32.000Z",
            sessionId=new,
            parentUuid="p1",
            stop_reason="end_turn",
        )
        + prompt("p2", "run ls", "2025-07-19T22:32:45.000Z", sessionId=new, version="1.0.56")
        + reply(
            "r2",
            "msg_D",
            answer,
            out(77),
            "2025-07-19T22:32:49.000Z",
            sessionId=new,
            parentUuid="p2",
            stop_reason="end_turn",
        )
    )
    report = agentspool.usage(by="session")
    assert {row.key: row.output_tokens for row in report.rows} == {old: 5, new: 77}


def test_a_file_of_bookkeeping_alone_is_the_session_it_is_named_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _home(tmp_path, monkeypatch)
    named = "9a000000-0000-4000-8000-000000000003"
    (project / f"{named}.jsonl").write_bytes(
        line(type="queue-operation", operation="enqueue", timestamp="2026-01-05T10:00:00.000Z")
        + line(type="queue-operation", operation="dequeue", timestamp="2026-01-05T10:00:01.000Z")
    )
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        index_history(store, [ClaudeCode()])
        assert [s.session_id for s in store.sessions()] == [named]
    found = ClaudeCode().session_at(str(project / f"{named}.jsonl"))
    assert found is None  # no conversation record, no session id: nothing to show
    with_prompt = project / "exported.jsonl"  # a copy under another name, no session ids
    with_prompt.write_bytes(line(type="user", message={"role": "user", "content": "hi"}))
    found = ClaudeCode().session_at(str(with_prompt))
    assert found is not None and found.session_id == "exported"


def test_a_record_with_fields_of_other_shapes_is_read_with_those_that_fit() -> None:
    """Only a line that is no JSON object is corrupt. A record whose fields have other
    shapes keeps the fields that fit; a line with no type is no Claude Code record."""
    parser = parsed(
        line(type="user", sessionId=12345, uuid="u1", message={"role": "user", "content": "a"}),
        line(type="user", uuid="u2", timestamp=1705315200, message={"content": "b"}),
        line(type="user", uuid="u3", message="not an object"),
        line(
            type="assistant",
            uuid="a1",
            message={
                "id": "msg_E",
                "content": [{"type": "text", "text": "kept"}, 7, {"type": "tool_use", "input": 3}],
                "usage": {"input_tokens": None, "output_tokens": 9},
            },
        ),
        line(sessionId="s", message={"role": "user", "content": "no type"}),
        line(type=42),
        b"42\n",
        b'"a string"\n',
        b"{torn\n",
    )
    assert parser.corrupt == 3
    assert parser.drift.snapshot(parser.corrupt) == msgspec.structs.replace(
        parser.drift.snapshot(), corrupt=3
    )
    assert not parser.drift.snapshot().unknown_types
    assert [(m.id, m.text) for m in parser.messages if m.role == "user"] == [
        ("u1", "a"),
        ("u2", "b"),
    ]
    (kept,) = [m for m in parser.messages if m.role == "assistant" and m.kind == "text"]
    assert (kept.text, kept.usage.output_tokens, kept.usage.input_tokens) == ("kept", 9, 0)


def test_what_older_versions_wrote_is_known_and_a_new_field_is_still_drift() -> None:
    parser = parsed(
        prompt(
            "u1", "hi", "2025-09-01T10:00:00.000Z", todos=[], thinkingMetadata={"level": "high"}
        ),
        reply(
            "a1",
            "msg_F",
            {"type": "text", "text": "Hi."},
            out(2),
            "2025-09-01T10:00:01.000Z",
            costUSD=0.01,
            durationMs=900,
        ),
        line(
            type="system",
            content="Claude Opus 4 limit reached, now using Sonnet 4",
            level="warning",
            uuid="s1",
            sessionId=SESSION,
            isSidechain=False,
            isMeta=False,
            timestamp="2025-09-01T10:00:02.000Z",
        ),
        line(
            type="progress",
            data={"type": "bash_progress", "output": ""},
            toolUseID="t",
            parentToolUseID="t",
            uuid="g1",
            sessionId=SESSION,
            isSidechain=False,
            timestamp="2025-09-01T10:00:03.000Z",
        ),
        line(type="worktree-state", sessionId=SESSION, worktreeSession=None),
    )
    assert not parser.drift.snapshot()
    notice = [m.text for m in parser.messages if m.role == "system"]
    assert notice == ["Claude Opus 4 limit reached, now using Sonnet 4"]
    later = parsed(prompt("u1", "hi", "2025-09-01T10:00:00.000Z", brandNewField=1))
    assert later.drift.snapshot().unknown_fields == ["user.brandNewField"]


def _state(*lines: bytes) -> str:
    return ClaudeCode().read_chat("r", "", _written(*lines)).state


def _written(*lines: bytes) -> str:
    import tempfile

    handle = tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False)  # noqa: SIM115
    with handle:
        handle.write(b"".join(lines))
    return handle.name


def test_a_prompt_without_a_prompt_id_opens_a_turn_and_a_stop_hook_ends_it() -> None:
    """Before ``promptId`` (2.1.4x and older) a prompt is known by its uuid; in 2.1.x the
    last response's ``stop_reason`` is often ``null``, and a Stop hook's progress record
    is what shows the turn ended."""
    stop = line(
        type="progress",
        data={
            "type": "hook_progress",
            "hookEvent": "Stop",
            "hookName": "Stop",
            "command": "notify",
        },
        toolUseID="t",
        parentToolUseID="t",
        uuid="g1",
        sessionId=SESSION,
        isSidechain=False,
        timestamp="2026-01-05T10:00:06.000Z",
    )
    answer = reply(
        "a1",
        "msg_G",
        {"type": "text", "text": "Done."},
        out(3),
        "2026-01-05T10:00:05.000Z",
        parentUuid="u1",
    )
    assert _state(STREAMED[0]) == "working"
    assert _state(STREAMED[0], answer) == "working"  # stop_reason null: not the end
    assert _state(STREAMED[0], answer, stop) == "needs_input"


def test_a_session_of_local_commands_alone_is_not_nothing_yet() -> None:
    command = prompt("c1", "<command-name>/context</command-name>", "2026-01-05T10:00:00.000Z")
    output = prompt(
        "c2",
        "<local-command-stdout>Context: 12k</local-command-stdout>",
        "2026-01-05T10:00:01.000Z",
        parentUuid="c1",
    )
    assert _state(command) == "idle"
    assert _state(command, output) == "needs_input"


def test_titles_links_and_api_errors_are_read() -> None:
    chat = ClaudeCode().read_chat(
        "r",
        "",
        _written(
            prompt("u1", "ship it", "2026-02-03T06:00:00.000Z"),
            line(type="ai-title", sessionId=SESSION, aiTitle="Shipping the release"),
            line(
                type="system",
                subtype="api_error",
                level="error",
                uuid="e1",
                sessionId=SESSION,
                isSidechain=False,
                timestamp="2026-02-03T06:00:01.000Z",
                retryAttempt=2,
                maxRetries=10,
                retryInMs=1200,
                error={
                    "status": 529,
                    "error": {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                    },
                },
            ),
            line(
                type="pr-link",
                sessionId=SESSION,
                prNumber=139,
                prRepository="acme/app",
                prUrl="https://github.com/acme/app/pull/139",
                timestamp="2026-02-03T06:31:22.223Z",
            ),
        ),
    )
    assert chat.title == "Shipping the release"
    errors = [(m.role, m.text) for m in chat.messages if m.kind == "error"]
    assert errors == [("system", "Overloaded (status 529); retry 2 of 10")]
    links = [m.text for m in chat.messages if m.role == "system" and m.kind == "text"]
    assert links == ["pull request acme/app#139: https://github.com/acme/app/pull/139"]
    renamed = TranscriptParser()
    for raw in (
        line(type="custom-title", sessionId=SESSION, customTitle="Mine"),
        line(type="ai-title", sessionId=SESSION, aiTitle="Generated later"),
    ):
        renamed.feed_line(raw)
    assert renamed.title == "Mine"  # the user's /rename wins over a generated title


def test_the_history_titles_a_session_by_the_title_the_cli_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _home(tmp_path, monkeypatch)
    path = project / f"{SESSION}.jsonl"
    path.write_bytes(prompt("u1", "ship it", "2026-02-03T06:00:00.000Z"))
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        index_history(store, [ClaudeCode()])
        assert [s.title for s in store.sessions()] == ["ship it"]
        with path.open("ab") as fh:
            fh.write(line(type="ai-title", sessionId=SESSION, aiTitle="Shipping the release"))
        index_history(store, [ClaudeCode()])
        assert [s.title for s in store.sessions()] == ["Shipping the release"]
    state = HistoryParser.resumed(HistoryParser().state())
    assert state is not None and state.title == ""


# 1.0.7x to 1.0.10x: a Task subagent's records in the main file (isSidechain: true, no
# agentId), each chain opened by a prompt that is its Task call's prompt. Two calls in
# one response, their subagents written one after the other.
def _task(uid: str, call: str, what: str, at: str, parent: str) -> bytes:
    block = {
        "type": "tool_use",
        "id": call,
        "name": "Task",
        "input": {
            "description": what,
            "prompt": f"Please {what}.",
            "subagent_type": "general-purpose",
        },
    }
    return reply(uid, "msg_T", block, out(30), at, parentUuid=parent, stop_reason="tool_use")


def _side(
    uid: str, parent: str | None, kind: str, content: Any, at: str, *, message_id: str = ""
) -> bytes:
    fields: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": True,
        "type": kind,
        "uuid": uid,
        "timestamp": at,
        "sessionId": SESSION,
        "version": "1.0.98",
        "message": {"role": kind, "content": content},
    }
    if message_id:
        fields["message"] |= {
            "id": message_id,
            "model": "claude-sonnet-4-20250514",
            "usage": out(11),
            "stop_reason": "end_turn",
        }
    return line(**fields)


INLINE = [
    prompt("m1", "build the app", "2025-09-03T00:52:40.000Z", version="1.0.98"),
    _task("m2", "toolu_A", "write the types", "2025-09-03T00:52:48.000Z", "m1"),
    _task("m3", "toolu_B", "write the page", "2025-09-03T00:52:49.000Z", "m2"),
    _side("s1", None, "user", "Please write the page.", "2025-09-03T00:52:50.000Z"),
    _side(
        "s2",
        "s1",
        "assistant",
        [{"type": "text", "text": "Page written."}],
        "2025-09-03T00:53:10.000Z",
        message_id="msg_S1",
    ),
    _side("t1", None, "user", "Please write the types.", "2025-09-03T00:52:50.000Z"),
    _side(
        "t2",
        "t1",
        "assistant",
        [{"type": "text", "text": "Types written."}],
        "2025-09-03T00:53:20.000Z",
        message_id="msg_S2",
    ),
    line(
        parentUuid="m3",
        isSidechain=False,
        type="user",
        uuid="m4",
        sessionId=SESSION,
        timestamp="2025-09-03T00:53:21.000Z",
        message={
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_B", "content": "Page written."}
            ],
        },
    ),
]


def test_an_inline_subagent_is_its_group_under_the_task_call_that_spawned_it() -> None:
    parser = parsed(*INLINE)
    detail = assemble_session_detail(parser.messages)
    groups = {g.spawned_by: [m.text for m in g.messages] for g in detail.subagents}
    assert groups == {
        "toolu_B": ["write the page", "Please write the page.", "Page written."],
        "toolu_A": ["write the types", "Please write the types.", "Types written."],
    }
    assert detail.usage == parser.usage and parser.usage.output_tokens == 30 + 11 + 11
    # The subagents' end_turn is not the main turn's end: their records make no event.
    assert not [e for e in parser.events if isinstance(e, ev.TurnStopped)]
    assert _state(*INLINE) == "working"


def test_an_inline_subagent_reads_the_same_from_a_resumed_parse(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(INLINE[:4]))
    first = ClaudeCode().resume_transcript(str(path), 0, b"")
    records = {m.seq: m for m in first.read(1 << 20)}
    with path.open("ab") as fh:
        fh.write(b"".join(INLINE[4:]))
    later = ClaudeCode().resume_transcript(str(path), first.offset, first.state())
    records.update({m.seq: m for m in later.read(1 << 20)})
    assert [records[seq] for seq in sorted(records)] == parsed(*INLINE).messages
