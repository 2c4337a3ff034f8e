"""Replaying real Copilot CLI 1.0.102 captures (tests/live/captures/copilot/<scenario>/).

A capture holds each session's ``events.jsonl`` as the real binary wrote it and
``hooks.jsonl``, every hook payload with the time the hook ran. ``Replay.to(t)`` makes
the world as it was at time ``t``: the transcript lines stamped by then are appended to
copies under a private ``COPILOT_HOME`` (where the adapter looks for them), and the hooks
``setup`` arms that fired by then become spool records through agentspool's own write
path, stamped with their captured time.
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

from agentspool.adapters.common.templates import template_text
from agentspool.adapters.copilot import Copilot, _lifecycle
from agentspool.core.seam import Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "copilot"
RUN_ID = "run-1"
ARMED = frozenset(json.loads(template_text(_lifecycle.TEMPLATE))["hooks"])


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class Replay:
    def __init__(self, scenario: str, home: Path, runtime_dir: str) -> None:
        self.dir = CAPTURES / scenario
        self.home = home
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.runtime_dir = runtime_dir
        self.files: dict[str, list[tuple[float, bytes]]] = {}
        for path in sorted((self.dir / "session-state").glob("*/events.jsonl")):
            lines = path.read_bytes().splitlines(keepends=True)
            self.files[path.parent.name] = [(epoch(json.loads(r)["timestamp"]), r) for r in lines]
        self.hooks: list[dict[str, Any]] = [
            json.loads(line) for line in (self.dir / "hooks.jsonl").read_text().splitlines()
        ]
        self._written = dict.fromkeys(self.files, 0)
        self._hooks_written = 0
        self.adapter = Copilot()

    def transcript(self, session: str) -> str:
        return str(self.home / "session-state" / session / "events.jsonl")

    def sessions(self) -> list[str]:
        """Session ids by when each transcript began."""
        return sorted(self.files, key=lambda s: self.files[s][0][0])

    def hook_time(self, event: str, nth: int = 0) -> float:
        return [h["time"] for h in self.hooks if h["event"] == event][nth]

    def record_time(self, kind: str, nth: int = 0) -> float:
        found = [
            t
            for lines in self.files.values()
            for t, raw in lines
            if json.loads(raw)["type"] == kind
        ]
        return sorted(found)[nth]

    def to(self, t: float) -> Replay:
        for session, lines in self.files.items():
            upto = next((i for i, (when, _) in enumerate(lines) if when > t), len(lines))
            if upto > self._written[session]:
                path = Path(self.transcript(session))
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "ab") as fh:
                    fh.writelines(raw for _, raw in lines[self._written[session] : upto])
                self._written[session] = upto
        fd = write.open_run_dir(self.run_dir)
        try:
            while (
                self._hooks_written < len(self.hooks)
                and self.hooks[self._hooks_written]["time"] <= t
            ):
                hook = self.hooks[self._hooks_written]
                if hook["event"] in ARMED:
                    stamp = int(hook["time"] * 1e9)
                    payload = self._payload(hook)
                    with mock.patch.object(write.time, "time_ns", lambda stamp=stamp: stamp):
                        record = write.frame(
                            hook["event"], payload, len(payload), -1, 0, os.getpid()
                        )
                    write.append(fd, write.EVENTS_FILE, record)
                self._hooks_written += 1
        finally:
            os.close(fd)
        return self

    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        if payload.get("transcriptPath"):  # the capture's $ROOT: this replay's home instead
            payload["transcriptPath"] = self.transcript(payload["sessionId"])
        return json.dumps(payload).encode()

    def end(self) -> float:
        times = [h["time"] for h in self.hooks] + [t for ls in self.files.values() for t, _ in ls]
        return max(times) + 1

    def chat(self) -> Chat:
        """A live read, the transcript located from the spool."""
        return self.adapter.read_chat(RUN_ID, self.runtime_dir, None)


ReplayFactory = Callable[[str], Replay]


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReplayFactory:
    home = tmp_path / ".copilot"
    monkeypatch.setenv("COPILOT_HOME", str(home))
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    return lambda scenario: Replay(scenario, home, str(runtime))
