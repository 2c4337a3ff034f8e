"""Real captures replayed on a machine whose wall clock steps back.

A capture (tests/live/captures/<provider>/<scenario>/) holds what the real CLI wrote —
transcript or rollout lines stamped by the CLI, every hook with the time it ran, Claude
Code's native status over time. ``SteppedWorld.to(t)`` makes the world as it was at true
time ``t``: each source's lines written by then are appended in their file order, hooks
become spool records through agentspool's own write path, the native status file is
rewritten. With ``step_at`` set, every stamp written after true time ``step_at`` (by
every source: one machine, one clock) reads ``step`` seconds earlier, as after an NTP
correction; which lines exist, and their order, is untouched. Its pieces are the one
capture replay's (``replay.py``); the restamping and the native status file are its own.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay import CAPTURES, RUN_ID, append_hook, hook_log, iso_seconds

from agentspool.adapters.claude_code import ClaudeCode
from agentspool.adapters.claude_code._signals import process_start
from agentspool.adapters.codex import Codex
from agentspool.core.seam import Chat
from agentspool.spool import write
from agentspool.spool.layout import ensure_run_dir

STEP = 600.0


def scenarios(provider: str) -> list[str]:
    root = CAPTURES / provider
    return sorted(
        p.name
        for p in root.iterdir()
        if (p / "hooks.jsonl").exists()
        and (glob.glob(str(p / "transcript" / "*.jsonl")) or glob.glob(str(p / "rollout-*")))
    )


def _stamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    whole = datetime.fromtimestamp(millis // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{whole}.{millis % 1000:03d}Z"


class _Lines:
    """One transcript file: its lines with the true time each was written (a line
    without a stamp is written with the one before it)."""

    def __init__(self, path: str) -> None:
        self.lines: list[tuple[float, bytes]] = []
        when = 0.0
        with open(path, "rb") as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                stamp = json.loads(raw).get("timestamp")
                when = iso_seconds(stamp) if stamp else when
                self.lines.append((when, raw.rstrip(b"\n")))
        first = next((w for w, _ in self.lines if w), 0.0)
        self.lines = [(w or first, raw) for w, raw in self.lines]
        self.written = 0


class SteppedWorld:
    def __init__(
        self,
        provider: str,
        scenario: str,
        root: Path,
        runtime_dir: str,
        *,
        step_at: float | None = None,
        step: float = STEP,
        native: bool = True,
    ) -> None:
        self.provider = provider
        self.dir = CAPTURES / provider / scenario
        self.root = root
        self.runtime_dir = runtime_dir
        self.step_at = step_at
        self.step = step
        self.run_dir = ensure_run_dir(runtime_dir, RUN_ID)
        self.adapter: ClaudeCode | Codex = ClaudeCode() if provider == "claude-code" else Codex()
        if provider == "claude-code":
            files = glob.glob(str(self.dir / "transcript" / "*.jsonl"))
        else:
            files = glob.glob(str(self.dir / "rollout-*.jsonl"))
        self.files = {os.path.basename(f): _Lines(f) for f in files}
        self.hooks = hook_log(self.dir)
        self._hooks_written = 0
        self.agent_pid = os.getpid() if provider == "claude-code" and native else 0
        self.native = self._native_timeline() if self.agent_pid else []

    # -- where things are ------------------------------------------------------------
    def path(self, name: str) -> str:
        if self.provider == "claude-code":
            return str(self.root / ".claude" / "projects" / "-work" / name)
        return str(self.root / "sessions" / name)

    def times(self) -> list[float]:
        """Every true time at which some evidence was written, in order."""
        found = {w for f in self.files.values() for w, _ in f.lines}
        found |= {h["time"] for h in self.hooks} | {t for t, _ in self.native}
        return sorted(found)

    def last_turn(self) -> float:
        """True time of the last turn's start (its prompt hook)."""
        return max(h["time"] for h in self.hooks if h["event"] == "UserPromptSubmit")

    def shifted(self, when: float) -> float:
        """The stamp the machine's clock gave to something written at true ``when``."""
        if self.step_at is not None and when > self.step_at:
            return when - self.step
        return when

    # -- making the world as of true time t -------------------------------------------
    def to(self, t: float) -> SteppedWorld:
        for name, lines in self.files.items():
            upto = next((i for i, (w, _) in enumerate(lines.lines) if w > t), len(lines.lines))
            if upto > lines.written:
                path = self.path(name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "ab") as fh:
                    for when, raw in lines.lines[lines.written : upto]:
                        fh.write(self._restamp(when, raw) + b"\n")
                lines.written = upto
        fd = write.open_run_dir(self.run_dir)
        try:
            while self._hooks_written < len(self.hooks):
                hook = self.hooks[self._hooks_written]
                if hook["time"] > t:
                    break
                at = self.shifted(hook["time"])
                append_hook(fd, hook["event"], self._payload(hook), at, self.agent_pid)
                self._hooks_written += 1
        finally:
            os.close(fd)
        if self.native:
            self._write_native(t)
        return self

    def _restamp(self, when: float, raw: bytes) -> bytes:
        if self.shifted(when) == when:
            return raw
        record = json.loads(raw)
        if not record.get("timestamp"):
            return raw
        record["timestamp"] = _stamp(iso_seconds(record["timestamp"]) - self.step)
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()

    def _payload(self, hook: dict[str, Any]) -> bytes:
        payload = dict(hook["payload"])
        for key in ("transcript_path", "agent_transcript_path"):
            if payload.get(key):
                payload[key] = self.path(os.path.basename(payload[key]))
        return json.dumps(payload).encode()

    def _native_timeline(self) -> list[tuple[float, dict[str, Any] | None]]:
        """Claude Code's ``sessions/<pid>.json`` over time: a real snapshot of the
        capture as the template, the poller's timeline for what changed when."""
        template = None
        for path in sorted(self.dir.glob("session-*.json")):
            if path.name != "session-timeline.jsonl":
                template = json.loads(path.read_text()) or template
        timeline = self.dir / "session-timeline.jsonl"
        if template is None or not timeline.exists():
            return []
        out: list[tuple[float, dict[str, Any] | None]] = []
        for line in timeline.read_text().splitlines():
            entry = json.loads(line)
            if entry["deleted"]:
                out.append((entry["time"], None))
                continue
            status = dict(template)
            status.update(
                pid=self.agent_pid,
                procStart=process_start(self.agent_pid),
                status=entry["status"],
                waitingFor=entry["waitingFor"],
                sessionId=entry["sessionId"],
            )
            out.append((entry["time"], status))
        return out

    def _write_native(self, t: float) -> None:
        path = self.root / ".claude" / "sessions" / f"{self.agent_pid}.json"
        current = [(when, s) for when, s in self.native if when <= t]
        if not current or current[-1][1] is None:
            path.unlink(missing_ok=True)
            return
        when, status = current[-1]
        assert status is not None
        millis = round(self.shifted(when) * 1000)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**status, "statusUpdatedAt": millis, "updatedAt": millis}))

    # -- reading ---------------------------------------------------------------------
    def chat(self, *, live: bool = True, adapter: ClaudeCode | Codex | None = None) -> Chat:
        """``read_chat`` as core calls it: the transcript the hooks located (or, read
        transcript-only, the newest file written so far)."""
        adapter = adapter or self.adapter
        if live:
            path = adapter.locate_transcript(RUN_ID, self.runtime_dir)
            return adapter.read_chat(RUN_ID, self.runtime_dir, path)
        written = [n for n, f in self.files.items() if f.written]
        if not written:
            return adapter.read_chat(RUN_ID, "", "")
        newest = max(written, key=lambda n: self.files[n].lines[0][0])
        return adapter.read_chat(RUN_ID, "", self.path(newest))

    def live_only(self) -> Chat:
        """A read before the transcript is located: live signals alone."""
        return self.adapter.read_chat(RUN_ID, self.runtime_dir, "")


def observed(chat: Chat) -> tuple[object, ...]:
    """What a reader acts on: everything but the evidence's times."""
    return (
        chat.state,
        chat.activity,
        chat.pending_approval,
        chat.pending_dialog,
        chat.transcript_id,
        len(chat.messages),
    )


def world_factory(
    tmp_path: Path,
) -> Callable[..., SteppedWorld]:
    count = 0

    def make(provider: str, scenario: str, **kw: Any) -> SteppedWorld:
        nonlocal count
        count += 1
        root = tmp_path / f"w{count}"
        runtime = root / "runtime"
        runtime.mkdir(parents=True)
        runtime.chmod(0o700)
        return SteppedWorld(provider, scenario, root, str(runtime), **kw)

    return make
