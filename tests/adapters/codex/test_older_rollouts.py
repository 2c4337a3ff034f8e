"""Rollouts of the Codex releases before the pinned one, and other writers' copies of the
format (docs/providers/codex.md §10): each rule learned from real transcripts, on a small
rollout written here by hand.

The shapes are the ones real 0.34-0.146 rollouts have; the texts, ids and numbers are
made up for these tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentspool.adapters.codex import Codex
from agentspool.adapters.codex._rollout import HistoryParser, RolloutParser
from agentspool.core import events as ev
from agentspool.core.reducer import INITIAL, chat_state, step
from agentspool.core.runs import prompt_title
from agentspool.core.seam import Session, SourceDrift

THREAD = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def line(stamp: str, kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}, separators=(",", ":"))


def meta(stamp: str, version: str, **payload: Any) -> str:
    fields = {"id": THREAD, "cwd": "/w", "cli_version": version, **payload}
    return line(stamp, "session_meta", fields)


def item(stamp: str, of: str, **payload: Any) -> str:
    return line(stamp, "response_item", {"type": of, **payload})


def said(stamp: str, role: str, text: str, **payload: Any) -> str:
    part = "output_text" if role == "assistant" else "input_text"
    content = [{"type": part, "text": text}]
    return item(stamp, "message", role=role, content=content, **payload)


def event(stamp: str, of: str, **payload: Any) -> str:
    return line(stamp, "event_msg", {"type": of, **payload})


def usage(n: tuple[int, ...]) -> dict[str, int]:
    names = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
    return dict(zip(names, n, strict=False))


def tokens(
    stamp: str, total: tuple[int, ...] | None, last: tuple[int, ...] | None = None, **info: Any
) -> str:
    if total is not None:
        info["total_token_usage"] = usage(total)
    if last is not None:
        info["last_token_usage"] = usage(last)
    return event(stamp, "token_count", info=info)


def rollout(*lines: str) -> str:
    return "\n".join(lines)


def parse(text: str, thread: str = THREAD) -> RolloutParser:
    parser = RolloutParser(thread)
    for line in text.strip().splitlines():
        parser.feed_line(line.encode())
    return parser


def state(parser: RolloutParser) -> str:
    folded = INITIAL
    for event in parser.events:
        folded = step(folded, event)
    return chat_state(folded)


def shown(parser: RolloutParser) -> list[tuple[str, str, str]]:
    """(role, kind, text) of the records a reader sees."""
    return [
        (m.role, m.kind, m.text)
        for m in parser.messages
        if m.visibility == "visible" and not m.is_meta
    ]


def drift(parser: RolloutParser) -> SourceDrift:
    return parser.drift.snapshot(parser.corrupt)


# A 0.36-era turn: the prompt as a response item then as a UI event; the streamed
# reasoning and answer as UI events first, usage, then the response items; a tool call;
# a second response whose token_count comes twice; the next prompt.
ERA_036 = rollout(
    meta("2025-09-01T10:00:00.000Z", "0.36.0", cwd="/home/dev/app", instructions=None),
    said("2025-09-01T10:00:01.000Z", "user", "<environment_context>\n  <cwd>/a</cwd>"),
    said("2025-09-01T10:00:05.000Z", "user", "rename the helper"),
    event("2025-09-01T10:00:05.001Z", "user_message", message="rename the helper", kind="plain"),
    line("2025-09-01T10:00:05.002Z", "turn_context", {"model": "gpt-5-codex", "cwd": "/a"}),
    event("2025-09-01T10:00:07.000Z", "agent_reasoning", text="**Finding the helper**"),
    event("2025-09-01T10:00:07.100Z", "agent_message", message="Looking for it."),
    tokens("2025-09-01T10:00:07.200Z", (3000, 1000, 70, 40), (3000, 1000, 70, 40)),
    item(
        "2025-09-01T10:00:07.300Z",
        "reasoning",
        id="rs_a",
        summary=[{"type": "summary_text", "text": "**Finding the helper**"}],
        encrypted_content="gAAA",
    ),
    said("2025-09-01T10:00:07.300Z", "assistant", "Looking for it.", id="msg_a"),
    item(
        "2025-09-01T10:00:07.300Z",
        "function_call",
        name="shell",
        arguments='{"command":["rg","helper"]}',
        call_id="call_a",
    ),
    item("2025-09-01T10:00:07.400Z", "function_call_output", call_id="call_a", output="util.py:3"),
    tokens("2025-09-01T10:00:09.000Z", (6500, 3900, 95, 40), (3500, 2900, 25, 0)),
    tokens("2025-09-01T10:00:09.100Z", (6500, 3900, 95, 40), (3500, 2900, 25, 0)),
    said("2025-09-01T10:00:09.200Z", "assistant", "Renamed.", id="msg_b"),
    said("2025-09-01T10:00:30.000Z", "user", "thanks"),
)


def test_usage_is_token_count_counted_once_per_response() -> None:
    parser = parse(ERA_036)
    assert (parser.usage.input_tokens, parser.usage.cached_input_tokens) == (6500, 3900)
    assert (parser.usage.output_tokens, parser.usage.reasoning_tokens) == (95, 40)
    priced = [m for m in parser.messages if m.usage is not None]
    assert [(m.usage.input_tokens, m.usage.output_tokens) for m in priced if m.usage] == [
        (3000, 70),
        (3500, 25),
    ]
    # Each on a hidden record of its own, priced at the turn's model, its id the running
    # total (what a fork's copy of it repeats).
    assert {(m.visibility, m.is_meta, m.model) for m in priced} == {("hidden", True, "gpt-5-codex")}
    assert [m.message_id for m in priced] == ["total:3000/1000/70/40", "total:6500/3900/95/40"]


def test_what_codex_writes_twice_is_shown_once() -> None:
    parser = parse(ERA_036)
    assert shown(parser) == [
        ("user", "text", "rename the helper"),
        ("assistant", "thinking", "**Finding the helper**"),
        ("assistant", "text", "Looking for it."),
        ("assistant", "tool_call", ""),
        ("tool", "tool_result", "util.py:3"),
        ("assistant", "text", "Renamed."),
        ("user", "text", "thanks"),
    ]
    assert drift(parser) == SourceDrift()
    assert (parser.thread_id, parser.cwd, parser.cli_version) == (THREAD, "/home/dev/app", "0.36.0")


def test_a_prompt_opens_a_turn_and_the_next_prompt_closes_it() -> None:
    lines = ERA_036.splitlines()
    assert state(parse("\n".join(lines[:-1]))) == "working"  # no record ends the turn
    after = parse(ERA_036)
    turns = [(type(e).__name__, e.source) for e in after.events if "Turn" in type(e).__name__]
    assert turns == [
        ("TurnStarted", "transcript:prompt"),
        ("TurnStopped", "transcript:next-prompt"),
        ("TurnStarted", "transcript:prompt"),
    ]


def test_injected_context_is_hidden_and_the_title_is_the_first_prompt() -> None:
    parser = parse(
        rollout(
            meta("2025-11-14T00:00:16.000Z", "0.57.0"),
            said("2025-11-14T00:00:17.000Z", "user", "# AGENTS.md instructions for /w\n\nTabs."),
            said("2025-11-14T00:00:17.000Z", "user", "<user_instructions>\nBe brief."),
            said("2025-11-14T00:00:17.000Z", "user", "<environment_context>\n  <cwd>/w</cwd>"),
            said("2025-11-14T00:00:20.000Z", "user", "why is the build red?"),
        )
    )
    assert all((m.visibility, m.is_meta) == ("hidden", True) for m in parser.messages[:3])
    assert next(t for t in map(prompt_title, parser.messages) if t) == "why is the build red?"


def test_a_prompt_only_a_ui_event_holds_is_the_record_and_opens_a_turn() -> None:
    # 0.146 writes the prompt's UI event first, then task_started, then the item.
    passthrough = {"internal_chat_message_metadata_passthrough": {"turn_id": "t-1"}}
    parser = parse(
        rollout(
            meta("2026-08-01T09:00:00.000Z", "0.146.0"),
            event("2026-08-01T09:00:01.000Z", "user_message", message="list", images=[]),
            event("2026-08-01T09:00:01.010Z", "task_started", turn_id="t-1"),
            said(
                "2026-08-01T09:00:01.020Z", "user", "list", id="m-1", phase="input", **passthrough
            ),
            said("2026-08-01T09:00:03.000Z", "assistant", "Two files.", id="m-2", **passthrough),
            event("2026-08-01T09:00:03.010Z", "agent_message", message="Two files.", phase="x"),
            event("2026-08-01T09:00:03.020Z", "task_complete", turn_id="t-1"),
        )
    )
    assert shown(parser) == [("user", "text", "list"), ("assistant", "text", "Two files.")]
    assert state(parser) == "needs_input"
    assert drift(parser) == SourceDrift()


def test_reasoning_only_encrypted_is_kept_hidden() -> None:
    # 0.34 writes most reasoning items with no summary: paid for, nothing to read.
    parser = parse(
        rollout(
            meta("2025-10-31T19:00:00.000Z", "0.34.0"),
            said("2025-10-31T19:00:01.000Z", "user", "go"),
            item("2025-10-31T19:00:02.000Z", "reasoning", summary=[], encrypted_content="gAAA"),
        )
    )
    thought = parser.messages[-1]
    assert (thought.kind, thought.text, thought.visibility) == ("thinking", "", "hidden")


def test_a_cut_off_answer_is_kept_from_its_ui_event() -> None:
    # Streamed, then interrupted: the UI event is the only record of what was on screen.
    parser = parse(
        rollout(
            meta("2025-09-02T08:00:00.000Z", "0.36.0"),
            said("2025-09-02T08:00:01.000Z", "user", "explain"),
            event("2025-09-02T08:00:02.000Z", "agent_message", message="First I will"),
            event("2025-09-02T08:00:03.000Z", "turn_aborted", reason="interrupted"),
        )
    )
    assert shown(parser)[-1] == ("assistant", "text", "First I will")
    assert state(parser) == "needs_input"


def test_an_api_error_event_is_an_error_record_and_ends_the_turn() -> None:
    parser = parse(
        rollout(
            meta("2025-10-31T17:00:00.000Z", "0.53.0"),
            said("2025-10-31T17:00:01.000Z", "user", "go on"),
            event("2025-10-31T17:00:02.000Z", "error", message="stream disconnected"),
            event(
                "2025-10-31T17:00:05.000Z",
                "error",
                error={"kind": "rate_limit", "message": "Rate limit reached"},
            ),
        )
    )
    errors = [(m.text, m.is_error) for m in parser.messages if m.kind == "error"]
    assert errors == [("stream disconnected", True), ("Rate limit reached", True)]
    stops = [e for e in parser.events if isinstance(e, ev.TurnStopped)]
    assert [(e.outcome, e.source) for e in stops] == [("failed", "transcript:error")]
    assert state(parser) == "needs_input"


# 0.146: tool search (its arguments an object), a web search the API ran, an image, a
# sub-agent spawned, UI events of calls the items carry, records known and not read.
CHILD = "0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b"
ERA_0146 = rollout(
    meta("2026-08-03T10:00:00.000Z", "0.146.0", memory_mode="off", dynamic_tools={}),
    event("2026-08-03T10:00:00.000Z", "task_started", turn_id="t-9"),
    said("2026-08-03T10:00:01.000Z", "user", "find a charting library", id="u-9"),
    item(
        "2026-08-03T10:00:02.000Z",
        "tool_search_call",
        id="ts-9",
        call_id="call-ts",
        status="completed",
        execution="local",
        arguments={"query": "chart"},
    ),
    item(
        "2026-08-03T10:00:02.100Z",
        "tool_search_output",
        call_id="call-ts",
        tools=[{"type": "function_group", "name": "plots", "tools": [{"name": "draw_chart"}]}],
    ),
    item(
        "2026-08-03T10:00:03.000Z",
        "web_search_call",
        id="ws-9",
        status="completed",
        action={"type": "search", "query": "python charts"},
    ),
    event("2026-08-03T10:00:03.100Z", "web_search_end", call_id="ws-9", query="python charts"),
    item("2026-08-03T10:00:04.000Z", "image_generation_call", id="ig-9", revised_prompt="a bar"),
    event("2026-08-03T10:00:04.100Z", "image_generation_end", call_id="ig-9", result="iVBOR"),
    event(
        "2026-08-03T10:00:05.000Z",
        "collab_agent_spawn_end",
        call_id="call-sp",
        new_thread_id=CHILD,
        new_agent_nickname="Ada",
        prompt="compare two libraries",
    ),
    item("2026-08-03T10:00:05.100Z", "ghost_snapshot", ghost_commit={"id": "abc"}),
    line("2026-08-03T10:00:05.200Z", "inter_agent_communication_metadata", {"trigger": False}),
    event("2026-08-03T10:00:05.300Z", "exec_command_end", call_id="call-x", exit_code=0),
    event("2026-08-03T10:00:05.400Z", "thread_name_updated", thread_name="charts"),
    event("2026-08-03T10:00:06.000Z", "task_complete", turn_id="t-9"),
)


def test_calls_of_the_later_releases_are_tool_calls() -> None:
    parser = parse(ERA_0146)
    calls = [
        (m.tool_name, m.presentation, m.tool_input)
        for m in parser.messages
        if m.kind == "tool_call"
    ]
    assert calls == [
        ("tool_search", "search", {"query": "chart"}),
        ("web_search", "web", {"type": "search", "query": "python charts"}),
        ("image_generation", "other", {"prompt": "a bar"}),
    ]
    found = next(m for m in parser.messages if m.kind == "tool_result")
    assert (found.tool_use_id, found.tool_name, found.text) == (
        "call-ts",
        "tool_search",
        "plots\ndraw_chart",
    )
    link = next(m for m in parser.messages if m.kind == "subagent")
    assert (link.agent_id, link.parent_id, link.text) == (CHILD, "call-sp", "compare two libraries")
    # the API's own search leaves nothing open: the turn ended, nothing waits
    assert state(parser) == "needs_input"
    assert (drift(parser), parser.open_calls) == (SourceDrift(), {})


def test_a_record_type_neither_read_nor_known_is_still_drift() -> None:
    parser = parse(rollout(ERA_0146, event("2026-08-03T10:00:07.000Z", "brand_new_event")))
    assert drift(parser).unknown_types == {"event_msg:brand_new_event": 1}


def test_a_token_usage_record_and_its_token_count_are_one_response() -> None:
    # 0.169 writes both for every response, the record first; then a compaction's
    # context estimate (the running total unchanged, the last response zero).
    record = {
        "turn_id": "t-1",
        "response_id": "resp_1",
        "usage": {**usage((500, 100, 20, 5)), "cache_write_input_tokens": 0},
    }
    parser = parse(
        rollout(
            meta("2026-11-29T10:00:00.000Z", "0.169.0"),
            line("2026-11-29T10:00:01.000Z", "turn_context", {"turn_id": "t-1", "model": "g-5"}),
            said("2026-11-29T10:00:02.000Z", "assistant", "hi", id="m-1"),
            line("2026-11-29T10:00:02.100Z", "token_usage_record", record),
            tokens("2026-11-29T10:00:02.200Z", (500, 100, 20, 5), (500, 100, 20, 5)),
            tokens("2026-11-29T10:00:09.000Z", (500, 100, 20, 5), (0, 0, 0, 0)),
        )
    )
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (500, 20)
    (priced,) = [m for m in parser.messages if m.usage is not None]
    assert (priced.id, priced.message_id, priced.model) == ("m-1", "resp_1", "g-5")


def test_a_running_total_alone_counts_its_growth() -> None:
    parser = parse(
        rollout(
            line("2026-05-01T08:00:00.000Z", "turn_context", {"model": "gpt-5.2"}),
            tokens("2026-05-01T08:01:00.000Z", (800, 200, 40, 10)),
            event("2026-05-01T08:02:00.000Z", "token_count", info=None, rate_limits={}),
            tokens("2026-05-01T08:03:00.000Z", (1900, 700, 90, 10), model="gpt-5.3-codex"),
        )
    )
    priced = [m for m in parser.messages if m.usage is not None]
    found = [
        (m.usage.input_tokens, m.usage.cached_input_tokens, m.usage.output_tokens, m.model)
        for m in priced
        if m.usage
    ]
    assert found == [(800, 200, 40, "gpt-5.2"), (1100, 500, 50, "gpt-5.3-codex")]


def test_json_with_spaces_reads_as_the_same_records() -> None:
    compact = parse(ERA_036)
    loose = parse("\n".join(json.dumps(json.loads(raw)) for raw in ERA_036.splitlines()))
    assert loose.usage == compact.usage
    assert msgspec.json.encode(loose.messages) == msgspec.json.encode(compact.messages)
    assert drift(loose) == SourceDrift()


def test_the_header_names_the_thread_only_with_a_thread_id() -> None:
    made_up = meta("2030-01-01T12:00:00Z", "", id="parent-session")
    assert parse(made_up).thread_id == THREAD  # the file name's
    real = meta("2030-01-01T12:00:00Z", "", id="0199ffff-0000-7000-8000-000000000001")
    assert parse(real).thread_id == "0199ffff-0000-7000-8000-000000000001"


def test_a_fork_names_the_thread_it_copied() -> None:
    parser = HistoryParser(THREAD)
    parent = "0199aaaa-0000-7000-8000-000000000001"
    parser.feed_line(meta("2030-01-01T15:00:00Z", "", id="child", forked_from_id=parent).encode())
    facts = parser.facts()
    assert (facts.session_id, facts.agent_id, facts.parent_session_id) == (THREAD, "", parent)


def test_a_resumed_thread_s_new_file_names_the_thread_it_copies() -> None:
    # 0.36's resume: a new thread whose file holds the old thread's session_meta, then
    # the old thread's lines, under the resume's time.
    old = "0199dddd-0000-7000-8000-000000000001"
    parser = HistoryParser(THREAD)
    for raw in (
        meta("2025-09-16T06:12:31.000Z", "0.36.0"),
        meta("2025-09-16T06:12:37.100Z", "0.36.0", id=old),
        tokens("2025-09-16T06:12:37.101Z", (900, 100, 30, 0), (900, 100, 30, 0)),
    ):
        parser.feed_line(raw.encode())
    facts = parser.facts()
    assert (facts.session_id, facts.parent_session_id) == (THREAD, old)


def test_the_pre_envelope_format_is_read() -> None:
    older = "0199bbbb-0000-7000-8000-000000000002"
    parser = parse(
        rollout(
            json.dumps({"id": older, "timestamp": "2025-07-01T09:00:00Z", "instructions": None}),
            '{"record_type":"state"}',
            json.dumps({"type": "message", "role": "user", "content": "hello there"}),
            json.dumps(
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "greeting"}]}
            ),
            json.dumps({"type": "message", "role": "assistant", "content": "Hello!"}),
            '{"record_type":"state"}',
            '{"note":"an object that names no record"}',
        ),
        thread="",
    )
    assert parser.thread_id == older
    assert shown(parser) == [
        ("user", "text", "hello there"),
        ("assistant", "thinking", "greeting"),
        ("assistant", "text", "Hello!"),
    ]
    assert drift(parser) == SourceDrift()
    assert parse("[1, 2]").corrupt == 1  # not an object: unreadable


def test_peer_shapes_are_read_as_the_calls_and_results_they_are() -> None:
    call = {"name": "shell", "arguments": '{"command":"wc -l a.txt"}'}
    parser = parse(
        rollout(
            meta("2026-01-15T11:00:00.000Z", "1.0.0"),
            said("2026-01-15T11:00:01.000Z", "user", "count lines"),
            item("2026-01-15T11:00:02.000Z", "message", role="assistant", function_call=call),
            item("2026-01-15T11:00:03.000Z", "message", role="function", name="shell", content="3"),
            item(
                "2026-01-15T11:00:04.000Z",
                "function_call",
                call_id="c2",
                name="apply_patch",
                arguments={"patch": "*** Begin Patch"},
            ),
            line(
                "2026-01-15T11:00:05.000Z", "response_item", {"role": "assistant", "content": "Ok"}
            ),
        )
    )
    found = [(m.kind, m.tool_name, m.tool_input or m.text) for m in parser.messages]
    assert found[1:] == [
        ("tool_call", "shell", {"command": "wc -l a.txt"}),
        ("tool_result", "shell", "3"),
        ("tool_call", "apply_patch", {"patch": "*** Begin Patch"}),
        ("text", "", "Ok"),
    ]
    assert drift(parser) == SourceDrift()


@pytest.mark.parametrize("cut", [1, 4, 7, 12, 15])
def test_an_index_resumed_mid_file_reads_what_one_whole_parse_reads(cut: int) -> None:
    lines = ERA_036.splitlines()
    whole = HistoryParser(THREAD)
    for raw in lines:
        whole.feed_line(raw.encode())
    first = HistoryParser(THREAD)
    for raw in lines[:cut]:
        first.feed_line(raw.encode())
    taken = first.take()
    second = HistoryParser.resumed(first.state())
    assert second is not None
    for raw in lines[cut:]:
        second.feed_line(raw.encode())
    taken += second.take()
    assert msgspec.json.encode(taken) == msgspec.json.encode(whole.take())
    assert second.usage.input_tokens + first.usage.input_tokens == whole.usage.input_tokens


def test_a_rollout_without_its_header_is_a_session(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2026-05-12T08-00-00-{THREAD}.jsonl"
    path.write_text(line("2026-05-12T08:00:00.000Z", "turn_context", {"model": "gpt-5.2"}) + "\n")
    session = Codex().session_at(str(path))
    assert session is not None and session.session_id == THREAD
    other = tmp_path / "notes.jsonl"
    other.write_text('{"type":"user","message":"a Claude Code line"}\n')
    assert Codex().session_at(str(other)) is None
    chat = Codex().read_session(Session(session_id=THREAD, transcript_path=str(path)))
    assert chat.drift.transcript == SourceDrift()


def test_a_fork_counts_only_what_it_added_in_usage() -> None:
    import os

    import agentspool

    parent_id = "0199cccc-0000-7000-8000-000000000001"
    fork_id = "0199cccc-0000-7000-8000-000000000002"
    day = Path(os.environ["CODEX_HOME"], "sessions", "2026", "06", "01")
    day.mkdir(parents=True)
    history = [((1000, 400, 50), (1000, 400, 50)), ((2500, 1300, 80), (1500, 900, 30))]
    parent = [meta("2026-06-01T09:00:00.000Z", "0.131.0", id=parent_id)]
    parent += [tokens(f"2026-06-01T09:0{i}:00.000Z", *n) for i, n in enumerate(history, 1)]
    # The fork copies the parent's lines under its own time, then works on.
    fork = [meta("2026-06-03T10:00:00.000Z", "0.131.0", id=fork_id, forked_from_id=parent_id)]
    fork += [tokens(f"2026-06-03T10:00:00.01{i}Z", *n) for i, n in enumerate(history)]
    fork += [tokens("2026-06-03T10:05:00.000Z", (4500, 3100, 90), (2000, 1800, 10))]
    for thread, lines in ((parent_id, parent), (fork_id, fork)):
        (day / f"rollout-2026-06-01T09-00-00-{thread}.jsonl").write_text(rollout(*lines) + "\n")
    rows = {row.key: row for row in agentspool.usage(by="session").rows}
    # usage's input is plain input: the cached part taken out
    assert (rows[parent_id].input_tokens, rows[parent_id].cache_read_tokens) == (1200, 1300)
    assert (rows[fork_id].input_tokens, rows[fork_id].cache_read_tokens) == (200, 1800)
    assert rows[fork_id].output_tokens == 10
