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

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, iso_seconds, stamped_files

from agentspool.adapters.gemini_cli import GeminiCli, _install

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"


def _stamps(record: dict[str, Any]) -> list[float]:
    found = [record.get("timestamp"), record.get("startTime")]
    found += [c.get("timestamp") for c in record.get("toolCalls") or ()]
    found.append((record.get("$set") or {}).get("lastUpdated"))
    return [iso_seconds(s) for s in found if isinstance(s, str)]


class Replay(CaptureReplay):
    paths_in_payload = ("transcript_path",)

    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = stamped_files(capture / "chats", _stamps)
        super().__init__(
            capture, files, root / "chats", runtime_dir, GeminiCli(), armed=_install.events()
        )

    def before_exit(self) -> Replay:
        """Everything up to the moment ``/quit`` ended the session."""
        self.to(self.hook_time("SessionEnd", reason="exit") - 0.0005)
        return self


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        return Replay(scenario, tmp_path / scenario, runtime_dir)

    return make
