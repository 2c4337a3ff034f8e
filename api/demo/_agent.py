"""A recorded agent's stand-in process (``agentspool demo``, ADR 0021).

It plays the part the agent CLI plays for real: it is the process the hooks' parent pid
and ``CLAUDE_PID`` name, it spawns each hook command through ``/bin/sh -c`` with the payload
on stdin, and it writes the transcript and the native status file. The replay sends it one
JSON operation per line on stdin and reads ``ok`` back once the operation is done; at the
end of its stdin it exits, which is the recorded agent's process ending. Standard library
only, so starting it costs an interpreter and nothing more.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from typing import Any


def _append(path: str, line: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _write(path: str, text: str) -> None:
    # The CLI rewrites its status file whole; a reader never sees half of it.
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(partial, path)


def perform(op: dict[str, Any]) -> None:
    kind = op["op"]
    if kind == "hook":
        subprocess.run(
            ["/bin/sh", "-c", op["command"]],
            input=op["stdin"].encode(),
            env=op["env"],
            cwd=op["cwd"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )
    elif kind == "append":
        _append(op["path"], op["line"])
    elif kind == "write":
        _write(op["path"], op["text"])
    elif kind == "delete":
        with contextlib.suppress(FileNotFoundError):
            os.unlink(op["path"])


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)  # subprocess.run kills a hook in flight on the way out


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    for line in sys.stdin:
        perform(json.loads(line))
        sys.stdout.write("ok\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
