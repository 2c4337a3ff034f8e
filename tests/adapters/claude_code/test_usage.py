"""Usage from real Claude Code 2.1.328 transcripts, as the API reported it.

The transcript repeats one API message's ``usage`` on each of its content-block lines; it
counts once. Cache writes and cache reads are both folded into ``input_tokens`` and kept
apart beside it (they are priced apart), and every record carrying usage names its model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentspool.adapters.claude_code._transcript import TranscriptParser

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "claude-code"
TRANSCRIPTS = sorted(CAPTURES.glob("*/transcript/**/*.jsonl"))


def _api_messages(path: Path) -> dict[str, dict]:
    """API message id → that message (first line of it) as the file holds it."""
    found: dict[str, dict] = {}
    for raw in path.read_bytes().splitlines():
        record = json.loads(raw)
        message = record.get("message") if record.get("type") == "assistant" else None
        if isinstance(message, dict) and message.get("id") and message.get("usage"):
            found.setdefault(message["id"], message)
    return found


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.relative_to(CAPTURES).parts[0])
def test_usage_keeps_cache_reads_and_writes_apart_and_names_the_model(path: Path) -> None:
    api = _api_messages(path)
    parser = TranscriptParser()
    for raw in path.read_bytes().splitlines():
        parser.feed_line(raw)
    totals = {
        key: sum(m["usage"].get(key, 0) for m in api.values())
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    }
    usage = parser.usage
    assert usage.cached_input_tokens == totals["cache_read_input_tokens"]
    assert usage.cache_write_tokens == totals["cache_creation_input_tokens"]
    assert usage.input_tokens == (
        totals["input_tokens"]
        + totals["cache_read_input_tokens"]
        + totals["cache_creation_input_tokens"]
    )
    assert usage.output_tokens == totals["output_tokens"]
    priced = [m for m in parser.messages if m.usage is not None]
    assert {m.message_id for m in priced} == set(api)
    for message in priced:
        assert message.model == api[message.message_id]["model"]


def test_the_captures_name_a_model_for_every_priced_message() -> None:
    # Without it, the model check above would pass on a parser that dropped it.
    messages = [m for path in TRANSCRIPTS for m in _api_messages(path).values()]
    assert messages and all(m.get("model") for m in messages)


def test_a_cache_write_is_kept_apart_from_a_cache_read() -> None:
    # The scripted server of the captures reports no cache writes: a real assistant line
    # with the numbers a cached prompt's first turn has.
    raw = next(
        line
        for path in TRANSCRIPTS
        for line in path.read_bytes().splitlines()
        if b'"type":"assistant"' in line and b'"usage"' in line
    )
    record = json.loads(raw)
    record["message"]["usage"].update(
        input_tokens=3, cache_creation_input_tokens=1500, cache_read_input_tokens=200
    )
    parser = TranscriptParser()
    parser.feed_line(json.dumps(record).encode())
    assert parser.usage.input_tokens == 3 + 1500 + 200
    assert parser.usage.cache_write_tokens == 1500
    assert parser.usage.cached_input_tokens == 200


def test_a_subagent_an_older_cli_wrote_into_the_main_file_is_its_group_with_its_usage(
    tmp_path: Path,
) -> None:
    # Before the subagent files (1.0.x), the CLI wrote a subagent's records into the main
    # file (isSidechain: true). They are the subagent's conversation, under its Task call,
    # and paid for.
    import usage_corpus

    from agentspool.core.detail import assemble_session_detail

    usage_corpus.write_claude(tmp_path)
    path = tmp_path / "projects" / "-srv-beta" / f"{usage_corpus.LEGACY}.jsonl"
    parser = TranscriptParser()
    for raw in path.read_bytes().splitlines():
        parser.feed_line(raw)
    side = [m for m in parser.messages if m.message_id == "msg_legacy_side"]
    assert len(side) == 1
    assert (side[0].visibility, side[0].kind, side[0].text) == ("visible", "text", "Looks fine.")
    assert (side[0].model, side[0].usage.cache_write_tokens) == (usage_corpus.SONNET, 650)
    assert parser.usage.input_tokens == (50 + 700) + (20 + 650) + (6 + 700) + (7 + 1350)
    detail = assemble_session_detail(parser.messages)
    assert detail.usage == parser.usage
    (group,) = detail.subagents
    assert group.spawned_by == "toolu_l1" and group.agent_id == side[0].agent_id != ""
    assert [m.kind for m in group.messages] == ["subagent", "text", "text"]
    own = [m.text for m in detail.conversation if not m.agent_id and m.role == "assistant"]
    assert "Looks fine." not in own


def test_a_session_names_the_working_directory_its_transcript_states() -> None:
    from agentspool.adapters.claude_code import ClaudeCode
    from agentspool.core.seam import Session

    path = TRANSCRIPTS[0]
    stated = next(
        json.loads(raw)["cwd"] for raw in path.read_bytes().splitlines() if b'"cwd"' in raw
    )
    chat = ClaudeCode().read_session(Session(session_id="s", transcript_path=str(path)))
    assert chat.cwd == stated and stated.startswith("/tmp/cap-")
    read = ClaudeCode().read_chat("run-1", "", str(path))
    assert read.cwd == stated
