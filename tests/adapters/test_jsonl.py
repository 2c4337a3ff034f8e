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
