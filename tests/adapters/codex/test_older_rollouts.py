"""Rollouts of the Codex releases before the pinned one, and other writers' copies of the
format (docs/providers/codex.md §10): each rule learned from real transcripts, on a small
rollout written here by hand.

The shapes are the ones real 0.34-0.146 rollouts have; the texts, ids and numbers are
made up for these tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from agentspool.adapters.codex import Codex
from agentspool.adapters.codex._rollout import HistoryParser, RolloutParser
from agentspool.core.reducer import INITIAL, chat_state, step
from agentspool.core.runs import prompt_title
from agentspool.core.seam import Session, SourceDrift

THREAD = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


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
# reasoning and answer as UI events first, usage, then the response items; a tool call.
ERA_036 = """
{"timestamp":"2025-09-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","timestamp":"2025-09-01T10:00:00.000Z","cwd":"/home/dev/app","originator":"codex_cli_rs","cli_version":"0.36.0","instructions":null,"git":{"branch":"main"}}}
{"timestamp":"2025-09-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\\n  <cwd>/home/dev/app</cwd>\\n</environment_context>"}]}}
{"timestamp":"2025-09-01T10:00:05.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"rename the helper"}]}}
{"timestamp":"2025-09-01T10:00:05.001Z","type":"event_msg","payload":{"type":"user_message","message":"rename the helper","kind":"plain"}}
{"timestamp":"2025-09-01T10:00:05.002Z","type":"turn_context","payload":{"cwd":"/home/dev/app","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}
{"timestamp":"2025-09-01T10:00:07.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"**Finding the helper**"}}
{"timestamp":"2025-09-01T10:00:07.100Z","type":"event_msg","payload":{"type":"agent_message","message":"Looking for it."}}
{"timestamp":"2025-09-01T10:00:07.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3000,"cached_input_tokens":1000,"output_tokens":70,"reasoning_output_tokens":40,"total_tokens":3070},"last_token_usage":{"input_tokens":3000,"cached_input_tokens":1000,"output_tokens":70,"reasoning_output_tokens":40,"total_tokens":3070},"model_context_window":272000}}}
{"timestamp":"2025-09-01T10:00:07.300Z","type":"response_item","payload":{"type":"reasoning","id":"rs_a","summary":[{"type":"summary_text","text":"**Finding the helper**"}],"content":null,"encrypted_content":"gAAA"}}
{"timestamp":"2025-09-01T10:00:07.300Z","type":"response_item","payload":{"type":"message","id":"msg_a","role":"assistant","content":[{"type":"output_text","text":"Looking for it."}]}}
{"timestamp":"2025-09-01T10:00:07.300Z","type":"response_item","payload":{"type":"function_call","id":"fc_a","name":"shell","arguments":"{\\"command\\":[\\"rg\\",\\"helper\\"]}","call_id":"call_a"}}
{"timestamp":"2025-09-01T10:00:07.400Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_a","output":"{\\"output\\":\\"util.py:3\\"}"}}
{"timestamp":"2025-09-01T10:00:07.500Z","type":"turn_context","payload":{"cwd":"/home/dev/app","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}
{"timestamp":"2025-09-01T10:00:09.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":6500,"cached_input_tokens":3900,"output_tokens":95,"reasoning_output_tokens":40,"total_tokens":6595},"last_token_usage":{"input_tokens":3500,"cached_input_tokens":2900,"output_tokens":25,"reasoning_output_tokens":0,"total_tokens":3525},"model_context_window":272000}}}
{"timestamp":"2025-09-01T10:00:09.100Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":6500,"cached_input_tokens":3900,"output_tokens":95,"reasoning_output_tokens":40,"total_tokens":6595},"last_token_usage":{"input_tokens":3500,"cached_input_tokens":2900,"output_tokens":25,"reasoning_output_tokens":0,"total_tokens":3525},"model_context_window":272000}}}
{"timestamp":"2025-09-01T10:00:09.200Z","type":"response_item","payload":{"type":"message","id":"msg_b","role":"assistant","content":[{"type":"output_text","text":"Renamed."}]}}
{"timestamp":"2025-09-01T10:00:30.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}
"""


def test_usage_is_token_count_counted_once_per_response() -> None:
    parser = parse(ERA_036)
    # Two responses: the second token_count repeats the running total (counted once).
    assert (parser.usage.input_tokens, parser.usage.cached_input_tokens) == (6500, 3900)
    assert (parser.usage.output_tokens, parser.usage.reasoning_tokens) == (95, 40)
    priced = [m for m in parser.messages if m.usage is not None]
    assert [(m.usage.input_tokens, m.usage.output_tokens) for m in priced] == [
        (3000, 70),
        (3500, 25),
    ]
    # Each its own hidden record, priced at the model the turn ran on, its id the
    # running total (what a fork's copy of it repeats).
    assert all(
        (m.visibility, m.is_meta, m.model) == ("hidden", True, "gpt-5-codex") for m in priced
    )
    assert [m.message_id for m in priced] == ["total:3000/1000/70/40", "total:6500/3900/95/40"]


def test_what_codex_writes_twice_is_shown_once() -> None:
    parser = parse(ERA_036)
    assert shown(parser) == [
        ("user", "text", "rename the helper"),
        ("assistant", "thinking", "**Finding the helper**"),
        ("assistant", "text", "Looking for it."),
        ("assistant", "tool_call", ""),
        ("tool", "tool_result", '{"output":"util.py:3"}'),
        ("assistant", "text", "Renamed."),
        ("user", "text", "thanks"),
    ]
    assert drift(parser) == SourceDrift()
    assert (parser.thread_id, parser.cwd, parser.cli_version) == (THREAD, "/home/dev/app", "0.36.0")


def test_a_prompt_opens_a_turn_and_the_next_prompt_closes_it() -> None:
    lines = ERA_036.strip().splitlines()
    before = parse("\n".join(lines[:-1]))
    assert state(before) == "working"  # no record says the turn is over
    after = parse(ERA_036)
    turns = [(type(e).__name__, e.source) for e in after.events if "Turn" in type(e).__name__]
    assert turns == [
        ("TurnStarted", "transcript:prompt"),
        ("TurnStopped", "transcript:next-prompt"),
        ("TurnStarted", "transcript:prompt"),
    ]
    assert after.messages[-1].text == "thanks"


def test_injected_context_is_hidden_and_the_title_is_the_first_prompt() -> None:
    parser = parse(
        """
{"timestamp":"2025-11-14T00:00:16.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/srv/site","cli_version":"0.57.0"}}
{"timestamp":"2025-11-14T00:00:17.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /srv/site\\n\\n<INSTRUCTIONS>\\nUse tabs.\\n</INSTRUCTIONS>"}]}}
{"timestamp":"2025-11-14T00:00:17.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>\\nBe brief.\\n</user_instructions>"}]}}
{"timestamp":"2025-11-14T00:00:17.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\\n  <cwd>/srv/site</cwd>\\n</environment_context>"}]}}
{"timestamp":"2025-11-14T00:00:20.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"why is the build red?"}]}}
"""
    )
    injected = parser.messages[:3]
    assert all((m.visibility, m.is_meta) == ("hidden", True) for m in injected)
    assert next(t for t in map(prompt_title, parser.messages) if t) == "why is the build red?"


def test_a_prompt_only_a_ui_event_holds_is_the_record_and_opens_a_turn() -> None:
    # A prompt the rollout holds only as a UI event, then a task_started turn.
    parser = parse(
        """
{"timestamp":"2026-08-01T09:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/w","cli_version":"0.146.0"}}
{"timestamp":"2026-08-01T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"list the files","images":[],"local_images":[],"text_elements":[],"client_id":"cli"}}
{"timestamp":"2026-08-01T09:00:01.010Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t-1","started_at":"2026-08-01T09:00:01.010Z","model_context_window":258400,"collaboration_mode_kind":"default"}}
{"timestamp":"2026-08-01T09:00:01.020Z","type":"response_item","payload":{"type":"message","id":"m-1","role":"user","phase":"input","content":[{"type":"input_text","text":"list the files"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t-1"}}}
{"timestamp":"2026-08-01T09:00:03.000Z","type":"response_item","payload":{"type":"message","id":"m-2","role":"assistant","phase":"final_answer","content":[{"type":"output_text","text":"Two files."}],"internal_chat_message_metadata_passthrough":{"turn_id":"t-1"}}}
{"timestamp":"2026-08-01T09:00:03.010Z","type":"event_msg","payload":{"type":"agent_message","message":"Two files.","phase":"final_answer","memory_citation":null}}
{"timestamp":"2026-08-01T09:00:03.020Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t-1","last_agent_message":"Two files."}}
"""
    )
    assert shown(parser) == [
        ("user", "text", "list the files"),
        ("assistant", "text", "Two files."),
    ]
    assert state(parser) == "needs_input"
    assert drift(parser) == SourceDrift()


def test_a_cut_off_answer_is_kept_from_its_ui_event() -> None:
    # Streamed, then interrupted: the event is the only record of what was on screen;
    # the answer given after is a different text, not its echo.
    parser = parse(
        """
{"timestamp":"2025-09-02T08:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/w","cli_version":"0.36.0"}}
{"timestamp":"2025-09-02T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"explain"}]}}
{"timestamp":"2025-09-02T08:00:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"First I will"}}
{"timestamp":"2025-09-02T08:00:03.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}
"""
    )
    assert shown(parser)[-1] == ("assistant", "text", "First I will")
    assert state(parser) == "needs_input"


def test_an_api_error_event_is_an_error_record_and_ends_the_turn() -> None:
    parser = parse(
        """
{"timestamp":"2025-10-31T17:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/w","cli_version":"0.53.0"}}
{"timestamp":"2025-10-31T17:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go on"}]}}
{"timestamp":"2025-10-31T17:00:02.000Z","type":"event_msg","payload":{"type":"error","message":"stream disconnected before completion"}}
{"timestamp":"2025-10-31T17:00:05.000Z","type":"event_msg","payload":{"type":"error","error":{"kind":"rate_limit","message":"Rate limit reached"}}}
"""
    )
    errors = [(m.kind, m.text, m.is_error) for m in parser.messages if m.kind == "error"]
    assert errors == [
        ("error", "stream disconnected before completion", True),
        ("error", "Rate limit reached", True),
    ]
    stops = [e for e in parser.events if type(e).__name__ == "TurnStopped"]
    assert [(e.outcome, e.source) for e in stops] == [("failed", "transcript:error")]
    assert state(parser) == "needs_input"


# 0.146: tool search (its arguments an object), a web search the API ran, an image, a
# sub-agent spawned, UI events of calls the items carry, records not read.
ERA_0146 = """
{"timestamp":"2026-08-03T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/w","cli_version":"0.146.0","memory_mode":"off","dynamic_tools":{"type":"dynamic"}}}
{"timestamp":"2026-08-03T10:00:00.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t-9","started_at":"2026-08-03T10:00:00.000Z","model_context_window":258400,"collaboration_mode_kind":"default"}}
{"timestamp":"2026-08-03T10:00:01.000Z","type":"response_item","payload":{"type":"message","id":"u-9","role":"user","content":[{"type":"input_text","text":"find a charting library"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t-9"}}}
{"timestamp":"2026-08-03T10:00:02.000Z","type":"response_item","payload":{"type":"tool_search_call","id":"ts-9","call_id":"call-ts","status":"completed","execution":"local","arguments":{"query":"chart"},"internal_chat_message_metadata_passthrough":{"turn_id":"t-9"}}}
{"timestamp":"2026-08-03T10:00:02.100Z","type":"response_item","payload":{"type":"tool_search_output","id":"tso-9","call_id":"call-ts","status":"completed","execution":"local","tools":[{"type":"function_group","name":"plots","tools":[{"type":"function","name":"draw_chart"}]}],"internal_chat_message_metadata_passthrough":{"turn_id":"t-9"}}}
{"timestamp":"2026-08-03T10:00:03.000Z","type":"response_item","payload":{"type":"web_search_call","id":"ws-9","status":"completed","action":{"type":"search","query":"python chart library","queries":["python chart library"]},"internal_chat_message_metadata_passthrough":{"turn_id":"t-9"}}}
{"timestamp":"2026-08-03T10:00:03.100Z","type":"event_msg","payload":{"type":"web_search_end","call_id":"ws-9","query":"python chart library","action":{"type":"search"},"results":[]}}
{"timestamp":"2026-08-03T10:00:04.000Z","type":"response_item","payload":{"type":"image_generation_call","id":"ig-9","status":"completed","revised_prompt":"a bar chart","result":"iVBOR"}}
{"timestamp":"2026-08-03T10:00:04.100Z","type":"event_msg","payload":{"type":"image_generation_end","call_id":"ig-9","status":"completed","revised_prompt":"a bar chart","result":"iVBOR"}}
{"timestamp":"2026-08-03T10:00:05.000Z","type":"event_msg","payload":{"type":"collab_agent_spawn_end","call_id":"call-sp","sender_thread_id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","new_thread_id":"0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b","new_agent_nickname":"Ada","new_agent_role":"explorer","prompt":"compare two libraries","status":"pending_init"}}
{"timestamp":"2026-08-03T10:00:05.100Z","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{"id":"abc","parent":"def"}}}
{"timestamp":"2026-08-03T10:00:05.200Z","type":"inter_agent_communication_metadata","payload":{"trigger_turn":false}}
{"timestamp":"2026-08-03T10:00:05.300Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"call-x","command":["ls"],"exit_code":0}}
{"timestamp":"2026-08-03T10:00:05.400Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","thread_name":"charts"}}
{"timestamp":"2026-08-03T10:00:06.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t-9","last_agent_message":null}}
"""


def test_calls_of_the_later_releases_are_tool_calls() -> None:
    parser = parse(ERA_0146)
    calls = [
        (m.tool_name, m.presentation, m.tool_input)
        for m in parser.messages
        if m.kind == "tool_call"
    ]
    assert calls == [
        ("tool_search", "search", {"query": "chart"}),
        (
            "web_search",
            "web",
            {
                "type": "search",
                "query": "python chart library",
                "queries": ["python chart library"],
            },
        ),
        ("image_generation", "other", {"prompt": "a bar chart"}),
    ]
    found = next(m for m in parser.messages if m.kind == "tool_result")
    assert (found.tool_use_id, found.tool_name, found.text) == (
        "call-ts",
        "tool_search",
        "plots\ndraw_chart",
    )
    link = next(m for m in parser.messages if m.kind == "subagent")
    assert (link.agent_id, link.parent_id, link.text) == (
        "0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b",
        "call-sp",
        "compare two libraries",
    )
    # the API's own search leaves nothing open: the turn ended, nothing waits
    assert state(parser) == "needs_input"
    assert (drift(parser), parser.open_calls) == (SourceDrift(), {})


def test_a_record_type_neither_read_nor_known_is_still_drift() -> None:
    parser = parse(
        ERA_0146
        + '{"timestamp":"2026-08-03T10:00:07.000Z","type":"event_msg","payload":{"type":"brand_new_event"}}\n'
    )
    assert drift(parser).unknown_types == {"event_msg:brand_new_event": 1}


def test_a_token_usage_record_and_its_token_count_are_one_response() -> None:
    # 0.169 writes both for every response, the record first.
    parser = parse(
        """
{"timestamp":"2026-11-29T10:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/w","cli_version":"0.169.0"}}
{"timestamp":"2026-11-29T10:00:01.000Z","ordinal":1,"type":"turn_context","payload":{"turn_id":"t-1","model":"gpt-5.5"}}
{"timestamp":"2026-11-29T10:00:02.000Z","ordinal":2,"type":"response_item","payload":{"type":"message","id":"m-1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
{"timestamp":"2026-11-29T10:00:02.100Z","ordinal":3,"type":"token_usage_record","payload":{"turn_id":"t-1","response_id":"resp_1","usage":{"input_tokens":500,"cached_input_tokens":100,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":520}}}
{"timestamp":"2026-11-29T10:00:02.200Z","ordinal":4,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":500,"cached_input_tokens":100,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":520},"last_token_usage":{"input_tokens":500,"cached_input_tokens":100,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":520}}}}
{"timestamp":"2026-11-29T10:00:09.000Z","ordinal":5,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":500,"cached_input_tokens":100,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":520},"last_token_usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":4100}}}}
"""
    )
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (500, 20)
    (priced,) = [m for m in parser.messages if m.usage is not None]
    assert (priced.id, priced.message_id, priced.model) == ("m-1", "resp_1", "gpt-5.5")


def test_a_running_total_alone_counts_its_growth() -> None:
    parser = parse(
        """
{"timestamp":"2026-05-01T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.2"}}
{"timestamp":"2026-05-01T08:01:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":800,"cached_input_tokens":200,"output_tokens":40,"reasoning_output_tokens":10,"total_tokens":840}}}}
{"timestamp":"2026-05-01T08:02:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":3.0}}}}
{"timestamp":"2026-05-01T08:03:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1900,"cached_input_tokens":700,"output_tokens":90,"reasoning_output_tokens":10,"total_tokens":1990},"model":"gpt-5.3-codex"}}}
"""
    )
    priced = [m for m in parser.messages if m.usage is not None]
    assert [
        (m.usage.input_tokens, m.usage.cached_input_tokens, m.usage.output_tokens, m.model)
        for m in priced
    ] == [
        (800, 200, 40, "gpt-5.2"),
        (1100, 500, 50, "gpt-5.3-codex"),  # the event names its own model
    ]


def test_json_with_spaces_reads_as_the_same_records() -> None:
    compact = parse(ERA_036)
    spaced = "\n".join(json.dumps(json.loads(line)) for line in ERA_036.strip().splitlines())
    loose = parse(spaced)
    assert loose.usage == compact.usage
    assert msgspec.json.encode(loose.messages) == msgspec.json.encode(compact.messages)
    assert drift(loose) == SourceDrift()


def test_the_header_names_the_thread_only_with_a_thread_id() -> None:
    made_up = '{"timestamp":"2030-01-01T12:00:00Z","type":"session_meta","payload":{"id":"parent-session"}}'
    assert parse(made_up).thread_id == THREAD  # the file name's
    real = '{"timestamp":"2030-01-01T12:00:00Z","type":"session_meta","payload":{"id":"0199ffff-0000-7000-8000-000000000001"}}'
    assert parse(real).thread_id == "0199ffff-0000-7000-8000-000000000001"


def test_a_fork_names_the_thread_it_copied() -> None:
    parser = HistoryParser(THREAD)
    parser.feed_line(
        b'{"timestamp":"2030-01-01T15:00:00Z","type":"session_meta","payload":{"id":"child","forked_from_id":"0199aaaa-0000-7000-8000-000000000001"}}'
    )
    facts = parser.facts()
    assert (facts.session_id, facts.agent_id, facts.parent_session_id) == (
        THREAD,
        "",
        "0199aaaa-0000-7000-8000-000000000001",
    )


def test_the_pre_envelope_format_is_read() -> None:
    parser = parse(
        """
{"id":"0199bbbb-0000-7000-8000-000000000002","timestamp":"2025-07-01T09:00:00.000Z","instructions":null,"git":{"branch":"main"}}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"hello there"}]}
{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"greeting"}],"encrypted_content":"gAAA"}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello!"}]}
{"record_type":"state"}
{"note":"an object that names no record"}
""",
        thread="",
    )
    assert parser.thread_id == "0199bbbb-0000-7000-8000-000000000002"
    assert shown(parser) == [
        ("user", "text", "hello there"),
        ("assistant", "thinking", "greeting"),
        ("assistant", "text", "Hello!"),
    ]
    assert drift(parser) == SourceDrift()
    assert parse("[1, 2]").corrupt == 1  # not an object: unreadable


def test_peer_shapes_are_read_as_the_calls_and_results_they_are() -> None:
    parser = parse(
        """
{"timestamp":"2026-01-15T11:00:00.000Z","type":"session_meta","payload":{"id":"t","cwd":"/w","cli_version":"1.0.0"}}
{"timestamp":"2026-01-15T11:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"count lines"}]}}
{"timestamp":"2026-01-15T11:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":null,"function_call":{"name":"shell","arguments":"{\\"command\\":\\"wc -l a.txt\\"}"}}}
{"timestamp":"2026-01-15T11:00:03.000Z","type":"response_item","payload":{"type":"message","role":"function","name":"shell","content":"3 a.txt"}}
{"timestamp":"2026-01-15T11:00:04.000Z","type":"response_item","payload":{"type":"function_call","call_id":"c2","name":"apply_patch","arguments":{"patch":"*** Begin Patch"}}}
{"timestamp":"2026-01-15T11:00:05.000Z","type":"response_item","payload":{"content":[{"type":"output_text","text":"Done."}],"role":"assistant"}}
"""
    )
    kinds = [(m.kind, m.tool_name, m.tool_input or m.text) for m in parser.messages]
    assert kinds[1:] == [
        ("tool_call", "shell", {"command": "wc -l a.txt"}),
        ("tool_result", "shell", "3 a.txt"),
        ("tool_call", "apply_patch", {"patch": "*** Begin Patch"}),
        ("text", "", "Done."),
    ]
    assert drift(parser) == SourceDrift()


@pytest.mark.parametrize("cut", [1, 4, 7, 12, 15])
def test_an_index_resumed_mid_file_reads_what_one_whole_parse_reads(cut: int) -> None:
    lines = ERA_036.strip().splitlines()
    whole = HistoryParser(THREAD)
    for line in lines:
        whole.feed_line(line.encode())
    first = HistoryParser(THREAD)
    for line in lines[:cut]:
        first.feed_line(line.encode())
    taken = first.take()
    second = HistoryParser.resumed(first.state())
    assert second is not None
    for line in lines[cut:]:
        second.feed_line(line.encode())
    taken += second.take()
    assert msgspec.json.encode(taken) == msgspec.json.encode(whole.take())
    assert second.usage.input_tokens + first.usage.input_tokens == whole.usage.input_tokens


def test_a_rollout_without_its_header_is_a_session(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2026-05-12T08-00-00-{THREAD}.jsonl"
    path.write_text(
        '{"timestamp":"2026-05-12T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.2"}}\n'
    )
    session = Codex().session_at(str(path))
    assert session is not None and session.session_id == THREAD
    other = tmp_path / "notes.jsonl"
    other.write_text('{"type":"user","message":"a Claude Code line"}\n')
    assert Codex().session_at(str(other)) is None
    chat = Codex().read_session(Session(session_id=THREAD, transcript_path=str(path)))
    assert chat.drift.transcript == SourceDrift()


def _count(stamp: str, total: tuple[int, int, int], last: tuple[int, int, int]) -> str:
    def usage(n: tuple[int, int, int]) -> dict[str, int]:
        return {"input_tokens": n[0], "cached_input_tokens": n[1], "output_tokens": n[2]}

    info = {"total_token_usage": usage(total), "last_token_usage": usage(last)}
    payload = {"type": "token_count", "info": info}
    return json.dumps({"timestamp": stamp, "type": "event_msg", "payload": payload})


def test_a_fork_counts_only_what_it_added_in_usage() -> None:
    import os

    import agentspool

    parent_id = "0199cccc-0000-7000-8000-000000000001"
    fork_id = "0199cccc-0000-7000-8000-000000000002"
    day = Path(os.environ["CODEX_HOME"], "sessions", "2026", "06", "01")
    day.mkdir(parents=True)
    meta = '{{"timestamp":"{}","type":"session_meta","payload":{{"id":"{}"{}}}}}'
    parent = [
        meta.format("2026-06-01T09:00:00.000Z", parent_id, ""),
        _count("2026-06-01T09:01:00.000Z", (1000, 400, 50), (1000, 400, 50)),
        _count("2026-06-01T09:02:00.000Z", (2500, 1300, 80), (1500, 900, 30)),
    ]
    # The fork copies the parent's lines under its own time, then works on.
    fork = [
        meta.format("2026-06-03T10:00:00.000Z", fork_id, f',"forked_from_id":"{parent_id}"'),
        _count("2026-06-03T10:00:00.010Z", (1000, 400, 50), (1000, 400, 50)),
        _count("2026-06-03T10:00:00.011Z", (2500, 1300, 80), (1500, 900, 30)),
        _count("2026-06-03T10:05:00.000Z", (4500, 3100, 90), (2000, 1800, 10)),
    ]
    for thread, lines in ((parent_id, parent), (fork_id, fork)):
        (day / f"rollout-2026-06-01T09-00-00-{thread}.jsonl").write_text("\n".join(lines) + "\n")
    rows = {row.key: row for row in agentspool.usage(by="session").rows}
    # input here is plain input (the cached part taken out)
    assert (rows[parent_id].input_tokens, rows[parent_id].cache_read_tokens) == (1200, 1300)
    assert (rows[fork_id].input_tokens, rows[fork_id].cache_read_tokens) == (200, 1800)
    assert rows[fork_id].output_tokens == 10
