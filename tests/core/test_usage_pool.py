"""The usage-first pool's queue (core/usage_first.py): the workers take the next file
when they are done with one, so a worker held up on one file leaves the others to the
rest; a queue too long for its pipe leaves the files it could not hold to this process;
a worker goes on while the writer is held up (its results wait in a wide pipe)."""

from __future__ import annotations

import json
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


def _responses(session: str, count: int) -> bytes:
    """A Claude Code transcript of a prompt and ``count`` responses, each with usage."""
    head = {"sessionId": session, "cwd": "/w", "version": "2.1.0", "isSidechain": False}
    lines = [
        {
            **head,
            "type": "user",
            "uuid": "u0",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "go"},
        }
    ]
    for n in range(count):
        lines.append(
            {
                **head,
                "type": "assistant",
                "uuid": f"a{n}",
                "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                "message": {
                    "id": f"msg_{session}_{n:06d}",
                    "model": "claude-sonnet-4-5",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 10 + n, "output_tokens": 5},
                },
            }
        )
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


class _ReadMarked(ClaudeCode):
    """Claude Code whose usage view leaves a mark per file read."""

    marks = Path()

    def usage_view(self, path: str) -> Any:
        view = super().usage_view(path)
        (self.marks / Path(path).name).write_text(str(os.getpid()))
        return view


def test_workers_go_on_while_the_writer_is_held_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's results (~160 KB) are more than a 64 KB pipe holds: a worker goes on
    to its next file only if its pipe takes them while this process, the writer, is
    held up (a checkpoint's fsync) — here on the first file it stores, until every file
    is read (up to 20 s)."""
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-w")
    projects.mkdir(parents=True)
    for n in range(6):
        (projects / f"s{n}.jsonl").write_bytes(_responses(f"s{n}", 1600))
    monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)
    _ReadMarked.marks = tmp_path / "marks"
    _ReadMarked.marks.mkdir()
    ingest = SessionStore.ingest_usage
    read_while_held: list[int] = []

    def held_up(store: SessionStore, *args: Any) -> int:
        if not read_while_held:
            deadline = time.monotonic() + 20
            while len(list(_ReadMarked.marks.iterdir())) < 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            read_while_held.append(len(list(_ReadMarked.marks.iterdir())))
        return ingest(store, *args)

    monkeypatch.setattr(SessionStore, "ingest_usage", held_up)
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        report = index_history(store, [_ReadMarked()], usage_first=True, workers=2)
        assert (report.new, report.failed) == (6, 0)
        assert len(store.usage_by_session([s.id for s in store.sessions()])) == 6
    assert read_while_held == [6]
    readers = {mark.read_text() for mark in _ReadMarked.marks.iterdir()}
    assert len(readers) == 2 and str(os.getpid()) not in readers
