"""Replaying real Codex 0.169.0 captures (tests/live/captures/codex/<scenario>/).

A capture holds the rollout file(s) the real binary wrote and ``hooks.jsonl``, every
hook payload with the time the hook ran. ``Replay.to(t)`` makes the world as it was at
time ``t``: the rollout lines written by then are *appended* to copies of the rollouts
(a file with no line yet does not exist: Codex creates it lazily), and the hooks fired
by then become spool records through agentspool's own write path, stamped with their
captured time (a spool record carries its write time; here that is the capture's).
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

from agentspool.adapters.codex import Codex
from agentspool.core.seam import Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "codex"
RUN_ID = "run-1"


def _stamp(line: bytes) -> float:
    stamp = json.loads(line)["timestamp"]
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class Replay:
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        self.dir = CAPTURES / scenario
        self.root = root
        self.runtime_dir = runtime_dir
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.sessions = root / "sessions"
        self.sessions.mkdir()
        self.rollouts: dict[str, list[tuple[float, bytes]]] = {}
        for path in sorted(self.dir.glob("rollout-*.jsonl")):
            lines = path.read_bytes().splitlines(keepends=True)
            self.rollouts[path.name] = [(_stamp(line), line) for line in lines if line.strip()]
        self.hooks: list[dict[str, Any]] = [
            json.loads(line)
            for line in (self.dir / "hooks.jsonl").read_text().splitlines()
            if line.strip()
        ]
        self._written: dict[str, int] = dict.fromkeys(self.rollouts, 0)
        self._hooks_written = 0
        self.adapter = Codex()

    # -- the capture ---------------------------------------------------------------
    def path(self, name: str) -> str:
        return str(self.sessions / name)

    def rollout(self, index: int = 0) -> str:
        """Path of the ``index``-th rollout (by name, i.e. creation time)."""
        return self.path(sorted(self.rollouts)[index])

    def hook_times(self, event: str, **match: str) -> list[float]:
        return [
            h["time"]
            for h in self.hooks
            if h["event"] == event and all(h["payload"].get(k) == v for k, v in match.items())
        ]

    def hook_time(self, event: str, nth: int = 0, **match: str) -> float:
        return self.hook_times(event, **match)[nth]

    def record_time(self, predicate: Callable[[dict[str, Any]], bool], nth: int = 0) -> float:
        found = [
            t for lines in self.rollouts.values() for t, raw in lines if predicate(json.loads(raw))
        ]
        return sorted(found)[nth]

    def end(self) -> float:
        times = [h["time"] for h in self.hooks]
        times += [t for lines in self.rollouts.values() for t, _ in lines]
        return max(times) + 1

    # -- making the world as of time t --------------------------------------------
    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        for key in ("transcript_path", "agent_transcript_path"):
            if payload.get(key):
                payload[key] = self.path(os.path.basename(payload[key]))
        return json.dumps(payload).encode()

    def to(self, t: float) -> Replay:
        for name, lines in self.rollouts.items():
            upto = next((i for i, (when, _) in enumerate(lines) if when > t), len(lines))
            if upto > self._written[name]:
                with open(self.path(name), "ab") as fh:
                    fh.writelines(raw for _, raw in lines[self._written[name] : upto])
                self._written[name] = upto
        fd = write.open_run_dir(self.run_dir)
        try:
            while (
                self._hooks_written < len(self.hooks)
                and self.hooks[self._hooks_written]["time"] <= t
            ):
                hook = self.hooks[self._hooks_written]
                self.append_hook(fd, hook["event"], self._payload(hook), hook["time"])
                self._hooks_written += 1
        finally:
            os.close(fd)
        return self

    @staticmethod
    def append_hook(fd: int, event: str, payload: bytes, at: float) -> None:
        with mock.patch.object(write.time, "time_ns", lambda: int(at * 1e9)):
            record = write.frame(event, payload, len(payload), -1, 0, os.getpid())
        write.append(fd, write.EVENTS_FILE, record)

    def full(self) -> Replay:
        return self.to(self.end())

    def chat(self, transcript_path: str | None = None, *, live: bool = True) -> Chat:
        """``read_chat`` as core calls it: the located rollout, or the one given."""
        runtime_dir = self.runtime_dir if live else ""
        if transcript_path is None:
            transcript_path = self.adapter.locate_transcript(RUN_ID, self.runtime_dir)
        return self.adapter.read_chat(RUN_ID, runtime_dir, transcript_path)


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        root = tmp_path / scenario
        root.mkdir()
        return Replay(scenario, root, runtime_dir)

    return make
