"""Replaying real Pi 0.73.1 captures (tests/live/captures/pi/<scenario>/).

A capture holds each session file as the real binary wrote it and ``spool.jsonl``, every
record agentspool's extension appended, with its time. ``Replay.to(t)`` makes the world as
it was at time ``t``: the records the extension had appended by then are spooled again
through agentspool's own write path (stamped with their captured time, the test process
standing for the Pi process that wrote them), and the session file holds what Pi had
written by then — nothing before its first assistant message, then everything up to it at
once (Pi holds a session's entries back until it has an answer), then each entry as it
was stamped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from agentspool.adapters.pi import Pi
from agentspool.core.seam import Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "pi"
RUN_ID = "run-1"
EPS = 0.0005


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _written_at(lines: list[bytes]) -> list[tuple[float, bytes]]:
    """Each line with when Pi wrote it: held back until the first assistant message."""
    entries = [json.loads(line) for line in lines]
    first = next(
        i
        for i, e in enumerate(entries)
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    flushed = epoch(entries[first]["timestamp"])
    return [
        (flushed if i <= first else epoch(e["timestamp"]), line)
        for i, (e, line) in enumerate(zip(entries, lines, strict=True))
    ]


class Replay:
    def __init__(self, scenario: str, home: Path, runtime_dir: str) -> None:
        self.dir = CAPTURES / scenario
        self.sessions_dir = home / "sessions" / "--work--"
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.runtime_dir = runtime_dir
        self.files: dict[str, list[tuple[float, bytes]]] = {}
        for path in sorted((self.dir / "sessions").glob("*.jsonl")):
            self.files[path.name] = _written_at(path.read_bytes().splitlines(keepends=True))
        self.spool: list[dict[str, Any]] = [
            json.loads(line) for line in (self.dir / "spool.jsonl").read_text().splitlines()
        ]
        self._written = dict.fromkeys(self.files, 0)
        self._spooled = 0
        self.adapter = Pi()

    def path(self, name: str) -> str:
        return str(self.sessions_dir / name)

    def names(self) -> list[str]:
        """Session file names, oldest first."""
        return sorted(self.files)

    def time(self, event: str, nth: int = 0) -> float:
        return [r["time"] for r in self.spool if r["event"] == event][nth]

    def entry_time(self, role: str, nth: int = 0) -> float:
        """When the ``nth`` message of ``role`` was written."""
        found = [t for ls in self.files.values() for t, raw in ls if f'"role":"{role}"' in str(raw)]
        return sorted(found)[nth]

    def _payload(self, record: dict[str, Any]) -> bytes:
        payload = dict(record["payload"])
        for key in ("sessionFile", "previousSessionFile", "targetSessionFile"):
            if payload.get(key):  # the capture's $ROOT: this replay's home instead
                payload[key] = self.path(os.path.basename(payload[key]))
        return json.dumps(payload).encode()

    def to(self, t: float) -> Replay:
        for name, lines in self.files.items():
            upto = next((i for i, (when, _) in enumerate(lines) if when > t), len(lines))
            if upto > self._written[name]:
                self.sessions_dir.mkdir(parents=True, exist_ok=True)
                with open(self.path(name), "ab") as fh:
                    fh.writelines(raw for _, raw in lines[self._written[name] : upto])
                self._written[name] = upto
        fd = write.open_run_dir(self.run_dir)
        try:
            while self._spooled < len(self.spool) and self.spool[self._spooled]["time"] <= t:
                record = self.spool[self._spooled]
                stamp, payload = int(record["time"] * 1e9), self._payload(record)
                with mock.patch.object(write.time, "time_ns", lambda stamp=stamp: stamp):
                    framed = write.frame(
                        record["event"], payload, len(payload), -1, os.getpid(), os.getpid()
                    )
                write.append(fd, write.EVENTS_FILE, framed)
                self._spooled += 1
        finally:
            os.close(fd)
        return self

    def end(self) -> float:
        times = [r["time"] for r in self.spool] + [t for ls in self.files.values() for t, _ in ls]
        return max(times) + 1

    def chat(self) -> Chat:
        """A live read, the transcript located from the spool."""
        return self.adapter.read_chat(RUN_ID, self.runtime_dir, None)


ReplayFactory = Callable[[str], Replay]


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReplayFactory:
    home = tmp_path / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    return lambda scenario: Replay(scenario, home, str(runtime))
