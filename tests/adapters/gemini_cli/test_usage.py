"""``agentspool usage`` counts Gemini CLI sessions from their chat files, as the CLI
recorded the tokens (docs/providers/gemini-cli.md §4.6): ``cached`` is part of
``input``, thoughts are output; a re-appended record counts once."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import agentspool

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"


def _place(scenario: str, project: str) -> Path:
    """The capture's chat file where Gemini CLI keeps it, its project recorded."""
    tmp = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "work"
    (tmp / "chats").mkdir(parents=True, exist_ok=True)
    (tmp / ".project_root").write_text(project)
    [chat] = (CAPTURES / scenario / "chats").iterdir()
    return Path(shutil.copy(chat, tmp / "chats"))


def test_usage_by_session_and_project() -> None:
    path = _place("tui-approve", "/srv/project")
    report = agentspool.usage(by="session", providers=["gemini-cli"], timezone="UTC")
    [row] = report.rows
    assert (row.provider, row.path, row.models) == ("gemini-cli", str(path), ["gemini-3.8-flash"])
    # Two answers (the call's record re-appended with its toolCalls counts once), each:
    # 120 prompt tokens of which 64 cached, 12 output and 3 of thoughts.
    assert (row.input_tokens, row.cache_read_tokens, row.cache_write_tokens) == (112, 128, 0)
    assert row.output_tokens == 30
    [by_project] = agentspool.usage(by="project", providers=["gemini-cli"], index=False).rows
    assert by_project.key == "/srv/project"
    assert by_project.total_tokens == row.total_tokens == 112 + 128 + 30


# -- the counting rules learned from real users' files (ADR 0025, Gemini CLI) ----------

TOKENS = {"input": 5000, "output": 40, "cached": 3000, "thoughts": 110, "tool": 7, "total": 5157}
PLAIN_INPUT = 5000 - 3000 + 7  # neither read from the cache; the tool-use prompt is input
OUTPUT = 40 + 110  # thoughts are billed as output


def _chats(project: str) -> Path:
    chats = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / project / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    return chats


def _answer(record_id: str, stamp: str, **more: object) -> dict[str, object]:
    return {
        "id": record_id,
        "timestamp": stamp,
        "type": "gemini",
        "content": "Done.",
        "thoughts": [],
        "model": "gemini-2.5-flash",
        "tokens": TOKENS,
        **more,
    }


def _prompt(record_id: str, stamp: str) -> dict[str, object]:
    return {"id": record_id, "timestamp": stamp, "type": "user", "content": "tidy the imports"}


def _document(session: str, messages: list[dict[str, object]]) -> bytes:
    return json.dumps(
        {
            "sessionId": session,
            "projectHash": "ab12",
            "startTime": "2026-01-07T08:00:00.000Z",
            "lastUpdated": "2026-01-07T08:00:09.000Z",
            "messages": messages,
        },
        indent=2,
    ).encode()


def _row(session: str) -> tuple[int, int, int, int]:
    rows = agentspool.usage(by="session", providers=["gemini-cli"], timezone="UTC").rows
    [row] = [r for r in rows if r.key == session]
    return row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens


def test_the_older_document_and_the_log_count_alike() -> None:
    """The same answer's tokens, once in each format: the same four figures."""
    prompt = _prompt("p-1", "2026-01-07T08:00:01.000Z")
    answer = _answer("g-1", "2026-01-07T08:00:05.000Z")
    (_chats("old") / "session-2026-01-07T08-00-0a0a0a0a.json").write_bytes(
        _document("0a0a0a0a-old", [prompt, answer])
    )
    meta = {
        "sessionId": "0b0b0b0b-log",
        "projectHash": "ab12",
        "startTime": "2026-01-07T08:00:00.000Z",
        "lastUpdated": "2026-01-07T08:00:00.000Z",
        "kind": "main",
    }
    # Other ids: the same id at the same time in two sessions is one answer copied.
    log = [
        meta,
        {**prompt, "id": "p-9", "content": [{"text": "tidy the imports"}]},
        {**answer, "id": "g-9"},
    ]
    (_chats("new") / "session-2026-01-07T08-00-0b0b0b0b.jsonl").write_bytes(
        b"".join(json.dumps(line).encode() + b"\n" for line in log)
    )
    expected = (PLAIN_INPUT, OUTPUT, 3000, 0)
    assert _row("0a0a0a0a-old") == expected
    assert _row("0b0b0b0b-log") == expected


def test_copies_of_one_session_count_each_answer_once() -> None:
    """Two files with one ``sessionId`` (the same document copied at two moments: the
    later holds the earlier's records, same ids): one session, each answer once."""
    early = [_prompt("p-1", "2026-01-07T08:00:01.000Z"), _answer("g-1", "2026-01-07T08:00:05.000Z")]
    late = [
        *early,
        _prompt("p-2", "2026-01-07T08:01:00.000Z"),
        _answer("g-2", "2026-01-07T08:01:04.000Z"),
    ]
    (_chats("copy-a") / "session-2026-01-07T08-00-0c0c0c0c.json").write_bytes(
        _document("0c0c0c0c-copied", early)
    )
    (_chats("copy-b") / "session-2026-01-07T08-00-0c0c0c0c.json").write_bytes(
        _document("0c0c0c0c-copied", late)
    )
    assert _row("0c0c0c0c-copied") == (2 * PLAIN_INPUT, 2 * OUTPUT, 2 * 3000, 0)


def test_an_answer_naming_no_model_counts_unpriced() -> None:
    answer = _answer("g-1", "2026-01-07T08:00:05.000Z")
    del answer["model"]
    (_chats("nomodel") / "session-2026-01-07T08-00-0d0d0d0d.json").write_bytes(
        _document("0d0d0d0d-nomodel", [_prompt("p-1", "2026-01-07T08:00:01.000Z"), answer])
    )
    report = agentspool.usage(by="session", providers=["gemini-cli"], timezone="UTC")
    [row] = report.rows
    assert (row.input_tokens, row.output_tokens, row.cache_read_tokens) == (
        PLAIN_INPUT,
        OUTPUT,
        3000,
    )
    assert row.cost_usd is None and row.unpriced_tokens == PLAIN_INPUT + OUTPUT + 3000


def test_a_record_written_again_with_other_tokens_counts_its_latest() -> None:
    """A record replaced in place states its tokens anew: they replace the earlier ones,
    in the log as in the document."""
    meta = {
        "sessionId": "0e0e0e0e-restated",
        "projectHash": "ab12",
        "startTime": "2026-01-07T08:00:00.000Z",
        "lastUpdated": "2026-01-07T08:00:00.000Z",
        "kind": "main",
    }
    first = _answer("g-1", "2026-01-07T08:00:05.000Z", content="")
    again = _answer("g-1", "2026-01-07T08:00:05.000Z", tokens={**TOKENS, "output": 60})
    lines = [meta, {**_prompt("p-1", "2026-01-07T08:00:01.000Z")}, first, again]
    (_chats("restated") / "session-2026-01-07T08-00-0e0e0e0e.jsonl").write_bytes(
        b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    )
    assert _row("0e0e0e0e-restated") == (PLAIN_INPUT, 60 + 110, 3000, 0)
