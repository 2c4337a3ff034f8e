"""Replaying real Gemini CLI 0.61.0 captures (tests/live/captures/gemini-cli/<scenario>/).

A capture holds the chat files the real binary wrote (``chats/``: each as it was last
seen, also one the CLI deleted at exit) and ``hooks.jsonl``, every hook payload with the
time the hook ran (all eleven events were logged; the seven ``setup`` arms are replayed).
``Replay.to(t)`` makes the world as it was at time ``t`` (``tests/support/replay.py``).

A chat line's time is the newest stamp it carries (its ``timestamp``, a tool call's
``timestamp``, ``lastUpdated``), never older than the line before it: the CLI re-appends
a record whole, with its first stamp, once its tool calls completed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, Lines, iso_seconds

from agentspool.adapters.gemini_cli import GeminiCli, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"


def _stamps(record: dict[str, Any]) -> list[float]:
    found = [record.get("timestamp"), record.get("startTime")]
    found += [c.get("timestamp") for c in record.get("toolCalls") or ()]
    found.append((record.get("$set") or {}).get("lastUpdated"))
    return [iso_seconds(s) for s in found if isinstance(s, str)]


def chat_lines(path: Path) -> Lines:
    out: Lines = []
    at = 0.0
    for raw in path.read_bytes().splitlines(keepends=True):
        if raw.strip():
            at = max([at, *_stamps(json.loads(raw))])
            out.append((at, raw))
    return out


class Replay(CaptureReplay):
    paths_in_payload = ("transcript_path",)

    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = {p.name: chat_lines(p) for p in sorted((capture / "chats").glob("*.jsonl"))}
        super().__init__(
            capture, files, root / "chats", runtime_dir, GeminiCli(), armed=_install.events()
        )

    def chat_file(self, index: int = 0) -> str:
        """The ``index``-th chat file, by when its first line was written."""
        names = sorted(self.files, key=lambda n: self.files[n][0][0])
        return self.path(names[index])

    def before_exit(self) -> Replay:
        """Everything up to the moment ``/quit`` ended the session."""
        self.to(self.hook_time("SessionEnd", reason="exit") - 0.0005)
        return self


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        return Replay(scenario, tmp_path / scenario, runtime_dir)

    return make
