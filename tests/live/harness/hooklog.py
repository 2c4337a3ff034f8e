"""The one hook recorder: a logging hook every CLI's harness arms, and its reader.

The hook is a stdlib script run as ``python -I -S hooklog.py <event> <log>``; it appends
one JSON line per run to ``<log_dir>/hooks.jsonl`` — ``event``, ``time`` (when it ran),
``pid``, ``ppid`` (the agent, or the shell between), the agent's ``CLAUDE_PID`` and
``CLAUDE_CODE_SESSION_ID`` where it sets them, and ``payload``: its stdin as JSON
(``{"_raw": text}`` when not JSON; Gemini CLI's model request and response reduced to
their keys, which hold the whole conversation). Lines are appended under ``flock``:
the CLIs run matching hooks concurrently. This is the format the captures' ``hooks.jsonl``
hold (``tests/support/replay.py`` replays them).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from pathlib import Path
from typing import Any

LOG = "hooks.jsonl"
SCRIPT = "hooklog.py"
_SOURCE = r"""
import fcntl, json, os, sys, time
event, log = sys.argv[1], sys.argv[2]
t = time.time()
raw = sys.stdin.buffer.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {"_raw": raw.decode("utf-8", "replace")}
if isinstance(payload, dict):
    for key in ("llm_request", "llm_response"):
        if isinstance(payload.get(key), dict):
            payload[key] = {"_keys": sorted(payload[key])}
rec = {"event": event, "time": t, "pid": os.getpid(), "ppid": os.getppid(),
       "CLAUDE_PID": os.environ.get("CLAUDE_PID"),
       "CLAUDE_CODE_SESSION_ID": os.environ.get("CLAUDE_CODE_SESSION_ID"),
       "payload": payload}
fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, (json.dumps(rec) + "\n").encode())
finally:
    os.close(fd)
"""


def argv(event: str, log_dir: Path, python: str | None = None) -> list[str]:
    """The logging hook for ``event``, writing into ``log_dir`` (made, with the script)."""
    log_dir = Path(log_dir).resolve()
    script = log_dir / SCRIPT
    if not script.exists():
        log_dir.mkdir(parents=True, exist_ok=True)
        script.write_text(_SOURCE)
    return [python or sys.executable, "-I", "-S", str(script), event, str(log_dir / LOG)]


def command(event: str, log_dir: Path, python: str | None = None) -> str:
    """``argv`` as one shell command line."""
    return shlex.join(argv(event, log_dir, python))


def read_hook_log(log: str | Path) -> list[dict[str, Any]]:
    """The logged hook runs, oldest first; ``log`` is the file or its directory (a torn
    last line is skipped; nothing logged yet is an empty list)."""
    path = Path(log)
    if path.is_dir():
        path = path / LOG
    out = []
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out
