"""``assemble_session_detail``: the rules of core/detail.py, on hand-built canonical
records, on the scripted fake's stream, and on every real capture the adapters parse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentspool.adapters import registry
from agentspool.adapters._fake_kit import Kit as FakeKit
from agentspool.adapters.fake import ScriptedAdapter
from agentspool.core.detail import (
    Parse,
    SessionDetail,
    ToolInvocation,
    assemble_session_detail,
)
from agentspool.core.seam import Message, Usage
from agentspool.errors import AgentspoolError, DeltaParseError

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"


def real_captures() -> list[tuple[str, Path]]:
    """(adapter name, transcript) for every real transcript the CLIs wrote."""
    found = [("claude-code", p) for p in sorted(CAPTURES.glob("claude-code/*/transcript/*.jsonl"))]
    found += [("codex", p) for p in sorted(CAPTURES.glob("codex/*/rollout-*.jsonl"))]
    return found


def scenario(capture: tuple[str, Path]) -> str:
    path = capture[1]
    return path.parent.parent.name if path.parent.name == "transcript" else path.parent.name


def _capture_id(capture: tuple[str, Path]) -> str:
    return f"{scenario(capture)}/{capture[1].name[:20]}"


def parsed(capture: tuple[str, Path]) -> list[Message]:
    return registry.load(capture[0]).read_chat("run-1", "", str(capture[1])).messages


def stream(*records: dict[str, Any]) -> list[Message]:
    """Canonical records numbered 1…n, as a full parse numbers them."""
    out = []
    for seq, given in enumerate(records, 1):
        fields = {"kind": "text", "role": "assistant", **given}
        out.append(Message(seq=seq, id=fields.pop("id", f"r{seq}"), **fields))
    return out


def call(tid: str, **more: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "tool_use_id": tid, "tool_name": "Bash", **more}


def result(tid: str, **more: Any) -> dict[str, Any]:
    return {"kind": "tool_result", "role": "tool", "tool_use_id": tid, **more}


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def every_returned(detail: SessionDetail) -> list[Message]:
    """Every record the detail hands back, through any of its parts."""
    out = [*detail.conversation, *detail.orphan_results, *detail.summaries]
    for tool in detail.tools:
        out.append(tool.call)
        if tool.result is not None:
            out.append(tool.result)
    for group in detail.subagents:
        out += group.messages
    return out


# -- visibility ----------------------------------------------------------------------


def test_hidden_is_never_returned_and_inactive_only_on_request() -> None:
    records = stream(
        {"id": "v", "text": "shown"},
        {"id": "h", "visibility": "hidden", "is_meta": True},
        {"id": "i", "visibility": "inactive"},
        {"id": "hs", "kind": "summary", "visibility": "hidden"},
        {"id": "hc", **call("t1"), "visibility": "hidden"},
        {"id": "hr", **result("t1"), "visibility": "hidden"},
        {"id": "ha", "agent_id": "sub", "visibility": "hidden"},
        {"id": "ic", **call("t2"), "visibility": "inactive"},
        {"id": "ir", **result("t2"), "visibility": "inactive"},
    )
    standard = assemble_session_detail(records)
    assert ids(standard.conversation) == ["v"]
    assert {m.visibility for m in every_returned(standard)} == {"visible"}
    assert (standard.tools, standard.subagents, standard.summaries) == ([], [], [])
    assert standard.withheld == 8

    wide = assemble_session_detail(records, include_inactive=True)
    assert ids(wide.conversation) == ["v", "i", "ic", "ir"]
    assert "hidden" not in {m.visibility for m in every_returned(wide)}
    assert [(t.call.id, t.result.id if t.result else None) for t in wide.tools] == [("ic", "ir")]
    assert wide.withheld == 5


def test_a_call_whose_result_is_withheld_reads_open_rather_than_leaking_it() -> None:
    detail = assemble_session_detail(stream(call("t"), {**result("t"), "visibility": "inactive"}))
    assert [t.is_open for t in detail.tools] == [True]
    assert detail.orphan_results == []


# -- tool calls and orphans -----------------------------------------------------------


def test_calls_join_their_results_by_tool_use_id() -> None:
    detail = assemble_session_detail(
        stream(
            {"id": "u", "role": "user", "text": "go"},
            {**call("a", presentation="shell"), "id": "ca"},
            {**call("b", presentation="edit", agent_id="sub"), "id": "cb"},
            {**result("b", is_error=True), "id": "rb"},
            {**result("a", text="ok"), "id": "ra"},
        )
    )
    assert detail.tools == [
        ToolInvocation(
            tool_use_id="a",
            call=detail.conversation[1],
            result=detail.conversation[4],
            presentation="shell",
        ),
        ToolInvocation(
            tool_use_id="b",
            call=detail.conversation[2],
            result=detail.conversation[3],
            is_error=True,
            presentation="edit",
            agent_id="sub",
        ),
    ]
    assert detail.orphan_results == []


def test_a_call_without_a_result_is_open_not_guessed() -> None:
    detail = assemble_session_detail(stream(call("done"), result("done"), call("running")))
    assert [(t.tool_use_id, t.is_open) for t in detail.tools] == [
        ("done", False),
        ("running", True),
    ]
    assert detail.tools[1].result is None and not detail.tools[1].is_error


def test_orphan_results_stay_in_the_conversation_and_join_nothing() -> None:
    records = stream(
        {**result("nocall"), "id": "orphan"},
        {**call("x"), "id": "cx"},
        {**result("x"), "id": "rx"},
        {**result("x"), "id": "rx-again"},
        {**result(""), "id": "noid"},
        {**call(""), "id": "c-noid"},
    )
    detail = assemble_session_detail(records)
    assert ids(detail.orphan_results) == ["orphan", "rx-again", "noid"]
    assert ids(detail.conversation) == ids(records)
    assert [(t.call.id, t.result.id if t.result else None) for t in detail.tools] == [
        ("cx", "rx"),
        ("c-noid", None),
    ]


def test_a_result_recorded_before_its_call_still_joins() -> None:
    detail = assemble_session_detail(stream({**result("t"), "id": "r"}, {**call("t"), "id": "c"}))
    assert [(t.call.id, t.result.id if t.result else None) for t in detail.tools] == [("c", "r")]
    assert detail.orphan_results == []


def test_a_repeated_call_id_gets_its_own_invocation_and_the_result_joins_the_first() -> None:
    detail = assemble_session_detail(
        stream({**call("t"), "id": "c1"}, {**call("t"), "id": "c2"}, {**result("t"), "id": "r"})
    )
    assert [(t.call.id, t.result.id if t.result else None) for t in detail.tools] == [
        ("c1", "r"),
        ("c2", None),
    ]


# -- usage ----------------------------------------------------------------------------


def test_usage_counts_once_per_message_id_and_individually_without_one() -> None:
    u = Usage(input_tokens=100, output_tokens=10, cached_input_tokens=40, reasoning_tokens=2)
    records = stream(
        {"message_id": "m1"},  # the id's first record carries no usage: it consumes nothing
        {"message_id": "m1", "usage": u},
        {"message_id": "m1", "kind": "tool_call", "usage": u},  # the same API message again
        {"usage": Usage(input_tokens=1, output_tokens=1)},  # no id: counts on its own
        {"usage": Usage(input_tokens=1, output_tokens=1)},
        {"message_id": "m2", "usage": Usage(output_tokens=5), "visibility": "hidden"},
        {"message_id": "m3", "usage": Usage(output_tokens=7), "visibility": "inactive"},
    )
    expected = Usage(input_tokens=102, output_tokens=24, cached_input_tokens=40, reasoning_tokens=2)
    assert assemble_session_detail(records).usage == expected
    assert assemble_session_detail(records, include_inactive=True).usage == expected


def test_usage_of_the_inputs_is_not_mutated() -> None:
    u = Usage(input_tokens=3)
    records = stream({"usage": u}, {"usage": u})
    assert assemble_session_detail(records).usage == Usage(input_tokens=6)
    assert u == Usage(input_tokens=3)


# -- subagents, summaries, counts -----------------------------------------------------


def test_subagent_groups_by_agent_id_with_the_spawning_call() -> None:
    records = stream(
        {**call("spawn", presentation="agent"), "id": "c"},
        {"id": "s1", "agent_id": "A"},
        {"id": "link", "kind": "subagent", "role": "system", "agent_id": "B", "parent_id": "spawn"},
        {"id": "b1", "agent_id": "B", "parent_id": "other"},
        {"id": "a2", "agent_id": "A"},
        {"id": "main", "text": "back in the main agent"},
    )
    detail = assemble_session_detail(records)
    assert [(g.agent_id, g.spawned_by, ids(g.messages)) for g in detail.subagents] == [
        ("A", "", ["s1", "a2"]),
        ("B", "spawn", ["link", "b1"]),
    ]
    assert ids(detail.conversation) == ids(records)


def test_summaries_counts_and_no_text_parsing() -> None:
    records = stream(
        {"id": "u", "role": "user", "text": "[Request interrupted by user]"},
        {"id": "t", "text": '{"type": "tool_result", "tool_use_id": "x"}'},
        {"id": "cb", "kind": "compaction", "role": "system"},
        {"id": "sm", "kind": "summary", "role": "user", "text": "<summary>"},
        {"id": "i", "kind": "interrupt", "role": "user"},
    )
    detail = assemble_session_detail(records)
    assert ids(detail.summaries) == ["cb", "sm"]
    assert detail.counts == {"compaction": 1, "interrupt": 1, "summary": 1, "text": 2}
    assert (detail.tools, detail.orphan_results) == ([], [])


# -- one complete parse ---------------------------------------------------------------


def test_a_delta_is_rejected() -> None:
    records = stream(call("t"), result("t"), {"text": "done"})
    with pytest.raises(DeltaParseError) as info:
        assemble_session_detail(records[1:])
    assert isinstance(info.value, AgentspoolError) and isinstance(info.value, ValueError)
    assert info.value.seq == 2
    assert "seq 2" in str(info.value)
    with pytest.raises(DeltaParseError, match="incomplete"):
        assemble_session_detail(Parse(messages=records, complete=False))
    with pytest.raises(DeltaParseError):
        assemble_session_detail(Parse(messages=[], complete=False))


@pytest.mark.parametrize("seqs", [[1, 3], [1, 1], [2, 1], [0, 1]])
def test_a_stream_with_a_gap_repeat_or_step_back_is_rejected(seqs: list[int]) -> None:
    records = [Message(seq=s, id=f"r{i}", kind="text", role="user") for i, s in enumerate(seqs)]
    with pytest.raises(DeltaParseError):
        assemble_session_detail(records)


def test_a_complete_parse_is_accepted_however_it_is_given() -> None:
    records = stream(call("t"), result("t"))
    as_list = assemble_session_detail(records)
    assert assemble_session_detail(iter(records)) == as_list
    assert assemble_session_detail(Parse(messages=records, complete=True)) == as_list
    assert assemble_session_detail([]) == SessionDetail()


# -- the scripted fake and the real captures ------------------------------------------


def test_the_fakes_stream_assembles_with_usage_deduplicated(tmp_path: Path) -> None:
    path = FakeKit().transcript(str(tmp_path), 3)
    detail = assemble_session_detail(ScriptedAdapter().read_chat("run-1", "", path).messages)
    assert [t.is_open for t in detail.tools] == [False, False, False]
    assert detail.counts == {"text": 9, "tool_call": 3, "tool_result": 3}
    # Per turn: the call's API message (its usage repeated on two records) + the reply's.
    assert detail.usage == Usage(input_tokens=3 * 32, output_tokens=3 * 4, cached_input_tokens=12)


@pytest.mark.parametrize("capture", real_captures(), ids=_capture_id)
def test_every_real_capture_assembles_with_no_orphan_and_nothing_hidden(
    capture: tuple[str, Path],
) -> None:
    records = parsed(capture)
    detail = assemble_session_detail(records, include_inactive=True)
    assert detail.orphan_results == []
    calls = [m for m in records if m.kind == "tool_call" and m.visibility != "hidden"]
    assert [t.call for t in detail.tools] == calls
    assert "hidden" not in {m.visibility for m in every_returned(detail)}
    hidden = sum(m.visibility == "hidden" for m in records)
    assert detail.withheld == hidden
    assert sum(detail.counts.values()) == len(records) - hidden


@pytest.mark.parametrize(
    "capture", [c for c in real_captures() if c[0] == "claude-code"], ids=_capture_id
)
def test_usage_recomputed_from_records_equals_the_adapters_own_total(
    capture: tuple[str, Path],
) -> None:
    chat = registry.load(capture[0]).read_chat("run-1", "", str(capture[1]))
    assert any(m.usage is not None for m in chat.messages)
    assert assemble_session_detail(chat.messages).usage == chat.usage


@pytest.mark.parametrize(
    "capture", [c for c in real_captures() if c[0] == "codex"], ids=_capture_id
)
def test_rollout_records_carry_the_usage_the_adapter_totals(capture: tuple[str, Path]) -> None:
    chat = registry.load(capture[0]).read_chat("run-1", "", str(capture[1]))
    assert assemble_session_detail(chat.messages).usage == chat.usage


def test_a_real_subagent_capture_groups_the_agent_under_its_spawning_call() -> None:
    details = [
        assemble_session_detail(parsed(c))
        for c in real_captures()
        if scenario(c) == "k_exec_subagent"
    ]
    parent, child = sorted(details, key=lambda d: len(d.tools), reverse=True)
    spawns = [t.tool_use_id for t in parent.tools if t.call.tool_name == "spawn_agent"]
    assert len(spawns) == 1
    assert [g.spawned_by for g in parent.subagents] == spawns
    # The subagent's own transcript read alone: one group, every selected record in it.
    assert [(g.spawned_by, g.messages) for g in child.subagents] == [("", child.conversation)]


@pytest.mark.parametrize("name", ["tui-compact", "o_exec_auto_compact"])
def test_real_compactions_are_listed_as_summaries(name: str) -> None:
    (capture,) = [c for c in real_captures() if scenario(c) == name]
    detail = assemble_session_detail(parsed(capture))
    assert detail.summaries
    assert {m.kind for m in detail.summaries} <= {"summary", "compaction"}
    assert [m for m in detail.conversation if m.kind in ("summary", "compaction")] == (
        detail.summaries
    )
