"""Replaying real Copilot CLI 1.0.102 captures (tests/live/captures/copilot/<scenario>/)
through ``tests/support/replay.py``.

A capture holds each session's ``events.jsonl`` as the real binary wrote it, each line
stamped (``timestamp``), and ``hooks.jsonl``, every hook payload with the time the hook
ran. The copies go under a private ``COPILOT_HOME`` (where the adapter looks for them),
and only the hooks ``setup`` arms are replayed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay import CaptureReplay, iso_seconds, stamped_files

from agentspool.adapters.common.templates import template_text
from agentspool.adapters.copilot import Copilot, _lifecycle

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "copilot"
ARMED = frozenset(json.loads(template_text(_lifecycle.TEMPLATE))["hooks"])


def _stamps(record: dict[str, Any]) -> list[float]:
    return [iso_seconds(record["timestamp"])]


class Replay(CaptureReplay):
    def __init__(self, scenario: str, home: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        files = stamped_files(capture / "session-state", _stamps)
        super().__init__(
            capture, files, home / "session-state", runtime_dir, Copilot(), armed=ARMED
        )

    def transcript(self, session: str) -> str:
        return self.path(f"{session}/events.jsonl")

    def sessions(self) -> list[str]:
        """Session ids by when each transcript began."""
        return [n.split("/")[0] for n in sorted(self.files, key=lambda n: self.files[n][0][0])]

    def event_time(self, kind: str, nth: int = 0) -> float:
        """When the ``nth`` transcript record of type ``kind`` was written."""
        return self.record_time(lambda record: record["type"] == kind, nth)

    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        if payload.get("transcriptPath"):  # the capture's $ROOT: this replay's home instead
            payload["transcriptPath"] = self.transcript(payload["sessionId"])
        return json.dumps(payload).encode()


ReplayFactory = Callable[[str], Replay]


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReplayFactory:
    home = tmp_path / ".copilot"
    monkeypatch.setenv("COPILOT_HOME", str(home))
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    return lambda scenario: Replay(scenario, home, str(runtime))
