"""Block reads of real Claude Code 2.1.328 transcripts equal line-by-line reads.

``TranscriptParser.feed`` decodes a block of lines in one call and reads a block it
refuses again line by line (ADR 0009): whichever way a file arrives, and whatever damage
sits in it, the parse and its counters must be the line-by-line parse's.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from agentspool.adapters.claude_code._transcript import TranscriptParser
from agentspool.adapters.common.jsonl import JsonlFollower

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "claude-code"
TRANSCRIPTS = sorted(CAPTURES.glob("*/transcript/**/*.jsonl"))


def _id(path: Path) -> str:
    return f"{path.relative_to(CAPTURES).parts[0]}/{path.stem[:8]}"


def by_lines(path: Path) -> TranscriptParser:
    parser = TranscriptParser()
    for raw in path.read_bytes().split(b"\n"):
        parser.feed_line(raw)
    return parser


def by_blocks(path: Path, block: int) -> TranscriptParser:
    parser = TranscriptParser()
    follower = JsonlFollower(str(path))
    follower.BLOCK = block
    follower.read(parser.feed, lambda: None)
    return parser


def state(parser: TranscriptParser) -> tuple[object, ...]:
    return (
        msgspec.json.encode(parser.messages),
        parser.events,
        parser.usage,
        parser.session_id,
        parser.corrupt,
        parser.unknown,
        parser.turn,
        parser.sidechain,
        parser.agent_id,
        parser.open_tools,
        parser.background,
    )


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=_id)
def test_every_real_record_is_understood(path: Path) -> None:
    parser = by_lines(path)
    assert (parser.corrupt, parser.unknown) == (0, 0)
    assert parser.messages
    assert [m.seq for m in parser.messages] == list(range(1, len(parser.messages) + 1))


@pytest.mark.parametrize("block", [1, 300, 1 << 20])
def test_blocks_read_exactly_as_lines_even_around_damage(tmp_path: Path, block: int) -> None:
    """A torn record, an invalid-UTF-8 line and a record type not known here in the
    middle of every real transcript: counted once each, the rest read as it is."""
    for source in TRANSCRIPTS:
        lines = source.read_bytes().splitlines(keepends=True)
        side = next(json.loads(raw)["isSidechain"] for raw in lines if b'"isSidechain"' in raw)
        unknown = {"parentUuid": None, "isSidechain": side, "type": "brand-new-record"}
        middle = len(lines) // 2
        damaged = tmp_path / f"{_id(source).replace('/', '-')}.jsonl"
        damaged.write_bytes(
            b"".join(lines[:middle])
            + msgspec.json.encode(unknown)
            + b"\n"
            + lines[middle][: len(lines[middle]) // 2]  # a torn record, then whole ones
            + b"\n"
            + b'{"type":"user","message":{"role":"user","content":"\xff\xfe bad"}}\n'
            + b"".join(lines[middle:])
        )
        expected = by_lines(damaged)
        assert (expected.corrupt, expected.unknown) == (2, 1), source
        assert state(by_blocks(damaged, block)) == state(expected), source
        # the damage costs its own lines only
        whole = by_lines(source)
        assert msgspec.json.encode(expected.messages) == msgspec.json.encode(whole.messages)
        assert expected.events == whole.events


def test_whole_files_read_by_blocks_as_by_lines() -> None:
    for source in TRANSCRIPTS:
        assert state(by_blocks(source, 1 << 20)) == state(by_lines(source)), source


def test_damaged_lines_are_counted_never_fatal() -> None:
    parser = by_lines(next((CAPTURES / "tui-multi-block" / "transcript").glob("*.jsonl")))
    n = len(parser.messages)
    for raw in (
        b"{not json",
        b"\xff\xfe\xfd",
        b"[]",
        b'"x"',
        # A record whose fields have other shapes is read with the fields that fit: a
        # response without content shows nothing; a line without a (string) type is no
        # record Claude Code writes (other tools' fixtures have them).
        b'{"type":"assistant","message":{"content":7}}',
        b'{"type":42}',
        b'{"type":"brand-new-record","message":7}',  # an unknown record's fields: not read
        b'{"type":"api-request-blob","message":7}',  # nor a bookkeeping record's
    ):
        parser.feed_line(raw)
    assert (parser.corrupt, parser.unknown) == (4, 1)
    assert len(parser.messages) == n
