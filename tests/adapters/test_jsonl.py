"""The transcript follower: complete lines in blocks, torn tails held back, identity kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentspool.adapters.common.jsonl import JsonlFollower, split_lines


class Collect:
    def __init__(self) -> None:
        self.blocks: list[bytes] = []
        self.resets = 0

    def on_lines(self, block: memoryview) -> None:
        self.blocks.append(block.tobytes())

    def reset(self) -> None:
        self.resets += 1
        self.blocks.clear()


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_blocks_are_whole_lines_and_a_torn_tail_waits(tmp_path: Path, block: int) -> None:
    path = tmp_path / "t.jsonl"
    lines = [b'{"n":%d,"pad":"%s"}\n' % (i, b"x" * (i * 37 % 300)) for i in range(200)]
    path.write_bytes(b"".join(lines[:150]) + lines[150][:9])
    follower, seen = JsonlFollower(str(path)), Collect()
    follower.BLOCK = block  # smaller than most lines: the buffer grows to fit them
    follower.read(seen.on_lines, seen.reset)
    assert all(b.endswith(b"\n") for b in seen.blocks)
    assert b"".join(seen.blocks) == b"".join(lines[:150])
    assert follower.offset == len(b"".join(lines[:150]))
    with path.open("ab") as fh:
        fh.write(lines[150][9:] + b"".join(lines[151:]))
    follower.read(seen.on_lines, seen.reset)
    assert b"".join(seen.blocks) == b"".join(lines)
    assert seen.resets == 1  # the first read only


def test_a_shrunk_or_replaced_file_is_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n')
    follower, seen = JsonlFollower(str(path)), Collect()
    follower.read(seen.on_lines, seen.reset)
    path.write_bytes(b'{"b":1}\n')  # truncated and rewritten in place
    follower.read(seen.on_lines, seen.reset)
    assert (seen.blocks, seen.resets) == ([b'{"b":1}\n'], 2)
    replacement = tmp_path / "new"
    replacement.write_bytes(b'{"c":1}\n{"c":2}\n{"c":3}\n')
    replacement.replace(path)  # a new inode, longer than the old file
    follower.read(seen.on_lines, seen.reset)
    assert (b"".join(seen.blocks), seen.resets) == (path.read_bytes(), 3)


def test_split_lines_drops_only_the_final_newline() -> None:
    assert split_lines(memoryview(b"a\n\nb\n")) == [b"a", b"", b"b"]
    assert split_lines(memoryview(b"")) == []


def test_a_last_record_without_its_newline_is_read_once(tmp_path: Path) -> None:
    """A file that ends in a whole record without its newline (a tool that copied it
    dropped the newline) holds that record; a newline written after it later reads as
    a blank line, not the record again. A torn record still waits."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2}')
    follower, seen = JsonlFollower(str(path)), Collect()
    follower.read(seen.on_lines, seen.reset)
    lines = [line for block in seen.blocks for line in block.split(b"\n") if line.strip()]
    assert lines == [b'{"n":1}', b'{"n":2}']
    assert follower.offset == path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b'\n{"n":3}\n{"n":')
    follower.read(seen.on_lines, seen.reset)
    lines = [line for block in seen.blocks for line in block.split(b"\n") if line.strip()]
    assert lines == [b'{"n":1}', b'{"n":2}', b'{"n":3}']  # the torn {"n": waits
    assert follower.offset == path.stat().st_size - len(b'{"n":')


def test_a_resumed_parse_reads_a_last_record_without_its_newline(tmp_path: Path) -> None:
    from agentspool.adapters.claude_code import ClaudeCode

    record = (
        b'{"type":"user","sessionId":"s1","uuid":"u%d","timestamp":"2026-01-02T03:04:0%dZ",'
        b'"message":{"role":"user","content":"prompt %d"}}'
    )
    path = tmp_path / "s1.jsonl"
    path.write_bytes(record % (1, 1, 1) + b"\n" + record % (2, 2, 2))
    parse = ClaudeCode().resume_transcript(str(path), 0, b"")
    texts = [m.text for m in parse.read(1 << 20)] + [m.text for m in parse.read(1 << 20)]
    assert texts == ["prompt 1", "prompt 2"]
    assert parse.offset == path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"\n" + record % (3, 3, 3) + b"\n")
    later = ClaudeCode().resume_transcript(str(path), parse.offset, parse.state())
    assert [(m.seq, m.text) for m in later.read(1 << 20)] == [(3, "prompt 3")]
