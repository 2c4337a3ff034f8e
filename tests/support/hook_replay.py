"""A captured real run (tests/live/captures/<provider>/<scenario>/) replayed as it
happened: ``HookReplay.to(t)`` makes the world as it was at time ``t`` — the chat lines
written by then appended to copies of the chat files, and the hooks fired by then
written as spool records through agentspool's own write path, stamped with their
captured time (``hooks.jsonl``: ``{event, time, payload}`` a line).

A provider's replay says when each chat line was written (``line_time``: the newest
stamp it carries, never older than the line before it) and which hooks ``setup`` arms.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

from agentspool.core.seam import Adapter, Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

RUN_ID = "run-1"


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def chat_lines(
    path: Path, stamps: Callable[[dict[str, Any]], Iterable[float]]
) -> list[tuple[float, bytes]]:
    out: list[tuple[float, bytes]] = []
    at = 0.0
    for raw in path.read_bytes().splitlines(keepends=True):
        if raw.strip():
            at = max([at, *stamps(json.loads(raw))])
            out.append((at, raw))
    return out


class HookReplay:
    def __init__(
        self,
        capture: Path,
        root: Path,
        runtime_dir: str,
        *,
        armed: frozenset[str],
        stamps: Callable[[dict[str, Any]], Iterable[float]],
        adapter: Adapter,
    ) -> None:
        self.adapter = adapter
        self.dir = capture
        self.runtime_dir = runtime_dir
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.armed = armed
        self.chats = root / "chats"
        self.chats.mkdir(parents=True)  # the CLI's files, as the capture's chats/ holds them
        chats = self.dir / "chats"
        self.files = {
            str(p.relative_to(chats)): chat_lines(p, stamps) for p in sorted(chats.rglob("*.jsonl"))
        }
        self.hooks: list[dict[str, Any]] = [
            json.loads(line) for line in (self.dir / "hooks.jsonl").read_text().splitlines()
        ]
        self._written = dict.fromkeys(self.files, 0)
        self._hooks_written = 0

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

    def to(self, t: float) -> HookReplay:
        for name, lines in self.files.items():
            upto = next((i for i, (when, _) in enumerate(lines) if when > t), len(lines))
            if upto > self._written[name]:
                os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
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
                if hook["event"] in self.armed:
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

    def full(self) -> HookReplay:
        return self.to(self.end())

    def chat(self, transcript_path: str | None = None, *, live: bool = True) -> Chat:
        """``read_chat`` as core calls it: the located transcript, or the one given."""
        if transcript_path is None:
            transcript_path = self.adapter.locate_transcript(RUN_ID, self.runtime_dir)
        return self.adapter.read_chat(RUN_ID, self.runtime_dir if live else "", transcript_path)
