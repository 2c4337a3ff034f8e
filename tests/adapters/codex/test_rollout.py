"""The rollout parser against every real Codex 0.169.0 rollout in the captures."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from agentspool.adapters.codex._rollout import RolloutParser, thread_id_from_path
from agentspool.core import events as ev

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "codex"
ROLLOUTS = sorted(CAPTURES.glob("*/rollout-*.jsonl"))


def parse(path: Path) -> RolloutParser:
    parser = RolloutParser(thread_id_from_path(str(path)))
    for line in path.read_bytes().split(b"\n"):
        parser.feed_line(line)
    return parser


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def one(scenario: str, index: int = 0) -> Path:
    return sorted((CAPTURES / scenario).glob("rollout-*.jsonl"))[index]


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: f"{p.parent.name}/{p.name[-14:-6]}")
def test_every_real_record_is_understood(path: Path) -> None:
    parser = parse(path)
    assert (parser.corrupt, parser.unknown) == (0, 0)
    meta = records(path)[0]
    assert meta["type"] == "session_meta"
    assert parser.thread_id == meta["payload"]["id"] == thread_id_from_path(str(path))  # type: ignore[index]
    assert [m.seq for m in parser.messages] == list(range(1, len(parser.messages) + 1))
    assert len({m.id for m in parser.messages}) == len(parser.messages)
    assert all(e.epoch == parser.thread_id for e in parser.events)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: f"{p.parent.name}/{p.name[-14:-6]}")
def test_usage_is_counted_once_per_response_and_input_already_includes_cached(path: Path) -> None:
    usage_records = [r["payload"] for r in records(path) if r["type"] == "token_usage_record"]
    parser = parse(path)
    if not usage_records:
        assert parser.usage.input_tokens == 0
        return
    total = usage_records[-1]["thread_token_usage"]  # type: ignore[index]
    # Codex's own running total agrees: input_tokens already includes the cached part
    # (the scripted server sent input 120 with 20 cached; Codex recorded 120 and 20).
    assert parser.usage.input_tokens == total["input_tokens"]
    assert parser.usage.cached_input_tokens == total["cached_input_tokens"]
    assert parser.usage.output_tokens == total["output_tokens"]
    assert parser.usage.reasoning_tokens == total["reasoning_output_tokens"]
    # each response's usage is priced at the model its turn ran on
    models = [r["payload"]["model"] for r in records(path) if r["type"] == "turn_context"]
    priced = [m for m in parser.messages if m.usage is not None]
    assert priced and all(m.model in models for m in priced) and models
    # the same response's record seen twice is counted once
    line = next(raw for raw in path.read_bytes().split(b"\n") if b'"token_usage_record"' in raw)
    before = parser.usage.input_tokens
    parser.feed_line(line)
    assert parser.usage.input_tokens == before


def test_visibility_of_injected_context_and_prompts() -> None:
    parser = parse(one("c_tui_plain"))
    developer, context, prompt, answer = parser.messages
    assert (developer.role, developer.visibility, developer.is_meta) == ("system", "hidden", True)
    assert context.text.startswith("<environment_context>")
    assert (context.visibility, context.is_meta) == ("hidden", True)
    assert (prompt.role, prompt.text, prompt.visibility, prompt.is_meta) == (
        "user",
        "say hello",
        "visible",
        False,
    )
    assert (answer.role, answer.kind, answer.visibility) == ("assistant", "text", "visible")


def test_tool_calls_and_results_are_joined_by_call_id() -> None:
    parser = parse(one("b_exec_commands"))
    calls = [m for m in parser.messages if m.kind == "tool_call"]
    results = [m for m in parser.messages if m.kind == "tool_result"]
    assert [c.tool_use_id for c in calls] == [r.tool_use_id for r in results]
    assert {(c.tool_name, c.presentation) for c in calls} == {("exec_command", "shell")}
    assert all(r.tool_name == "exec_command" for r in results)
    assert calls[0].tool_input is not None and "cmd" in calls[0].tool_input
    assert "approval policy is Never" in results[0].text  # exec never waits on approval
    assert parser.open_calls == {}


def test_open_question_is_an_input_request_with_its_form() -> None:
    path = one("f_tui_plan_question")
    lines = path.read_bytes().split(b"\n")
    cut = next(
        i
        for i, raw in enumerate(lines)
        if b'"request_user_input"' in raw and b'"function_call"' in raw
    )
    parser = RolloutParser()
    for raw in lines[: cut + 1]:
        parser.feed_line(raw)
    asked = [e for e in parser.events if isinstance(e, ev.InputRequested)]
    assert len(asked) == 1 and asked[0].kind == "question"
    dialog = asked[0].dialog
    assert dialog is not None and dialog.prompt == "Which color do you prefer?"
    assert [(o.label, o.description) for o in dialog.options] == [("Red", "warm"), ("Blue", "cool")]
    assert asked[0].turn_id == parser.turn
    tool = next(m for m in parser.messages if m.kind == "tool_call")
    assert tool.presentation == "question"


def test_answer_of_a_question_is_a_user_record() -> None:
    parser = parse(one("f_tui_plan_question"))
    answer = next(m for m in parser.messages if m.id.startswith("answer:"))
    assert (answer.role, answer.text, answer.tool_name) == (
        "user",
        "Which color do you prefer?: Red",
        "request_user_input",
    )


def test_turn_lifecycle_events_carry_the_records_turn_ids() -> None:
    parser = parse(one("f_tui_plan_question"))
    started = [e.turn_id for e in parser.events if isinstance(e, ev.TurnStarted)]
    stopped = [(e.turn_id, e.outcome) for e in parser.events if isinstance(e, ev.TurnStopped)]
    assert len(started) == 2
    assert stopped == [(started[0], "completed"), (started[1], "interrupted")]
    tools = [e for e in parser.events if isinstance(e, ev.ToolStarted | ev.ToolFinished)]
    assert {e.turn_id for e in tools} == set(started)


@pytest.mark.parametrize("index", [0, 1])
def test_api_error_ends_the_turn_failed(index: int) -> None:
    parser = parse(one("i_exec_api_errors", index))
    stopped = [e for e in parser.events if isinstance(e, ev.TurnStopped)]
    assert [e.outcome for e in stopped] == ["failed"]
    error = parser.messages[-1]
    assert (error.kind, error.is_error) == ("error", True) and error.text


def test_interrupt_record_when_esc_while_streaming() -> None:
    parser = parse(one("g_tui_esc_streaming"))
    assert parser.messages[-1].kind == "interrupt"
    assert [e.outcome for e in parser.events if isinstance(e, ev.TurnStopped)] == ["interrupted"]


def test_subagent_rollout_is_marked_and_linked_to_its_parent() -> None:
    parent, child = (parse(one("k_exec_subagent", i)) for i in (0, 1))
    if parent.agent_id:  # files sort by creation time; the child is created second
        parent, child = child, parent
    assert parent.agent_id == "" and child.agent_id == child.thread_id
    assert child.parent_thread_id == parent.thread_id
    assert all(m.agent_id == child.thread_id for m in child.messages)
    assert not any(m.agent_id for m in parent.messages if m.kind != "subagent")
    assert list(parent.subagents) == [child.thread_id]
    link = next(m for m in parent.messages if m.kind == "subagent" and m.role == "system")
    assert link.agent_id == child.thread_id and link.parent_id == parent.subagents[child.thread_id]
    spawn = next(m for m in parent.messages if m.tool_name == "spawn_agent")
    assert spawn.presentation == "agent"


def test_auto_compaction_gives_one_visible_summary() -> None:
    parser = parse(one("o_exec_auto_compact"))
    summaries = [m for m in parser.messages if m.kind == "summary"]
    assert [(m.role, m.visibility) for m in summaries] == [
        ("assistant", "hidden"),
        ("system", "visible"),
    ]
    assert "summary" in summaries[1].text


def test_damaged_lines_are_counted_never_fatal() -> None:
    parser = parse(one("c_tui_plain"))
    n = len(parser.messages)
    for raw in (
        b"{not json",
        b"\xff\xfe\xfd",
        b'{"type":"response_item","payload":{"content":7}}',
        b'{"type":"brand_new_record","payload":{}}',
        b"[]",
        b'"x"',
    ):
        parser.feed_line(raw)
    assert parser.corrupt == 5 and parser.unknown == 1
    assert len(parser.messages) == n


def test_reasoning_record_is_thinking() -> None:
    # No scripted capture produced one; the shape is docs/providers/codex.md §6.3's.
    parser = RolloutParser("t")
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "thinking it over"}],
        "encrypted_content": "…",
    }
    parser.feed_line(
        msgspec.json.encode(
            {
                "timestamp": "2026-11-29T23:00:00.000Z",
                "ordinal": 3,
                "type": "response_item",
                "payload": item,
            }
        )
    )
    (message,) = parser.messages
    assert (message.kind, message.role, message.text) == (
        "thinking",
        "assistant",
        "thinking it over",
    )


@pytest.mark.parametrize("block", [1, 300, 1 << 20])
def test_blocks_read_exactly_as_lines_even_around_damage(tmp_path: Path, block: int) -> None:
    """``feed`` decodes a block in one call and re-reads a block it refuses line by line:
    either way the result is the line-by-line parse, damage counted once."""
    from agentspool.adapters.common.jsonl import JsonlFollower

    for source in ROLLOUTS:
        lines = source.read_bytes().splitlines(keepends=True)
        damaged = tmp_path / source.name
        middle = len(lines) // 2
        damaged.write_bytes(
            b"".join(lines[:middle])
            + b'{"timestamp":"2026-11-29T00:00:00.000Z","type":"brand_new_record"}\n'
            + lines[middle][: len(lines[middle]) // 2]  # a torn record, then whole ones
            + b"\n"
            + b"".join(lines[middle:])
        )
        by_line = parse(damaged)
        by_block = RolloutParser(thread_id_from_path(str(damaged)))
        follower = JsonlFollower(str(damaged))
        follower.BLOCK = block
        follower.read(by_block.feed, lambda: None)
        assert (by_block.corrupt, by_block.unknown) == (by_line.corrupt, by_line.unknown) == (1, 1)
        assert msgspec.json.encode(by_block.messages) == msgspec.json.encode(by_line.messages)
        assert by_block.events == by_line.events
        assert by_block.usage == by_line.usage


def test_item_shapes_nobody_reads_never_make_a_line_unreadable() -> None:
    def item_line(ordinal: int, item: dict[str, object]) -> bytes:
        payload = {"type": "item_completed", "turn_id": "t1", "item": item}
        return msgspec.json.encode(
            {
                "timestamp": "2026-11-29T00:00:00.000Z",
                "ordinal": ordinal,
                "type": "event_msg",
                "payload": payload,
            }
        )

    parser = RolloutParser("parent")
    # An item type no capture showed, with fields of other shapes than spawn_agent's.
    parser.feed_line(item_line(1, {"type": "McpToolCall", "id": 7, "tool": {"name": "x"}}))
    assert (parser.corrupt, parser.unknown, parser.messages) == (0, 0, [])
    spawn = {"type": "CollabAgentToolCall", "id": "call_9", "tool": "spawn_agent"}
    parser.feed_line(item_line(2, {**spawn, "receiver_thread_ids": "not-a-list"}))
    assert parser.corrupt == 1  # the one item read here, in a shape it cannot be read in
    parser.feed_line(item_line(3, {**spawn, "receiver_thread_ids": ["child"]}))
    assert [(m.kind, m.agent_id, m.tool_use_id) for m in parser.messages] == [
        ("subagent", "child", "call_9")
    ]


def test_a_session_names_the_working_directory_its_session_meta_states() -> None:
    from agentspool.adapters.codex import Codex
    from agentspool.core.seam import Session

    path = next(CAPTURES.glob("*/rollout-*.jsonl"))
    meta = json.loads(path.read_bytes().splitlines()[0])
    assert meta["type"] == "session_meta" and meta["payload"]["cwd"]
    chat = Codex().read_session(Session(session_id="s", transcript_path=str(path)))
    assert chat.cwd == meta["payload"]["cwd"]
