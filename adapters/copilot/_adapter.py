"""The GitHub Copilot CLI adapter: composes a run's state from its transcript and hooks.

Precedence (docs/adr/0046-copilot-cli-state-precedence.md). All evidence becomes
canonical events, folded by the one reducer in evidence-time order:

1. An open question: ``ask_user``'s ``tool.execution_start`` without its completion (the
   hook ``preToolUse`` of ``ask_user`` a moment before) → ``question`` with the form.
2. An open approval: the transcript's ``permission.requested`` without its
   ``permission.completed`` (the hook ``permissionRequest`` a few ms before) →
   ``needs_input`` with ``pending_approval``. In ``-p`` both fire and the completion
   (``unattended_fallback``) follows at once: no wait.
3. Otherwise the turn, which the transcript owns (``_transcript``): ``user.message``
   opens it, the last model call's ``assistant.turn_end`` or an ``abort`` ends it; the
   hooks ``userPromptSubmitted`` / ``agentStop`` name the same turn.

A transcript-only read (an ended run, a session no hook saw) reads the same file the
same way. ``locate_transcript`` follows the session the latest hook names, and after
``/clear`` the live process's next session (``_signals``). A dead copilot process (the
hooks' parent) ends the run.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import ClassVar

from agentspool.adapters.common.declarer import outside_agent, runs_lifecycle
from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.parent_agent import ParentAgentAdapter, SettledSpool
from agentspool.adapters.common.resume import ResumedFile
from agentspool.adapters.common.spooled import ITSELF, Live, RunHandle
from agentspool.adapters.copilot import _home, _lifecycle, _sessions, _signals
from agentspool.adapters.copilot._transcript import EventsParser, HistoryParser
from agentspool.core.proc import ended_by_exit
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Session,
    TranscriptFile,
    UsageView,
)

_SpoolView = SettledSpool[_signals.HookTranslator]


class Copilot(ParentAgentAdapter[_signals.HookTranslator, EventsParser]):
    """The declaration: hook records through ``_signals.HookTranslator``, the session's
    ``events.jsonl`` through ``EventsParser``, hooks armed per run by ``_lifecycle``
    (a plugin dir) or once by ``_install`` (a hooks file in the CLI's hooks folder)."""

    name: ClassVar[str] = "copilot"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        install_scopes=("user",),
    )
    executable: ClassVar[str] = "copilot"
    arm_run = _lifecycle.setup
    hook_translator = _signals.HookTranslator
    transcript_parser = EventsParser
    installer = HookInstallerOf("agentspool.adapters.copilot._install")

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = history = lifecycle = ITSELF

    def _facts(self, run: RunHandle[_SpoolView], parser: EventsParser) -> tuple[str, str, str]:
        return parser.session_id, parser.title, parser.cwd

    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019, ADR 0053): the main
        agent (``""``) while a ``bash`` call running it is open in the hooks
        (``preToolUse`` fires before the command runs, ``postToolUse`` after) and ``pid``
        runs under the copilot process. 1.0.102's hooks name no call and no subagent, so
        a subagent's call cannot be told from its parent's: never a subagent's id."""
        translator = self._spool(RunHandle(run_id, runtime_dir)).translator
        if not any(runs_lifecycle(args) for args in translator.open_shell_calls):
            return None
        if outside_agent(translator.agent_pid, translator.agent_seen_ns, pid):
            return None
        return ""

    # -- sessions no hook armed (``_sessions``) ----------------------------------------
    def sessions(self, since: float) -> list[Session]:
        return _sessions.sessions(since)

    def session_at(self, path: str) -> Session | None:
        return _sessions.session_at(path)

    def read_session(self, session: Session) -> Chat:
        """The transcript, and the process its ``inuse.<pid>.lock`` names (no spool: no
        hooks armed)."""
        run: RunHandle[_SpoolView] = self._open(session.session_id, "", session.transcript_path)
        gone = session.process == "gone"
        live = Live(
            extra=ended_by_exit(session.pid) if gone else (),
            cwd=session.cwd,
            pid=session.pid,
            process=session.process,
        )
        return self._compose(run, self._read_view(run.run_id, "", run.transcript_path), live)

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session``: a ``task`` subagent's records are not kept apart from the
        session's in any file 1.0.102 was seen writing."""
        return self.read_session(session)

    # -- the history index (ADR 0022) -------------------------------------------------
    def transcript_files(self) -> list[TranscriptFile]:
        """Every ``<COPILOT_HOME>/session-state/<session id>/events.jsonl``."""
        base = os.path.join(glob.escape(_home.copilot_home()), "session-state")
        found = glob.glob(os.path.join(base, "*", _sessions.TRANSCRIPT))
        return [TranscriptFile(path=path) for path in sorted(found)]

    def resume_transcript(self, path: str, offset: int, state: bytes) -> ResumedFile[HistoryParser]:
        parser = HistoryParser.resumed(state) if offset and state else None
        return ResumedFile(
            path, 0 if parser is None else offset, parser or HistoryParser(), fresh=parser is None
        )

    def usage_view(self, path: str) -> UsageView:
        # A model call's usage is a record of the parse (assistant.usage, folded into the
        # message it priced): nothing narrower than the full parse gives it (ADR 0043).
        from agentspool.core.usage_first import full_usage_view

        return full_usage_view(self.resume_transcript(path, 0, b""))
