"""Replaying real Codex 0.169.0 captures (tests/live/captures/codex/<scenario>/).

A capture holds the rollout file(s) the real binary wrote and ``hooks.jsonl``, every
hook payload with the time the hook ran; ``Replay.to(t)`` makes the world as it was at
time ``t`` (``tests/support/replay.py``). A rollout line was written at its own
``timestamp``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from replay import CaptureReplay, Lines, iso_seconds

from agentspool.adapters.codex import Codex

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "codex"


def rollout_lines(path: Path) -> Lines:
    lines = path.read_bytes().splitlines(keepends=True)
    return [(iso_seconds(json.loads(line)["timestamp"]), line) for line in lines if line.strip()]


class Replay(CaptureReplay):
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        capture = CAPTURES / scenario
        rollouts = {p.name: rollout_lines(p) for p in sorted(capture.glob("rollout-*.jsonl"))}
        super().__init__(capture, rollouts, root / "sessions", runtime_dir, Codex())
        self.rollouts = rollouts

    def rollout(self, index: int = 0) -> str:
        """Path of the ``index``-th rollout (by name, i.e. creation time)."""
        return self.path(sorted(self.rollouts)[index])


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        root = tmp_path / scenario
        root.mkdir()
        return Replay(scenario, root, runtime_dir)

    return make
