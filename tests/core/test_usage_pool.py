"""The usage-first pool's queue (core/usage_first.py): the workers take the next file
when they are done with one, so a worker held up on one file leaves the others to the
rest; a queue too long for its pipe leaves the files it could not hold to this process."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from agentspool.adapters.claude_code._adapter import ClaudeCode
from agentspool.core import usage_first
from agentspool.core.history import index_history
from agentspool.core.store import SessionStore

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"


class _HeldUp(ClaudeCode):
    """Claude Code whose usage view of ``held`` waits (up to 20 s) until every other
    file is read; each read leaves its reader's pid in ``marks``."""

    held = ""
    marks = Path()

    def usage_view(self, path: str) -> Any:
        view = super().usage_view(path)
        if path == self.held:
            others = len(_claude_files()) - 1
            deadline = time.monotonic() + 20
            while len(list(self.marks.iterdir())) < others and time.monotonic() < deadline:
                time.sleep(0.01)
            (self.marks.parent / "held-by").write_text(str(os.getpid()))
        else:
            (self.marks / Path(path).name).write_text(str(os.getpid()))
        return view


def _claude_files() -> list[Path]:
    return sorted(Path(os.environ["CLAUDE_CONFIG_DIR"], "projects").rglob("*.jsonl"))


def test_a_worker_held_up_on_one_file_leaves_every_other_to_the_other_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects")
    for n, transcript in enumerate(sorted(CAPTURES.glob("claude-code/*/transcript/*.jsonl"))):
        (projects / f"-work-{n}").mkdir(parents=True)
        (projects / f"-work-{n}" / transcript.name).write_bytes(transcript.read_bytes())
    files = _claude_files()
    assert len(files) >= 6
    monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)
    _HeldUp.held = str(max(files, key=lambda p: p.stat().st_size))  # handed out first
    _HeldUp.marks = tmp_path / "marks"
    _HeldUp.marks.mkdir()
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        report = index_history(store, [_HeldUp()], usage_first=True, workers=2)
    assert (report.new, report.failed) == (len(files), 0)
    readers = {mark.read_text() for mark in _HeldUp.marks.iterdir()}
    held_by = (tmp_path / "held-by").read_text()
    # Shares fixed at the start would have left about half the files behind the held one.
    assert len(readers) == 1
    assert readers != {held_by} and str(os.getpid()) not in readers | {held_by}


def test_a_queue_longer_than_its_pipe_holds_whole_tickets_in_order() -> None:
    order = list(range(400_000, 0, -1))  # 1.6 MB of tickets: more than a pipe may hold
    queue = usage_first._queue(order)
    try:
        held = b""
        while chunk := os.read(queue, 1 << 16):
            held += chunk
    finally:
        os.close(queue)
    assert len(held) % 4 == 0 and 0 < len(held) < 4 * len(order)
    assert list(struct.unpack(f"<{len(held) // 4}I", held)) == order[: len(held) // 4]
