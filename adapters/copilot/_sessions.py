"""Copilot CLI sessions from the CLI's own files, armed or not (``Copilot.sessions``).

Copilot CLI 1.0.102 keeps each session in ``<COPILOT_HOME>/session-state/<session id>/``
(docs/providers/copilot.md §4): ``events.jsonl`` from the session's first prompt on, and,
while a copilot process has the session open, ``inuse.<pid>.lock`` naming that process
(the native copilot, the one that runs the hooks and writes the file). ``/clear`` moves
the lock to the new session's folder at once; exit removes it; SIGKILL leaves it behind,
so a lock whose process is gone — or whose pid a process younger than the lock now
holds — names a session that ended. A transcript with no lock is a session no copilot
process has open: its state is the file's (capture ``tui-unarmed``).

For ``agentspool show`` (ADR 0027): a file is a Copilot transcript when its first record
is ``session.start`` naming the session.
"""

from __future__ import annotations

import glob
import os

import msgspec

from agentspool.adapters.common.subagents import head_lines
from agentspool.adapters.copilot._home import copilot_home
from agentspool.core import proc
from agentspool.core.seam import ProcessState, Session

TRANSCRIPT = "events.jsonl"


def lock_of(folder: str) -> tuple[str, int]:
    """The session folder's ``inuse.<pid>.lock`` and its pid (``("", 0)``: none)."""
    for path in glob.glob(os.path.join(glob.escape(folder), "inuse.*.lock")):
        pid = os.path.basename(path)[len("inuse.") : -len(".lock")]
        if pid.isdigit():
            return path, int(pid)
    return "", 0


def lock_holder(lock: str, pid: int) -> ProcessState:
    """Whether the process a lock names still holds it: alive, and no younger than the
    lock (a pid reused since is another process)."""
    found = proc.stat(pid)
    try:
        locked_at = os.stat(lock).st_mtime
    except OSError:
        return "gone"
    if found is None or proc.wall_of_ticks(found.started) > locked_at + 1:
        return "gone"
    return "alive"


def sessions(since: float) -> list[Session]:
    base = os.path.join(glob.escape(copilot_home()), "session-state")
    found = []
    for transcript in sorted(glob.glob(os.path.join(base, "*", TRANSCRIPT))):
        folder = os.path.dirname(transcript)
        lock, pid = lock_of(folder)
        if not lock:
            try:
                if os.stat(transcript).st_mtime < since:
                    continue
            except OSError:
                continue
        found.append(
            Session(
                session_id=os.path.basename(folder),
                transcript_path=transcript,
                pid=pid,
                process=lock_holder(lock, pid) if lock else "unknown",
                cwd=cwd_of(transcript),
                # /clear moves the lock away while the old transcript rests.
                watched=(lock,) if lock else (),
            )
        )
    return found


class _Context(msgspec.Struct, gc=False):
    cwd: str = ""


class _StartData(msgspec.Struct, gc=False):
    sessionId: str = ""  # noqa: N815 - the CLI's own name
    context: _Context = msgspec.field(default_factory=_Context)


class _Head(msgspec.Struct, gc=False):
    type: str = ""
    data: _StartData = msgspec.field(default_factory=_StartData)


_decode_head = msgspec.json.Decoder(_Head).decode


def _head(path: str) -> _Head | None:
    for raw in head_lines(path):
        try:
            head = _decode_head(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
            return None
        return head if head.type == "session.start" and head.data.sessionId else None
    return None


def cwd_of(path: str) -> str:
    head = _head(path)
    return head.data.context.cwd if head is not None else ""


def session_at(path: str) -> Session | None:
    if os.path.basename(path) != TRANSCRIPT or not os.path.isfile(path):
        return None
    head = _head(path)
    if head is None:
        return None
    return Session(session_id=head.data.sessionId, transcript_path=path, cwd=head.data.context.cwd)
