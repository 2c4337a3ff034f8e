"""Replaying real Pi 0.73.1 captures (tests/live/captures/pi/<scenario>/) through
``tests/support/replay.py``.

A capture holds each session file as the real binary wrote it and ``spool.jsonl``, every
record agentspool's extension appended, with its time. ``Replay.to(t)`` makes the world
as it was at time ``t``: the records the extension had appended by then are spooled
again through agentspool's own write path (stamped with their captured time, the test
process standing for the Pi process that wrote them), and the session file holds what Pi
had written by then — nothing before its first assistant message, then everything up to
it at once (Pi holds a session's entries back until it has an answer), then each entry
as it was stamped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, Lines, iso_seconds

from agentspool.adapters.pi import Pi

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "pi"
EPS = 0.0005


def _written_at(lines: list[bytes]) -> Lines:
    """Each line with when Pi wrote it: held back until the first assistant message."""
    entries = [json.loads(line) for line in lines]
    first = next(
        i
        for i, e in enumerate(entries)
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    flushed = iso_seconds(entries[first]["timestamp"])
    return [
        (flushed if i <= first else iso_seconds(e["timestamp"]), line)
        for i, (e, line) in enumerate(zip(entries, lines, strict=True))
    ]


class Replay(CaptureReplay):
    log = "spool.jsonl"
    paths_in_payload = ("sessionFile", "previousSessionFile", "targetSessionFile")

    def __init__(self, scenario: str, home: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = {
            path.name: _written_at(path.read_bytes().splitlines(keepends=True))
            for path in sorted((capture / "sessions").glob("*.jsonl"))
        }
        super().__init__(capture, files, home / "sessions" / "--work--", runtime_dir, Pi())
        self.agent_pid = os.getpid()  # the test process stands for the Pi process

    @property
    def spool(self) -> list[dict[str, Any]]:
        """The records the extension appended, as the capture keeps them."""
        return self.hooks

    def names(self) -> list[str]:
        """Session file names, oldest first."""
        return sorted(self.files)

    def entry_time(self, role: str, nth: int = 0) -> float:
        """When the ``nth`` message of ``role`` was written."""
        return self.record_time(lambda e: (e.get("message") or {}).get("role") == role, nth)


ReplayFactory = Callable[[str], Replay]


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReplayFactory:
    home = tmp_path / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    return lambda scenario: Replay(scenario, home, str(runtime))
