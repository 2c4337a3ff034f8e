"""Replaying real Gemini CLI 0.61.0 captures (tests/live/captures/gemini-cli/<scenario>/).

A capture holds the chat files the real binary wrote (``chats/``: each as it was last
seen, also one the CLI deleted at exit) and ``hooks.jsonl``, every hook payload with the
time the hook ran (all eleven events were logged; the seven ``setup`` arms are replayed).
``Replay.to(t)`` makes the world as it was at time ``t``: the chat lines written by then
are appended to copies of the chat files, and the hooks fired by then become spool
records through agentspool's own write path, stamped with their captured time.

A chat line's time is the newest stamp it carries (its ``timestamp``, a tool call's
``timestamp``, ``lastUpdated``), never older than the line before it: the CLI re-appends
a record whole, with its first stamp, once its tool calls completed.
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

from agentspool.adapters.gemini_cli import GeminiCli, _install
from agentspool.core.seam import Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"
RUN_ID = "run-1"
ARMED = frozenset(_install.events())


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _stamps(record: dict[str, Any]) -> list[float]:
    found = [record.get("timestamp"), record.get("startTime")]
    found += [c.get("timestamp") for c in record.get("toolCalls") or ()]
    found.append((record.get("$set") or {}).get("lastUpdated"))
    return [_epoch(s) for s in found if isinstance(s, str)]


def chat_lines(path: Path) -> list[tuple[float, bytes]]:
    out: list[tuple[float, bytes]] = []
    at = 0.0
    for raw in path.read_bytes().splitlines(keepends=True):
        if raw.strip():
            at = max([at, *_stamps(json.loads(raw))])
            out.append((at, raw))
    return out


class Replay:
    def __init__(self, scenario: str, root: Path, runtime_dir: str) -> None:
        self.dir = CAPTURES / scenario
        self.runtime_dir = runtime_dir
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.chats = root / "chats"
        self.chats.mkdir(parents=True)
        self.files = {p.name: chat_lines(p) for p in sorted((self.dir / "chats").glob("*.jsonl"))}
        self.hooks: list[dict[str, Any]] = [
            json.loads(line) for line in (self.dir / "hooks.jsonl").read_text().splitlines()
        ]
        self._written = dict.fromkeys(self.files, 0)
        self._hooks_written = 0
        self.adapter = GeminiCli()

    def path(self, name: str) -> str:
        return str(self.chats / name)

    def chat_file(self, index: int = 0) -> str:
        """The ``index``-th chat file, by when its first line was written."""
        names = sorted(self.files, key=lambda n: self.files[n][0][0])
        return self.path(names[index])

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
            t for lines in self.files.values() for t, raw in lines if predicate(json.loads(raw))
        ]
        return sorted(found)[nth]

    def end(self) -> float:
        times = [h["time"] for h in self.hooks]
        times += [t for lines in self.files.values() for t, _ in lines]
        return max(times) + 1

    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        if payload.get("transcript_path"):
            payload["transcript_path"] = self.path(os.path.basename(payload["transcript_path"]))
        return json.dumps(payload).encode()

    def to(self, t: float) -> Replay:
        for name, lines in self.files.items():
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
                if hook["event"] in ARMED:
                    stamp = int(hook["time"] * 1e9)
                    with mock.patch.object(write.time, "time_ns", lambda stamp=stamp: stamp):
                        payload = self._payload(hook)
                        record = write.frame(
                            hook["event"], payload, len(payload), -1, 0, os.getpid()
                        )
                    write.append(fd, write.EVENTS_FILE, record)
                self._hooks_written += 1
        finally:
            os.close(fd)
        return self

    def full(self) -> Replay:
        return self.to(self.end())

    def before_exit(self) -> Replay:
        """Everything up to the moment ``/quit`` ended the session."""
        return self.to(self.hook_time("SessionEnd", reason="exit") - 0.0005)

    def chat(self, transcript_path: str | None = None, *, live: bool = True) -> Chat:
        """``read_chat`` as core calls it: the located chat file, or the one given."""
        if transcript_path is None:
            transcript_path = self.adapter.locate_transcript(RUN_ID, self.runtime_dir)
        return self.adapter.read_chat(RUN_ID, self.runtime_dir if live else "", transcript_path)


@pytest.fixture
def replay(tmp_path: Path, runtime_dir: str) -> Callable[[str], Replay]:
    def make(scenario: str) -> Replay:
        return Replay(scenario, tmp_path / scenario, runtime_dir)

    return make
