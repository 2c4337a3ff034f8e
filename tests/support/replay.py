"""Real captured evidence (tests/live/captures/) replayed: the one capture-replay helper.

The captures were recorded from the real CLIs by the Tier-2 harness. Each holds what the
CLI wrote (transcript, rollout or chat files, each line stamped by the CLI) and
``hooks.jsonl``: every hook payload with the time the hook ran (``harness/hooklog.py``).

- ``CaptureReplay.to(t)`` makes the world as it was at time ``t``: the lines written by
  then are *appended* to copies of the files (a file with no line yet does not exist:
  the CLIs create theirs lazily), and the hooks fired by then become spool records
  through agentspool's own write path, stamped with their captured time. Each
  provider's conftest says where its files are and when each line was written.
- ``stamped_files``: a capture folder's JSONL files, each line at the newest stamp it
  carries (a provider's conftest says where its stamps are).
- ``hook_log``, ``append_hook``, ``iso_seconds``: the pieces, for a replay of its own
  (``stepped.py``: a clock that steps back).
- ``claude_events``: a Claude Code capture as canonical events through the adapter's
  own translators, for reducer tests over real event sequences instead of invented ones.

OpenCode's captures are rebuilt by ``harness/opencode_captures.py``: its evidence is a
store and the plugin's own spool, not hook payloads.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

from agentspool.adapters.claude_code import _signals, _transcript
from agentspool.core.events import Event
from agentspool.core.seam import Adapter, Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.read import SpoolRecord

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"
RUN_ID = "run-1"
Lines = list[tuple[float, bytes]]
"""A file's lines, each with the time it was written, in file order."""


def iso_seconds(stamp: str) -> float:
    """``2026-01-02T03:04:05.678Z`` as epoch seconds."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def stamped_lines(path: Path, stamps: Callable[[dict[str, Any]], Iterable[float]]) -> Lines:
    """``path``'s lines, each at the newest of its ``stamps``, never before the line above."""
    out: Lines = []
    at = 0.0
    for raw in path.read_bytes().splitlines(keepends=True):
        if raw.strip():
            at = max([at, *stamps(json.loads(raw))])
            out.append((at, raw))
    return out


def stamped_files(
    folder: Path, stamps: Callable[[dict[str, Any]], Iterable[float]]
) -> dict[str, Lines]:
    """Every ``*.jsonl`` under ``folder``, named by its path inside it."""
    return {
        str(p.relative_to(folder)): stamped_lines(p, stamps)
        for p in sorted(folder.rglob("*.jsonl"))
    }


def hook_log(capture: Path, name: str = "hooks.jsonl") -> list[dict[str, Any]]:
    """The capture's ``hooks.jsonl`` (or ``name``): ``{event, time, payload, …}`` per
    hook run."""
    return [json.loads(line) for line in (capture / name).read_text().splitlines() if line.strip()]


def append_hook(fd: int, event: str, payload: bytes, at: float, agent_pid: int = 0) -> None:
    """One spool record in the run dir ``fd``, through the hooks' own write path, as if
    written at ``at``."""
    with mock.patch.object(write.time, "time_ns", lambda: int(at * 1e9)):
        record = write.frame(event, payload, len(payload), -1, agent_pid, os.getpid())
    write.append(fd, write.EVENTS_FILE, record)


class CaptureReplay:
    """A capture made real in ``root`` and ``runtime_dir``, up to a moment at a time.

    ``files``: each file's name and ``Lines``; ``folder``: where the copies go;
    ``armed``: the hook events ``setup`` arms (the others were logged, not replayed);
    ``paths_in_payload``: the payload keys naming a file of the capture (rewritten to
    the copy); ``log``: the capture's record of what the CLI reported (a shipped
    extension's spool, for a CLI with no hooks)."""

    paths_in_payload: tuple[str, ...] = ("transcript_path", "agent_transcript_path")
    log = "hooks.jsonl"

    def __init__(
        self,
        capture: Path,
        files: dict[str, Lines],
        folder: Path,
        runtime_dir: str,
        adapter: Adapter,
        *,
        armed: Iterable[str] | None = None,
    ) -> None:
        self.dir = capture
        self.files = files
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.runtime_dir = runtime_dir
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.adapter = adapter
        self.hooks = hook_log(capture, self.log)
        self.armed = None if armed is None else frozenset(armed)
        self.agent_pid = 0
        """The agent process the hooks name; 0 as in the captures, which kept none."""
        self._written = dict.fromkeys(self.files, 0)
        self._hooks_written = 0

    # -- the capture ---------------------------------------------------------------
    def path(self, name: str) -> str:
        return str(self.folder / name)

    def chat_file(self, index: int = 0) -> str:
        """The ``index``-th file, by when its first line was written."""
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

    # -- making the world as of time t --------------------------------------------
    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        for key in self.paths_in_payload:
            if payload.get(key):
                payload[key] = self.path(os.path.basename(payload[key]))
        return json.dumps(payload).encode()

    def to(self, t: float) -> CaptureReplay:
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
                if self.armed is None or hook["event"] in self.armed:
                    append_hook(
                        fd, hook["event"], self._payload(hook), hook["time"], self.agent_pid
                    )
                self._hooks_written += 1
        finally:
            os.close(fd)
        return self

    def full(self) -> CaptureReplay:
        return self.to(self.end())

    def chat(self, transcript_path: str | None = None, *, live: bool = True) -> Chat:
        """``read_chat`` as core calls it: the located file, or the one given."""
        if transcript_path is None:
            transcript_path = self.adapter.locate_transcript(RUN_ID, self.runtime_dir)
        return self.adapter.read_chat(RUN_ID, self.runtime_dir if live else "", transcript_path)


# -- Claude Code captures as canonical events ---------------------------------------------


def claude_captures() -> list[str]:
    return sorted(
        p.name for p in (CAPTURES / "claude-code").iterdir() if (p / "hooks.jsonl").exists()
    )


def claude_transcripts(name: str) -> list[str]:
    """The capture's main transcripts, oldest first (two after /clear)."""
    files = glob.glob(str(CAPTURES / "claude-code" / name / "transcript" / "*.jsonl"))
    return sorted(files, key=_first_stamp)


def _first_stamp(path: str) -> str:
    with open(path) as fh:
        for line in fh:
            stamp = json.loads(line).get("timestamp")
            if stamp:
                return str(stamp)
    return ""


def claude_hook_records(name: str) -> list[SpoolRecord]:
    records = []
    for offset, entry in enumerate(hook_log(CAPTURES / "claude-code" / name)):
        payload = json.dumps(entry["payload"]).encode()
        wall = int(entry["time"] * 1e9)
        records.append(
            SpoolRecord(entry["event"], wall, wall, 0, 0, -1, len(payload), payload, offset)
        )
    return records


def claude_events(name: str) -> list[Event]:
    """Every canonical event of a capture (hooks + last transcript), in evidence-time order."""
    translator = _signals.HookTranslator()
    events: list[Event] = []
    for record in claude_hook_records(name):
        events += translator.translate(record)
    paths = claude_transcripts(name)
    for path in paths:
        parser = _transcript.TranscriptParser()
        with open(path, "rb") as fh:
            for raw in fh:
                parser.feed_line(raw.rstrip(b"\n"))
        events += parser.events
    return sorted(events, key=lambda e: e.at)


def exists() -> bool:
    return os.path.isdir(CAPTURES / "claude-code")
