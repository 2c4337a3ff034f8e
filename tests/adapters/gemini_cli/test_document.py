"""The older Gemini CLI chat file, one JSON document (docs/providers/gemini-cli.md §7):
read, rewritten, listed, indexed and shown. Every document here is written by the test,
shaped as the rules learned from real users' files say (a ``gemini`` record written
when its answer arrived and written again once its calls completed, ``sessionId`` the
first member, hand-written fixtures of other tools with their own liberties)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.adapters.gemini_cli import GeminiCli
from agentspool.adapters.gemini_cli._document import DocumentParser, listed_session_id
from agentspool.cli.main import main as cli_main

SESSION = "7f3c9a10-5b2e-4d8c-9a61-0c4e2b7d1a55"
PROMPT = {
    "id": "5d1e0c2a-0001",
    "timestamp": "2026-01-05T09:00:01.000Z",
    "type": "user",
    "content": "rename parse_args to read_options",
}
ANSWERED = {
    "id": "5d1e0c2a-0002",
    "timestamp": "2026-01-05T09:00:04.000Z",
    "type": "gemini",
    "content": "",
    "thoughts": [
        {
            "subject": "Finding the callers",
            "description": "Search before renaming.",
            "timestamp": "2026-01-05T09:00:03.000Z",
        }
    ],
    "model": "gemini-2.5-flash",
    "tokens": {
        "input": 9000,
        "output": 20,
        "cached": 4000,
        "thoughts": 70,
        "tool": 5,
        "total": 9095,
    },
}
SEARCH = {
    "id": "search_file_content-1767603604000-aa11",
    "name": "search_file_content",
    "args": {"pattern": "parse_args"},
    "result": [
        {
            "functionResponse": {
                "id": "search_file_content-1767603604000-aa11",
                "name": "search_file_content",
                "response": {"output": "Found 2 matches"},
            }
        }
    ],
    "status": "success",
    "timestamp": "2026-01-05T09:00:05.000Z",
    "resultDisplay": "Found 2 matches",
    "displayName": "SearchText",
    "description": "Searches files.",
    "renderOutputAsMarkdown": True,
}
DONE = {
    "id": "5d1e0c2a-0003",
    "timestamp": "2026-01-05T09:00:08.000Z",
    "type": "gemini",
    "content": "Renamed in two places.",
    "thoughts": [],
    "model": "gemini-2.5-flash",
    "tokens": {
        "input": 9400,
        "output": 12,
        "cached": 8800,
        "thoughts": 0,
        "tool": 0,
        "total": 9412,
    },
}


def document(messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    """The conversation record as the CLI writes it: ``sessionId`` first."""
    return {
        "sessionId": SESSION,
        "projectHash": "c0ffee",
        "startTime": "2026-01-05T09:00:00.000Z",
        "lastUpdated": messages[-1]["timestamp"] if messages else "2026-01-05T09:00:00.000Z",
        "messages": messages,
        **more,
    }


def answered_with_calls() -> dict[str, Any]:
    return {**ANSWERED, "toolCalls": [SEARCH]}


def first_version() -> dict[str, Any]:
    """Written when the model's answer (calls only) arrived."""
    return document([PROMPT, ANSWERED])


def last_version() -> dict[str, Any]:
    """The same file once the call completed and the model answered again."""
    return document([PROMPT, answered_with_calls(), DONE])


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(doc, indent=2, ensure_ascii=False).encode()
    path.write_bytes(data)
    return path


def chat_file(project: str = "demo", name: str = f"session-2026-01-05T09-00-{SESSION[:8]}") -> Path:
    home = Path(os.environ["GEMINI_CLI_HOME"])
    return home / ".gemini" / "tmp" / project / "chats" / f"{name}.json"


def parse(*versions: Any) -> DocumentParser:
    parser = DocumentParser()
    for version in versions:
        raw = version if isinstance(version, bytes) else json.dumps(version).encode()
        parser.feed(memoryview(raw))
    return parser


def seqs(messages: list[Any]) -> list[tuple[int, str, str]]:
    return [(m.seq, m.id, m.kind) for m in messages]


def test_a_document_reads_as_the_conversation_it_holds() -> None:
    chat = GeminiCli().read_chat("r", "", str(write(chat_file(), last_version())))
    assert chat.transcript_id == SESSION
    assert [(m.kind, m.role, m.text) for m in chat.messages] == [
        ("text", "user", "rename parse_args to read_options"),
        ("thinking", "assistant", "Finding the callers\nSearch before renaming."),
        ("tool_call", "assistant", ""),
        ("tool_result", "tool", "Found 2 matches"),
        ("text", "assistant", "Renamed in two places."),
    ]
    assert [m.seq for m in chat.messages] == [1, 2, 3, 4, 5]
    assert chat.state == "needs_input"  # the last answer has text and no call: turn done
    assert not chat.drift, chat.drift.describe()
    priced = [m for m in chat.messages if m.usage is not None]
    assert [(m.message_id, m.model) for m in priced] == [
        ("5d1e0c2a-0002", "gemini-2.5-flash"),
        ("5d1e0c2a-0003", "gemini-2.5-flash"),
    ]


def test_a_rewritten_document_keeps_every_seq_and_adds_what_is_new_last() -> None:
    path = write(chat_file(), first_version())
    adapter = GeminiCli()
    before = adapter.read_chat("r", "", str(path))
    assert before.state == "working"  # a prompt, an answer that only called tools
    handed = list(before.messages)
    write(path, last_version())
    after = adapter.read_chat("r", "", str(path))
    assert seqs(after.messages)[: len(handed)] == seqs(handed)
    assert [m.kind for m in after.messages[len(handed) :]] == ["tool_call", "tool_result", "text"]
    # What a fresh read of the last version says, seq for seq.
    assert seqs(GeminiCli().read_chat("r", "", str(path)).messages) == seqs(after.messages)
    assert after.state == "needs_input"
    assert [m.text for m in handed] == [m.text for m in before.messages]  # handed out: same


def test_seq_stays_even_where_a_fresh_read_would_number_otherwise() -> None:
    """A record that gains a part its record order puts first (a second thought): read
    anew, the file would number its text after it; followed, nothing handed out moves."""
    thinking = {**ANSWERED, "content": "Looking."}
    path = write(chat_file(), document([PROMPT, thinking]))
    adapter = GeminiCli()
    handed = seqs(adapter.read_chat("r", "", str(path)).messages)
    assert [kind for _, _, kind in handed] == ["text", "thinking", "text"]
    second = {"subject": "Checking tests", "description": "They call it too."}
    grown = {**thinking, "thoughts": [*ANSWERED["thoughts"], second], "toolCalls": [SEARCH]}
    write(path, document([PROMPT, grown, DONE]))
    after = seqs(adapter.read_chat("r", "", str(path)).messages)
    assert after[: len(handed)] == handed
    assert [kind for _, _, kind in after[len(handed) :]] == [
        "thinking",
        "tool_call",
        "tool_result",
        "text",
    ]
    fresh = seqs(GeminiCli().read_chat("r", "", str(path)).messages)
    assert fresh[:3] != handed  # what a reset on every rewrite would have handed out


def test_a_record_the_document_no_longer_holds_is_inactive() -> None:
    parser = parse(last_version(), document([PROMPT, answered_with_calls()]))
    by_id = {m.id: m.visibility for m in parser.messages}
    assert by_id["5d1e0c2a-0003"] == "inactive"
    assert by_id["5d1e0c2a-0001"] == "visible"


def test_usage_follows_the_latest_version_of_each_record_once() -> None:
    # The answer's record written three times (answer, calls completed, a last rewrite
    # with nothing new): its tokens count once.
    parser = parse(first_version(), last_version(), last_version())
    usage = parser.usage
    assert (usage.input_tokens, usage.cached_input_tokens) == (9000 + 5 + 9400, 4000 + 8800)
    assert (usage.output_tokens, usage.reasoning_tokens) == (20 + 70 + 12, 70)
    # A version that restates a record's tokens replaces them, on the same message.
    restated = {**ANSWERED, "tokens": {**ANSWERED["tokens"], "output": 25, "total": 9100}}
    parser = parse(first_version(), document([PROMPT, restated]))
    assert parser.usage.output_tokens == 25 + 70
    [priced] = [m for m in parser.messages if m.usage is not None]
    assert priced.usage is not None and priced.usage.output_tokens == 95


def test_a_torn_version_is_one_unreadable_record_and_the_last_readable_one_stands() -> None:
    whole = json.dumps(last_version()).encode()
    parser = parse(first_version(), whole[: len(whole) // 2])
    assert parser.drift.snapshot(parser.corrupt).corrupt == 1
    assert [m.id for m in parser.messages] == [m.id for m in parse(first_version()).messages]
    parser.feed(memoryview(whole))
    assert parser.drift.snapshot(parser.corrupt).corrupt == 0
    assert len(parser.messages) == 5


def test_a_message_that_does_not_fit_is_counted_the_others_read() -> None:
    odd = {**DONE, "tokens": {"input": "many"}}
    parser = parse(document([PROMPT, answered_with_calls(), odd]))
    assert parser.drift.snapshot(parser.corrupt).corrupt == 1
    assert [m.kind for m in parser.messages][-1] == "tool_result"


def test_unknown_types_and_fields_of_a_document_are_drift() -> None:
    extra = {**PROMPT, "mood": "calm"}
    hint = {"id": "h-1", "timestamp": "2026-01-05T09:00:02.000Z", "type": "hint", "content": "?"}
    doc = document([extra, hint, ANSWERED], flavour="vanilla")
    drift = parse(doc, doc).drift.snapshot()  # read twice: counted once
    assert drift.unknown_types == {"hint": 1}
    assert drift.unknown_fields == ["document.flavour", "user.mood"]


def test_what_other_tools_fixtures_write_is_read_not_dropped() -> None:
    """Hand-written documents of other tools: records without ids, a ``model`` record
    with API ``parts``, ``content`` as a list of strings, a call with neither id nor
    result, a result that is not function response parts, ``meta`` (known, ignored),
    ``summary`` (the session's one-line summary)."""
    doc = {
        "meta": {"model": "some-model"},
        "messages": [
            {"type": "user", "content": ["list the files"], "timestamp": "2026-01-05T10:00:00Z"},
            {
                "id": "a1",
                "type": "gemini",
                "timestamp": "2026-01-05T10:00:02Z",
                "content": "Listing.",
                "toolCalls": [
                    {"name": "list_directory", "args": {"dir_path": "."}, "status": "success"},
                    {
                        "id": "t2",
                        "name": "read_file",
                        "args": {"path": "a.txt"},
                        "result": {"content": "hello"},
                        "status": "success",
                        "displayName": "ReadFile",
                    },
                ],
            },
            {
                "type": "model",
                "parts": [{"text": "Two files."}],
                "timestamp": "2026-01-05T10:00:03Z",
            },
        ],
        "summary": "List the files",
        "sessionId": "fixture-session",
        "startTime": "2026-01-05T10:00:00Z",
        "lastUpdated": "2026-01-05T10:00:03Z",
    }
    parser = parse(doc)
    assert not parser.drift.snapshot(parser.corrupt), parser.drift.snapshot().describe()
    assert [(m.id, m.kind, m.text) for m in parser.messages] == [
        ("#1", "text", "list the files"),
        ("a1", "text", "Listing."),
        ("a1/call/#0", "tool_call", ""),
        ("a1/result/#0", "tool_result", ""),
        ("a1/call/t2", "tool_call", ""),
        ("a1/result/t2", "tool_result", '{"content":"hello"}'),
        ("#3", "text", "Two files."),
        ("$summary", "summary", "List the files"),
    ]
    assert parser.messages[-1].is_meta
    # A new summary replaces the text of the one record it is; read again, it stays.
    for _ in range(2):
        parser.feed(memoryview(json.dumps({**doc, "summary": "Listed the files"}).encode()))
        assert [(m.text, m.visibility) for m in parser.messages if m.kind == "summary"] == [
            ("Listed the files", "visible")
        ]
    parser.feed(memoryview(json.dumps({**doc, "summary": None}).encode()))
    assert [m.visibility for m in parser.messages if m.kind == "summary"] == ["inactive"]


def test_a_cancel_in_a_document_does_not_hold_the_turns_after_it() -> None:
    """The older CLI rewrites its list after a cancel, it re-records nothing: the next
    prompt is a turn of its own."""
    cancelled_call = {**SEARCH, "status": "cancelled", "result": None}
    notice = {
        "id": "5d1e0c2a-0004",
        "timestamp": "2026-01-05T09:00:06.000Z",
        "type": "info",
        "content": "Request cancelled.",
    }
    again = {**PROMPT, "id": "5d1e0c2a-0005", "timestamp": "2026-01-05T09:01:00.000Z"}
    path = write(
        chat_file(), document([PROMPT, {**ANSWERED, "toolCalls": [cancelled_call]}, notice])
    )
    assert GeminiCli().read_chat("r", "", str(path)).state == "needs_input"
    write(path, document([PROMPT, {**ANSWERED, "toolCalls": [cancelled_call]}, notice, again]))
    assert GeminiCli().read_chat("r", "", str(path)).state == "working"
    answer = {**DONE, "id": "5d1e0c2a-0006", "timestamp": "2026-01-05T09:01:04.000Z"}
    write(
        path, document([PROMPT, {**ANSWERED, "toolCalls": [cancelled_call]}, notice, again, answer])
    )
    assert GeminiCli().read_chat("r", "", str(path)).state == "needs_input"


def test_the_update_notice_names_the_cli_version() -> None:
    notice = {
        "id": "n-1",
        "timestamp": "2026-01-05T09:00:00.500Z",
        "type": "info",
        "content": "Gemini CLI update available! 0.22.1 \u2192 0.23.0\nRun npm install to update",
    }
    path = write(chat_file(), document([notice, PROMPT, ANSWERED]))
    assert GeminiCli().read_chat("r", "", str(path)).drift.cli_version == "0.22.1"


def test_the_file_replaced_by_another_sessions_document_starts_over() -> None:
    path = write(chat_file(), last_version())
    adapter = GeminiCli()
    assert len(adapter.read_chat("r", "", str(path)).messages) == 5
    other = {**document([PROMPT]), "sessionId": "another-session"}
    fresh = write(path.with_name("next.json"), other)
    os.replace(fresh, path)  # another inode
    chat = adapter.read_chat("r", "", str(path))
    assert chat.transcript_id == "another-session"
    assert seqs(chat.messages) == [(1, "5d1e0c2a-0001", "text")]


def test_session_at_and_sessions_know_a_document_and_nothing_else() -> None:
    adapter = GeminiCli()
    path = write(chat_file(), last_version())
    # Keys in another order (a fixture sorted them): the id is found in the whole file.
    unsorted = write(
        chat_file("sorted", "session-test"),
        dict(sorted({**document([PROMPT]), "sessionId": "sorted-keys"}.items())),
    )
    found = adapter.session_at(str(path))
    assert found is not None and found.session_id == SESSION
    assert listed_session_id(str(unsorted)) == "sorted-keys"
    assert {s.session_id for s in adapter.sessions(0.0)} == {SESSION, "sorted-keys"}
    not_chats = [
        write(chat_file("x", "session-a"), {"sessionId": "no-messages"}),
        write(chat_file("x", "session-b"), [PROMPT]),
        write(chat_file("x", "session-c"), {"messages": [PROMPT]}),
    ]
    for other in not_chats:
        assert adapter.session_at(str(other)) is None
    settings = write(Path(os.environ["GEMINI_CLI_HOME"]) / "settings.json", {"messages": []})
    assert adapter.session_at(str(settings)) is None


def test_index_and_show_read_a_document(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(chat_file(), last_version())
    report = agentspool.index_history()
    assert (report.new, report.failed) == (1, 0)
    for ref in (str(path), SESSION[:8]):  # by its file, and by its id from the index
        assert cli_main(["show", ref, "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        texts = [r.get("text") for r in shown["conversation"]]
        assert "rename parse_args to read_options" in texts
        assert "Renamed in two places." in texts
