"""One session, found by id, id prefix or transcript file, and read whole
(``agentspool show``; docs/adr/0027-show.md).

``find_session`` resolves what a person types: a path is asked of every registered
adapter (``session_at``, an optional seam member: the first that reads the file names
its session); anything else is a session id or the start of one, looked up among the
sessions the CLIs' own files show (``Adapter.sessions(0)``). ``show_session`` reads the
session with its subagents (``read_session_with_subagents``) and assembles the view.
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters import registry
from agentspool.core.detail import SessionDetail, assemble_session_detail
from agentspool.core.seam import Chat, Session
from agentspool.errors import AmbiguousSessionError, SessionNotFoundError

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


def _session_at(path: str) -> tuple[str, Session]:
    if not os.path.exists(path):
        raise SessionNotFoundError(path, "no such file")
    full = os.path.abspath(path)
    for provider in registry.names():
        session_at = getattr(registry.load(provider), "session_at", None)
        session = session_at(full) if session_at is not None else None
        if session is not None:
            return provider, session
    raise SessionNotFoundError(path, "not a transcript any registered provider reads")


def _sessions_starting_with(prefix: str) -> list[tuple[str, Session]]:
    """Every session whose id starts with ``prefix`` (lower case), from each CLI's own
    files. The one place a session index answers instead, once there is one: a lookup
    by id prefix in the store's sessions table gives the same pairs."""
    found: list[tuple[str, Session]] = []
    for provider in registry.names():
        adapter = registry.load(provider)
        if adapter.capabilities.discovers_sessions:
            found += [
                (provider, s)
                for s in adapter.sessions(0.0)
                if s.session_id.lower().startswith(prefix)
            ]
    return found


def show_session(ref: str, *, include_inactive: bool = False) -> SessionView:
    """The session ``ref`` names (``find_session``), read with its subagents' own
    transcripts, and its assembled detail (``include_inactive``: superseded records
    too). Raises what ``find_session`` raises, and ``TranscriptGoneError`` when the file
    vanished meanwhile."""
    from agentspool.core.reader import read_session

    provider, session = find_session(ref)
    chat = read_session(registry.load(provider), session, with_subagents=True)
    detail = assemble_session_detail(chat.messages, include_inactive=include_inactive)
    return SessionView(provider=provider, session=session, chat=chat, detail=detail)
