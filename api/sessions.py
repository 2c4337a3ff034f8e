"""One session, found by id, id prefix or transcript file, and read whole
(``agentspool show``; docs/adr/0027-show.md).

``find_session`` resolves what a person types: a path is asked of every registered
adapter with the ``session_files`` part (``session_at``: the first that reads the file names
its session); anything else is a session id or the start of one, looked up in the
history store (brought up to date first, without waiting on another indexer).
``show_session`` reads the session with its subagents (``discovery.read_session_with_subagents``)
and assembles the view; a session whose file is gone is read from the store's records.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import msgspec

from agentspool.adapters import registry
from agentspool.core.detail import SessionDetail, assemble_session_detail
from agentspool.core.seam import Chat, Evidence, Message, Session, TranscriptGoneError
from agentspool.spool.errors import AmbiguousSessionError, SessionNotFoundError

if TYPE_CHECKING:
    from agentspool.core.store import StoredSession

__all__ = ["SessionView", "find_session", "show_session"]


class SessionView(msgspec.Struct, kw_only=True):
    """What ``show_session`` read."""

    provider: str
    session: Session
    """The session as found (its id, transcript path, and what the CLI's files said)."""
    chat: Chat
    """The session read with its subagents: ``messages`` is the whole stream the detail
    was assembled from (``seq`` 1…n over the session's own records, then each
    subagent's); state, cwd, drift and usage as the adapter composed them."""
    detail: SessionDetail
    """``assemble_session_detail(chat.messages, include_inactive=...)``."""
    gone: bool = False
    """The transcript file is gone: ``chat`` holds the records the history store kept
    (the session's own, then its subagent files'), nothing else of a read."""


def _is_path(ref: str) -> bool:
    return os.sep in ref or ref.endswith((".jsonl", ".zst")) or os.path.isfile(ref)


def find_session(ref: str) -> tuple[str, Session]:
    """``(provider, session)`` for a transcript path, a session id, or the start of one.

    An exact id wins over ids it begins; otherwise the prefix must be unique (case does
    not matter). Raises ``SessionNotFoundError`` (no such file, a file no provider reads,
    no session with that id) or ``AmbiguousSessionError`` (its ``candidates``).
    """
    if not ref:
        raise SessionNotFoundError(ref, "give a session id, its start, or a transcript path")
    parent, slash, agent = ref.partition("/")
    named = slash and parent and agent and _ID.fullmatch(parent) and _ID.fullmatch(agent)
    if named and not os.path.exists(ref):
        return _subagent(parent.lower(), agent.lower(), ref)
    if _is_path(ref):
        return _session_at(ref)
    wanted = ref.lower()
    found = _sessions_starting_with(wanted)
    exact = [(provider, s) for provider, s in found if s.session_id.lower() == wanted]
    if len(exact) == 1:
        return exact[0]
    if len(found) == 1:
        return found[0]
    if not found:
        raise SessionNotFoundError(ref, "no session has this id or an id starting with it")
    raise AmbiguousSessionError(
        ref, sorted(f"{provider}:{s.session_id}" for provider, s in (exact or found))
    )


_ID = re.compile(r"[A-Za-z0-9_.-]+")


def _subagent(parent: str, agent: str, ref: str) -> tuple[str, Session]:
    """``<session start>/<subagent start>``, as ``search`` names a subagent's record:
    the subagent's own transcript, from the history store."""
    from agentspool.history import index_history, open_history

    index_history(wait=False)
    with open_history() as store:
        found = [
            stored
            for stored in store.find_sessions(parent)
            if stored.agent_id.lower().startswith(agent)
            and stored.session_id.lower().startswith(parent)
        ]
    if not found:
        raise SessionNotFoundError(ref, "no subagent of a session with these starts")
    if len(found) > 1:
        raise AmbiguousSessionError(
            ref, sorted(f"{s.provider}:{s.session_id}/{s.agent_id}" for s in found)
        )
    return _found(found[0])


def _session_at(path: str) -> tuple[str, Session]:
    if not os.path.exists(path):
        # Not a file: a transcript path the history holds — one kept in a CLI's shared
        # database (``<database>#<session>``, as ``read`` takes it), or a file gone.
        stored = _stored_at(os.path.abspath(path)) or _stored_at(path)
        if stored is None:
            raise SessionNotFoundError(path, "no such file")
        return stored
    full = os.path.abspath(path)
    for provider in registry.names():
        files = registry.load(provider).session_files
        session = files.session_at(full) if files is not None else None
        if session is not None:
            return provider, session
    raise SessionNotFoundError(path, "not a transcript any registered provider reads")


def _stored_at(path: str) -> tuple[str, Session] | None:
    """The session the history store keeps for the transcript ``path`` (``None``: none)."""
    from agentspool.history import index_history, open_history

    index_history(wait=False)
    with open_history() as store:
        found = [s for s in store.find_sessions(path) if s.path == path and not s.agent_id]
    return _found(found[0]) if found else None


def _sessions_starting_with(prefix: str) -> list[tuple[str, Session]]:
    """Every session whose id starts with ``prefix`` (lower case), from the history
    store: one per provider and session id — a subagent's file that carries its
    parent's id is that session's, not another one."""
    from agentspool.history import index_history, open_history

    index_history(wait=False)  # another indexer at work: what is indexed already
    with open_history() as store:
        found = store.find_sessions(prefix)
    pairs: dict[tuple[str, str], tuple[str, Session]] = {}
    for stored in found:  # main sessions first
        if stored.session_id.lower().startswith(prefix):
            pairs.setdefault((stored.provider, stored.session_id), _found(stored))
    return list(pairs.values())


def _found(stored: StoredSession) -> tuple[str, Session]:
    return stored.provider, Session(
        session_id=stored.session_id, transcript_path=stored.path, cwd=stored.cwd
    )


def _from_store(provider: str, session: Session) -> Chat | None:
    """The session as the history store keeps it, for a file that is gone: its own
    records, then each of its subagents' files' (those naming it their parent), ``seq``
    1…n over the whole; ``None`` when the store does not hold the file. The links the
    CLI keeps beside a subagent's file (Claude Code's meta file) are not in the store:
    such a subagent is drawn after the turns, not under its call."""
    from agentspool.history import open_history

    with open_history() as store:
        stored = store.sessions(provider)
        main = next((s for s in stored if s.path == session.transcript_path), None)
        if main is None:
            return None
        children = sorted(
            (s for s in stored if s.agent_id and s.parent_session_id == main.session_id),
            key=lambda s: (s.started, s.path),
        )
        messages: list[Message] = []
        for part in (main, *children):
            for record in store.records(part.id):
                messages.append(msgspec.structs.replace(record, seq=len(messages) + 1))
    return Chat(
        state="ended",
        messages=messages,
        transcript_id=main.session_id,
        transcript_path=main.path,
        evidence=[Evidence(source="core:history", detail="the transcript file is gone")],
        cwd=main.cwd,
    )


def show_session(ref: str, *, include_inactive: bool = False) -> SessionView:
    """The session ``ref`` names (``find_session``), read with its subagents' own
    transcripts, and its assembled detail (``include_inactive``: superseded records
    too). A session whose file is gone is read from the history store (``gone``). Raises
    what ``find_session`` raises, and ``TranscriptGoneError`` when the file is gone and
    the store does not hold it."""
    from agentspool.core.reader import read_session

    provider, session = find_session(ref)
    try:
        chat = read_session(registry.load(provider), session, with_subagents=True)
        gone = False
    except TranscriptGoneError:
        stored = _from_store(provider, session)
        if stored is None:
            raise
        chat, gone = stored, True
    detail = assemble_session_detail(chat.messages, include_inactive=include_inactive)
    return SessionView(provider=provider, session=session, chat=chat, detail=detail, gone=gone)
