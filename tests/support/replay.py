"""Real captured evidence (tests/live/captures/) turned back into canonical events.

The captures were recorded from the real CLIs by the Tier-2 harness; replaying them
through the adapters' own translators gives reducer tests real event sequences instead
of invented ones.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

from agentspool.adapters.claude_code import _signals, _transcript
from agentspool.core.events import Event
from agentspool.spool.read import SpoolRecord

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"


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
    with open(CAPTURES / "claude-code" / name / "hooks.jsonl") as fh:
        for offset, line in enumerate(fh):
            entry = json.loads(line)
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
