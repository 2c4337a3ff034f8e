"""The Pi adapter: composes a run's state from agentspool's extension spool and Pi's
session file (docs/adr/0052-pi-state-precedence.md).

All evidence becomes canonical events, folded by the one reducer in evidence-time order;
what decides:

1. An open approval — only the extension's confirm dialog is one (Pi asks none of its
   own): ``permission_asked`` without its ``permission_replied`` → ``needs_input`` with
   ``pending_approval``. The session file shows only the call, ``stopReason: toolUse``
   with no result, which a running call shows too.
2. Otherwise the turn, which the spool owns while the run is live: ``agent_start`` opens
   it, ``agent_end`` ends it (``aborted``: interrupted). Pi has no question tool: a run
   never reads ``question``.

A transcript-only read (an ended run, a session found in Pi's folder) derives the turn
from the file (``_transcript``). ``locate_transcript`` follows the session file the latest
``session_start`` names — after ``/new`` the next one, which Pi writes at its first
answer: until then the read is the spool's alone. ``session_shutdown{quit}`` ends the
session; a dead Pi process (the spool records' writer) ends the run.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import ClassVar

import msgspec

from agentspool.adapters.common.declarer import outside_agent, runs_lifecycle
from agentspool.adapters.common.parent_agent import ParentAgentAdapter, SettledSpool
from agentspool.adapters.common.spooled import ITSELF, RunHandle
from agentspool.adapters.pi import _home, _install, _lifecycle
from agentspool.adapters.pi._signals import SpoolTranslator
from agentspool.adapters.pi._transcript import SHELL_TOOL, SessionParser
from agentspool.core.events import Event
from agentspool.core.seam import Capabilities, Chat, Session
from agentspool.spool.files import open_regular


class _Header(msgspec.Struct):
    type: str = ""
    id: str = ""
    cwd: str = ""


_decode_header = msgspec.json.Decoder(_Header).decode


def session_header(path: str) -> _Header | None:
    """The session file's header (its first line), if it is a Pi session's."""
    try:
        with open_regular(path) as fh:  # never blocks on a FIFO planted there
            first = fh.readline(1 << 16)
    except OSError:
        return None
    try:
        header = _decode_header(first)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return header if header.type == "session" and header.id else None


_SpoolView = SettledSpool[SpoolTranslator]


class Pi(ParentAgentAdapter[SpoolTranslator, SessionParser]):
    """The declaration: extension records through ``SpoolTranslator``, the session file
    through ``SessionParser``, the extension armed per run by ``_lifecycle`` (``-e``) or
    once by ``_install`` (Pi's extensions folder); discovery, session files and the
    lifecycle caller as optional parts."""

    name: ClassVar[str] = "pi"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        install_scopes=("user", "project"),
    )
    executable: ClassVar[str] = "pi"
    arm_run = _lifecycle.setup
    hook_translator = SpoolTranslator
    turn_parser = SessionParser  # live, the spool owns the turn (_transcript's doc)
    installer = _install.INSTALLER

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = lifecycle = ITSELF

    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019): Pi has no subagents,
        so the main agent (``""``) when a ``bash`` call running it is open in the spool
        and ``pid`` runs under the Pi process; else ``None``."""
        translator = self._spool(RunHandle(run_id, runtime_dir)).translator
        declaring = [
            args
            for name, args in translator.open_calls.values()
            if name == SHELL_TOOL and runs_lifecycle(args)
        ]
        if not declaring or outside_agent(translator.agent_pid, translator.agent_seen_ns, pid):
            return None
        return ""

    # -- reading -----------------------------------------------------------------------
    def _spool_events(
        self, run: RunHandle[_SpoolView], spool: _SpoolView, parser: SessionParser | None
    ) -> list[Event]:
        """The events of the file's session (no file yet: of the latest session)."""
        return spool.translator.session_events(parser.session_id if parser else None)

    def _facts(self, run: RunHandle[_SpoolView], parser: SessionParser) -> tuple[str, str, str]:
        return parser.session_id, parser.title, parser.cwd

    # -- Pi's own files ------------------------------------------------------------------
    def sessions(self, since: float) -> list[Session]:
        """Session files changed at or after ``since``
        (``<agent dir>/sessions/--<cwd>--/<time>_<session id>.jsonl``). Pi keeps no status
        file: a session's process is not known from its files, so its state is the
        file's."""
        pattern = os.path.join(glob.escape(_home.agent_dir()), "sessions", "*", "*.jsonl")
        found = []
        for path in glob.glob(pattern):
            try:
                recent = os.stat(path).st_mtime >= since
            except OSError:
                continue
            session = self.session_at(path) if recent else None
            if session is not None:
                found.append(session)
        return found

    def session_at(self, path: str) -> Session | None:
        """A Pi session file: its first line the ``session`` header."""
        header = session_header(path)
        if header is None:
            return None
        return Session(session_id=header.id, transcript_path=path, cwd=header.cwd)

    def read_session(self, session: Session) -> Chat:
        chat = self.read_chat(session.session_id, "", session.transcript_path)
        chat.cwd = chat.cwd or session.cwd
        return chat

    def read_session_with_subagents(self, session: Session) -> Chat:
        """Pi runs no subagents: the session's own records."""
        return self.read_session(session)
