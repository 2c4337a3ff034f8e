"""The OpenCode adapter: composes a run's state from the plugin spool, the session log in
OpenCode's SQLite store, the process, and — for a run started with ``--port`` — its
server (docs/adr/0030-opencode-evidence.md).

Precedence. All evidence becomes canonical events folded by the one reducer in
evidence-time order; what decides:

1. An open question form — a running ``question`` tool in the session log (durable), its
   ``question.asked`` in the spool, or the server's ``GET /question`` → ``question``.
2. An open permission prompt — only live evidence shows one (the tool part just reads
   ``running``): ``permission.asked`` in the spool, or the server's ``GET /permission``
   → ``needs_input`` with ``pending_approval`` (named from the call in the log). Closed
   by ``permission.replied`` (approved or rejected), by the session going idle, by the
   call finishing in the log, or by the server listing nothing.
3. Otherwise the turn: a user message opens it; the session going idle (spool) or its
   last assistant message completing (log; not after ``tool-calls``, unless a permission
   was rejected) closes it.

Ended: OpenCode writes nothing when it exits; the process named by the plugin's
``start`` record being gone (or its pid reused) ends the run. ``/clear`` (``/new``)
writes nothing either: the new session appears with the next prompt, and
``locate_transcript`` follows the session the latest spool event names.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import ClassVar

import msgspec

from agentspool.adapters.common.declarer import runs_lifecycle
from agentspool.adapters.common.spooled import (
    ITSELF,
    Live,
    RunHandle,
    SpoolBackedAdapter,
    TranscriptView,
    translated_live,
)
from agentspool.adapters.common.subagents import link_record, with_subagents
from agentspool.adapters.opencode import _install, _lifecycle, _server, _store
from agentspool.adapters.opencode._home import database
from agentspool.adapters.opencode._signals import SpoolTranslator
from agentspool.adapters.opencode._transcript import TranscriptParser
from agentspool.core.events import Event, InputRequested
from agentspool.core.proc import ancestors
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Message,
    Session,
)
from agentspool.spool.read import SpoolReader


class _SpoolView:
    """One run's plugin spool, read incrementally; every record translated once."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.reader = SpoolReader(run_dir)
        self.translator = SpoolTranslator()

    def refresh(self) -> None:
        for record in self.reader.read():
            self.translator.translate(record)


def _complete(pending: InputRequested, messages: list[Message]) -> InputRequested:
    """Name a permission prompt after the call it gates: the plugin and the server name
    the permission (``bash``, ``edit``, ``external_directory``) and its metadata; the
    session log names the tool and its whole input."""
    if pending.kind != "approval" or not pending.tool_use_id:
        return pending
    for message in reversed(messages):
        if message.kind == "tool_call" and message.tool_use_id == pending.tool_use_id:
            return msgspec.structs.replace(
                pending,
                tool_name=message.tool_name or pending.tool_name,
                tool_input=message.tool_input or pending.tool_input,
            )
    return pending


class OpenCode(SpoolBackedAdapter[_SpoolView, TranscriptParser]):
    """The declaration: plugin records through ``SpoolTranslator``, the session log
    through ``TranscriptParser`` (``_store.EventLogFollower`` over the database), the
    server's snapshot for a run started with ``--port``, the plugin armed by
    ``_lifecycle`` and installed by ``_install``; discovery and the lifecycle caller as
    optional parts."""

    name: ClassVar[str] = "opencode"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        attests_supersession=True,
        install_scopes=("user", "project"),
    )
    executable: ClassVar[str] = "opencode"
    arm_run = _lifecycle.setup
    installer = _install.INSTALLER

    # The optional parts this adapter is itself (core/seam.py).
    discovery = lifecycle = ITSELF

    # -- arming ------------------------------------------------------------------------
    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019). A subagent's
        ``bash`` runs in the same OpenCode process, with its environment; the store
        tells them apart: it holds the call ``running``, with its command, while the
        command runs, in the session that made it (docs/providers/opencode.md §2.8).
        The newest such open call: ``""`` in a top-level session of the run, the
        subagent's session id in a subagent's; ``None`` when none is open or ``pid``
        provably does not run under the run's OpenCode process (a person at another
        terminal naming the run)."""
        translator = self._spool(RunHandle(run_id, runtime_dir)).translator
        agents = translator.agents()
        calls = _store.open_calls(translator.database, agents, "bash", "lifecycle")
        declaring = [session for session, tool_input in calls if runs_lifecycle(tool_input)]
        if not declaring:
            return None
        agent = translator.agent_pid
        alive = agent and not translator.agent_gone()
        if alive and all(p.pid != agent for p in ancestors(pid)):
            return None
        return agents[declaring[-1]]

    # -- reading -----------------------------------------------------------------------
    def _new_spool(self, run: RunHandle[_SpoolView]) -> _SpoolView:
        return _SpoolView(run.run_dir)

    def _new_view(
        self, run_id: str, transcript_path: str, *, live: bool
    ) -> TranscriptView[TranscriptParser]:
        return TranscriptView(_store.EventLogFollower(transcript_path, run_id), TranscriptParser)

    def _transcript_exists(self, path: str) -> bool:
        return _store.session_exists(path)

    def _watched_paths(self, spool: _SpoolView) -> tuple[str, ...]:
        """For ``spool_sig``: the database and its write-ahead log (a write lands in the
        log, leaving the database file as it was until a checkpoint), and the agent's
        liveness by stat alone (``/proc/<pid>``, and ``/proc/<pid>/exe``, which a
        zombie no longer has)."""
        translator = spool.translator
        watched = []
        if translator.database:
            watched += [translator.database, translator.database + "-wal"]
        if translator.agent_pid:
            watched += [f"/proc/{translator.agent_pid}", f"/proc/{translator.agent_pid}/exe"]
        return tuple(watched)

    def _live_events(self, spool: _SpoolView, session: str, gone: bool) -> list[Event]:
        """What is not kept: the process's end, or what the server says waits now."""
        translator = spool.translator
        if gone:
            return translator.liveness()
        url, pid = translator.server_url, translator.agent_pid
        if not (url and session and _server.started_with_port(pid)):
            return []
        tree = translator.tree(session)
        secret = _server.password(spool.run_dir)
        return _server.snapshot(url, secret, set(tree), tree, time.time())

    def sessions(self, since: float) -> list[Session]:
        """The top-level sessions of the database OpenCode uses here, changed at or after
        ``since``. The database names no process: their state is the log's."""
        found = database()
        listed = _store.sessions_since(found, int(since * 1000))
        versions = _store.versions(found) if listed else {}
        return [
            Session(
                session_id=session_id,
                transcript_path=_store.join(found, session_id),
                cwd=directory or "",
                watched=(found, found + "-wal"),
                version=versions.get(session_id, 0),
            )
            for session_id, directory, _ in listed
        ]

    def read_session(self, session: Session) -> Chat:
        return self.read_chat(session.session_id, "", session.transcript_path)

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session``, then each subagent's session — OpenCode keeps one per
        ``task`` call, its ``parent_id`` the spawner — and theirs in turn, each opened by
        a link record naming the ``task`` call that spawned it (docs/providers/opencode.md
        §2.8)."""
        chat = self.read_session(session)
        database, root = _store.split(session.transcript_path)
        subagents: list[tuple[Message | None, Chat]] = []
        seen, pending = {root}, [root]
        while pending:
            for child_id, call_id, title in _store.subagents(database, pending.pop(0)):
                if child_id in seen:
                    continue
                seen.add(child_id)
                child = self.read_chat(child_id, "", _store.join(database, child_id))
                first = child.messages[0].timestamp if child.messages else ""
                link = link_record(child_id, call_id, text=title, timestamp=first)
                subagents.append((link, child))
                pending.append(child_id)
        return with_subagents(chat, subagents)

    @staticmethod
    def _session(run: RunHandle[_SpoolView], spool: _SpoolView | None) -> str:
        """The session the read is of: the located one, else the latest the spool names."""
        session = _store.split(run.transcript_path)[1] if run.transcript_path else ""
        return session or (spool.translator.session_id if spool is not None else "")

    def _live(self, run: RunHandle[_SpoolView], spool: _SpoolView) -> Live:
        gone = spool.translator.agent_gone()
        extra = self._live_events(spool, self._session(run, spool), gone)
        return translated_live(spool.translator, extra, gone)

    def _spool_events(
        self, run: RunHandle[_SpoolView], spool: _SpoolView, parser: TranscriptParser | None
    ) -> list[Event]:
        return spool.translator.events.get(self._session(run, spool), [])

    def _facts(self, run: RunHandle[_SpoolView], parser: TranscriptParser) -> tuple[str, str, str]:
        return parser.session_id or self._session(run, run.spool), "", parser.cwd

    def _complete(self, parser: TranscriptParser) -> Callable[[InputRequested], InputRequested]:
        return lambda pending: _complete(pending, parser.messages)
