"""Claude Code sessions from the CLI's own files, armed or not (``ClaudeCode.sessions``).

Every running Claude Code keeps ``<config dir>/sessions/<pid>.json`` (pid, session id,
cwd, ``procStart``; docs/providers/claude-code.md §5) and deletes it when it exits; its
transcript is ``<config dir>/projects/<slug>/<session id>.jsonl``. A status file whose
process is gone (SIGKILL leaves it behind) or whose pid was reused names an ended
session. A transcript changed recently with no status file names a session whose process
is not known to us: its state comes from the transcript alone.

For ``agentspool show`` (ADR 0027): which session a transcript file holds, the working
directory its records name, and the meta file that names a subagent's spawning call.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

import msgspec

from agentspool.adapters.claude_code._home import config_dir
from agentspool.adapters.claude_code._signals import NativeStatus, process_start
from agentspool.adapters.common.subagents import head_lines
from agentspool.core.seam import Session
from agentspool.spool.files import open_regular

_decode = msgspec.json.Decoder(NativeStatus).decode


def _transcript(base: str, session_id: str) -> str:
    found = glob.glob(os.path.join(glob.escape(base), "projects", "*", f"{session_id}.jsonl"))
    return found[0] if found else ""


def sessions(since: float) -> list[Session]:
    base = config_dir()
    found: dict[str, Session] = {}
    for path in sorted(glob.glob(os.path.join(glob.escape(base), "sessions", "*.json"))):
        try:
            with open_regular(path) as fh:
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
            watched=(path,),  # a permission prompt changes it while the transcript rests
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


class _Head(msgspec.Struct, rename="camel", gc=False):
    """What a transcript's first lines say of their session. Every Claude Code record
    has a ``type``: a first line without one (Gemini CLI's chat metadata names a
    ``sessionId`` too) is not a record of a Claude Code transcript."""

    session_id: str = ""
    cwd: str = ""
    type: str = ""
    is_sidechain: bool = False
    agent_id: str = ""
    message: msgspec.Raw = msgspec.Raw()
    provenance: str = ""
    """Named by Qwen Code's records (0.24.4), whose chat file is otherwise shaped as a
    Claude Code transcript; no Claude Code record carries it (2.1.328's captures)."""


_decode_head = msgspec.json.Decoder(_Head).decode


def _heads(path: str) -> Iterator[_Head]:
    for raw in head_lines(path):
        try:
            yield _decode_head(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
            continue  # not a record of this shape: look further


def session_at(path: str) -> Session | None:
    """The session a transcript file holds: a ``.jsonl`` whose records are Claude Code's
    — they name their ``sessionId`` (every conversation record and most bookkeeping
    does; a Codex rollout's never), or carry a ``message`` (older versions' files and
    other tools' copies can name none). A main transcript is the session it is named
    after (``<session>.jsonl``: ``HistoryParser``); a subagent's own file names its
    parent's session."""
    if not path.endswith(".jsonl") or not os.path.isfile(path):
        return None
    named = cwd = ""
    conversation = subagent = False
    for n, head in enumerate(_heads(path)):
        if not head.type:
            if not n:
                return None
            continue  # a damaged record further on
        if head.provenance:
            return None
        if head.type in ("user", "assistant", "system") and head.message:
            conversation = True
            subagent = subagent or (head.is_sidechain and bool(head.agent_id))
        named, cwd = named or head.session_id, cwd or head.cwd
        if named and cwd and conversation:
            break
    if not named and not conversation:
        return None
    own = os.path.basename(path).removesuffix(".jsonl")
    return Session(session_id=named if named and subagent else own, transcript_path=path, cwd=cwd)


def cwd_of(path: str) -> str:
    """The working directory the transcript's first records name (``""``: none does)."""
    return next((head.cwd for head in _heads(path) if head.cwd), "")


def subagent_transcripts(transcript_path: str) -> list[str]:
    """The subagents' own transcripts of a session (docs/providers/claude-code.md §4.1):
    read each with ``read_chat``; its messages carry the subagent's ``agent_id``."""
    stem = os.path.splitext(transcript_path)[0]
    return sorted(glob.glob(os.path.join(glob.escape(stem), "subagents", "agent-*.jsonl")))


class SubagentMeta(msgspec.Struct, rename="camel", gc=False):
    """``agent-<id>.meta.json`` beside a subagent's transcript (docs/providers/claude-code.md
    §4.1): the call that spawned it."""

    tool_use_id: str = ""
    description: str = ""


_decode_meta = msgspec.json.Decoder(SubagentMeta).decode


def subagent_meta(transcript_path: str) -> SubagentMeta:
    """The meta file of a subagent's transcript; empty when missing or unreadable (the
    subagent is then shown without its spawning call)."""
    try:
        with open_regular(transcript_path.removesuffix(".jsonl") + ".meta.json") as fh:
            return _decode_meta(fh.read())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return SubagentMeta()
