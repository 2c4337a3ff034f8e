"""Claude Code sessions from the CLI's own files, armed or not (``ClaudeCode.sessions``).

Every running Claude Code keeps ``<config dir>/sessions/<pid>.json`` (pid, session id,
cwd, ``procStart``; docs/providers/claude-code.md §5) and deletes it when it exits; its
transcript is ``<config dir>/projects/<slug>/<session id>.jsonl``. A status file whose
process is gone (SIGKILL leaves it behind) or whose pid was reused names an ended
session. A transcript changed recently with no status file names a session whose process
is not known to us: its state comes from the transcript alone.
"""

from __future__ import annotations

import glob
import os

import msgspec

from agentspool.adapters.claude_code._install import config_dir
from agentspool.adapters.claude_code._signals import NativeStatus, process_start
from agentspool.core.seam import Session

_decode = msgspec.json.Decoder(NativeStatus).decode


def _transcript(base: str, session_id: str) -> str:
    found = glob.glob(os.path.join(glob.escape(base), "projects", "*", f"{session_id}.jsonl"))
    return found[0] if found else ""


def sessions(since: float) -> list[Session]:
    base = config_dir()
    found: dict[str, Session] = {}
    for path in sorted(glob.glob(os.path.join(glob.escape(base), "sessions", "*.json"))):
        try:
            with open(path, "rb") as fh:
                status = _decode(fh.read())
        except (OSError, msgspec.DecodeError):
            continue  # mid-rewrite, or not a status file
        if not status.sessionId or not status.pid:
            continue
        transcript = _transcript(base, status.sessionId)
        if not transcript:
            continue  # no conversation yet (the file appears at startup)
        started = process_start(status.pid)
        alive = started is not None and (not status.procStart or status.procStart == started)
        found[status.sessionId] = Session(
            session_id=status.sessionId,
            transcript_path=transcript,
            pid=status.pid,
            process="alive" if alive else "gone",
            cwd=status.cwd,
        )
    pattern = os.path.join(glob.escape(base), "projects", "*", "*.jsonl")
    for transcript in glob.glob(pattern):
        session_id = os.path.basename(transcript)[: -len(".jsonl")]
        if session_id in found:
            continue
        try:
            if os.stat(transcript).st_mtime < since:
                continue
        except OSError:
            continue
        found[session_id] = Session(session_id=session_id, transcript_path=transcript)
    return list(found.values())
