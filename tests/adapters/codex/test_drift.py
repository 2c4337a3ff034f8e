"""Schema drift on real Codex 0.169.0 captures (ADR 0014): what the real CLI wrote reads
with no drift; record types and fields injected into it are counted per source —
rollout, hook spool — the same whether the rollout is decoded in blocks or line by line,
and the same on every re-read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentspool.adapters.codex import Codex
from agentspool.adapters.codex._rollout import RolloutParser
from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.core.seam import SourceDrift

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "codex"
ROLLOUTS = sorted(CAPTURES.glob("*/rollout-*.jsonl"))
ReplayFactory = Callable[[str], Any]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def _first(records: list[dict[str, Any]], kind: str, payload_type: str = "") -> dict[str, Any]:
    return next(
        r
        for r in records
        if r["type"] == kind and (not payload_type or r["payload"].get("type") == payload_type)
    )


def _drifted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with, injected: a line type and an event kind not known (twice and
    once), a field in the first task_started payload, an envelope field on the first
    response_item, a field on the first function_call (which sits far into the file)."""
    out = [dict(r, payload=dict(r["payload"])) for r in records]
    task_started = _first(out, "event_msg", "task_started")
    task_started["payload"]["future_field"] = 1
    _first(out, "response_item")["future_envelope"] = 2
    _first(out, "response_item", "function_call")["payload"]["future_call_field"] = "x"
    future_line = {"timestamp": task_started["timestamp"], "ordinal": 0, "type": "future_line"}
    future_event = {**task_started, "payload": {"type": "future_event", "turn_id": "t"}}
    at = out.index(task_started) + 1
    out[at:at] = [{**future_line, "payload": {}}, future_event, {**future_line, "payload": {}}]
    return out


EXPECTED = SourceDrift(
    unknown_types={"future_line": 2, "event_msg:future_event": 1},
    unknown_fields=[
        "event_msg:task_started.payload.future_field",
        "response_item:function_call.payload.future_call_field",
        "response_item:message.future_envelope",
    ],
)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.parent.name)
def test_what_the_real_cli_wrote_has_no_drift(path: Path) -> None:
    chat = Codex().read_chat("run-1", "", str(path))
    assert chat.drift.transcript == SourceDrift()
    assert chat.drift.cli_version == "0.169.0"


def test_injected_types_and_fields_are_counted(tmp_path: Path) -> None:
    path = tmp_path / ROLLOUTS[1].name
    records = _lines(ROLLOUTS[1])
    assert any(r["payload"].get("type") == "function_call" for r in records)
    path.write_bytes(_dump(_drifted(records)))
    chat = Codex().read_chat("run-1", "", str(path))
    assert chat.drift.transcript == EXPECTED
    assert chat.drift.cli_version == "0.169.0"


@pytest.mark.parametrize("block", [64, 700, 1 << 20])
def test_blocks_and_single_lines_count_alike(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoded in blocks (a first record of a shape met in any block, not only the
    first), line by line, or in blocks refused for one unknown line: the same drift."""
    data = _dump(_drifted(_lines(ROLLOUTS[1])))
    by_line = RolloutParser()
    for raw in data.splitlines():
        by_line.feed_line(raw)
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(JsonlFollower, "BLOCK", block)
    chat = Codex().read_chat("run-1", "", str(path))
    assert by_line.drift.snapshot(by_line.corrupt) == chat.drift.transcript == EXPECTED


def test_a_shape_met_first_in_a_later_block_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No unknown line anywhere: every block decodes in one call, and a shape's first
    record (an exec_command call, long after the start) is found in its block's bytes."""
    records = _lines(ROLLOUTS[1])
    _first(records, "response_item", "function_call")["payload"]["future_call_field"] = 1
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(_dump(records))
    monkeypatch.setattr(JsonlFollower, "BLOCK", 4096)
    drift = Codex().read_chat("run-1", "", str(path)).drift.transcript
    assert drift == SourceDrift(
        unknown_fields=["response_item:function_call.payload.future_call_field"]
    )


def test_a_rollout_spelled_with_spaces_is_checked_without_decoding_every_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rollouts some tools write (``json.dumps`` defaults: a space after each colon)
    have their shapes found in the bytes too: the line-by-line fallback is not taken."""
    from agentspool.adapters.common import drift as shared_drift

    records = _lines(ROLLOUTS[1])
    _first(records, "response_item", "function_call")["payload"]["future_call_field"] = 1
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))

    def refused(block: memoryview) -> list[bytes]:
        raise AssertionError("every line of a block decoded to find one shape")

    monkeypatch.setattr(shared_drift, "split_lines", refused)
    drift = Codex().read_chat("run-1", "", str(path)).drift.transcript
    assert drift == SourceDrift(
        unknown_fields=["response_item:function_call.payload.future_call_field"]
    )


def test_drift_is_the_same_on_every_re_read_and_grows_with_the_file(tmp_path: Path) -> None:
    records = _drifted(_lines(ROLLOUTS[1]))
    path = tmp_path / "rollout.jsonl"
    half = len(records) // 2
    path.write_bytes(_dump(records[:half]))
    adapter = Codex()
    early = adapter.read_chat("run-1", "", str(path)).drift
    assert adapter.read_chat("run-1", "", str(path)).drift == early
    with open(path, "ab") as fh:
        fh.write(_dump(records[half:]))
    grown = adapter.read_chat("run-1", "", str(path)).drift
    assert grown.transcript == EXPECTED
    assert grown == Codex().read_chat("run-1", "", str(path)).drift


@pytest.mark.parametrize("scenario", sorted({p.parent.name for p in ROLLOUTS}))
def test_the_live_read_of_the_unmodified_capture_has_no_drift(
    replay: ReplayFactory, scenario: str
) -> None:
    chat = replay(scenario).full().chat()
    assert not chat.drift


def test_hook_payload_fields_are_counted_in_the_spool(replay: ReplayFactory) -> None:
    r = replay("b_exec_commands")
    pre = next(h for h in r.hooks if h["event"] == "PreToolUse")
    pre["payload"] = {**pre["payload"], "future_hook_key": True}
    drift = r.full().chat().drift
    assert drift.spool == SourceDrift(unknown_fields=["PreToolUse.future_hook_key"])
    assert drift.transcript == SourceDrift()
    assert drift.cli_version == "0.169.0"


def test_a_block_is_checked_within_its_own_bytes_not_its_buffers() -> None:
    """A follower hands a view of the start of its read buffer: whatever lies past the
    view (the next block's first bytes, stale bytes of an earlier one) is not the
    block's, even where it holds the first spelling of a shape the block has."""
    spaced = json.dumps(_first(_lines(ROLLOUTS[1]), "response_item", "function_call")).encode()
    past = dict(_first(_lines(ROLLOUTS[1]), "response_item", "function_call"))
    past["payload"] = {**past["payload"], "not_this_blocks": 1}
    block = spaced + b"\n"
    buffer = bytearray(block + _dump([past]))
    parser = RolloutParser()
    parser.feed(memoryview(buffer)[: len(block)])
    assert parser.drift.snapshot(parser.corrupt) == SourceDrift()
