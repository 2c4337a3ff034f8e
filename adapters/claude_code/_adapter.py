"""The Claude Code adapter: composes a run's state from its three evidence channels.

Precedence (docs/adr/0006-claude-code-state-precedence.md). All evidence becomes
canonical events, folded by the one reducer in evidence-time order; what decides:

1. An open dialog — an ``AskUserQuestion`` / ``ExitPlanMode`` call with no result yet
   (the tool's execution *is* the dialog), or a ``PermissionRequest`` for one, or the
   native file ``waiting``/``input needed`` → ``question`` with ``pending_dialog``.
2. An open permission prompt — ``PermissionRequest`` (matched to its ``PreToolUse`` by
   tool and input: it carries no ``tool_use_id``), a ``permission_prompt`` notification
   or the native file ``waiting`` → ``needs_input`` with ``pending_approval``.
3. Otherwise transcript and hook evidence of the turn: a prompt or a tool opens it;
   ``Stop``/``StopFailure``, ``turn_duration``, an interrupt record, ``end_turn`` close it.

A prompt is cleared by every source that proves it gone, since a denial and Esc fire no
hook at all: the call's ``tool_result``, an interrupt record, a later turn, ``Stop``,
the native file turning ``idle`` or ``busy`` after it. ``busy`` is what shows an approval:
no hook fires between the approval and the approved tool's end, and the file is rewritten
at once, so a command running for minutes reads ``working``, not a stale wait.
Not a wait: ``PermissionRequest`` in print mode (auto-denied). Not the end of the work:
``Stop`` listing running ``background_tasks``, or an end of turn in the transcript while
an async ``Agent`` launch has not reported back (``<task-notification>``). Stale: native
status of a dead (or zombie) pid (checked against ``procStart``), and evidence of a
session id replaced by ``/clear``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from agentspool.adapters.claude_code import _lifecycle
from agentspool.adapters.claude_code._records import DIALOG_TOOLS, FORMS
from agentspool.adapters.common import declarer
from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.resume import ResumedFile
from agentspool.adapters.common.spooled import (
    ITSELF,
    Live,
    RunHandle,
    SpoolBackedAdapter,
    TranslatedSpool,
)
from agentspool.adapters.common.subagents import link_record, with_subagents
from agentspool.core.events import Event, InputRequested
from agentspool.core.proc import process_state
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Session,
    TranscriptFile,
    UsageView,
)
from agentspool.spool.layout import run_dir

if TYPE_CHECKING:
    # The parser and the hook translator are imported where a read needs them: a first
    # ``usage`` reads every file through its usage view and arms nothing (ADR 0064).
    from agentspool.adapters.claude_code._signals import HookTranslator
    from agentspool.adapters.claude_code._transcript import HistoryParser, TranscriptParser

    _SpoolView = TranslatedSpool[HookTranslator]


def _complete(
    pending: InputRequested, open_tools: dict[str, tuple[str, dict[str, Any]]]
) -> InputRequested:
    """Fill a wait from the transcript's open call: the tool of an unspecific prompt,
    the plan of an ``ExitPlanMode`` (its hooks carry ``tool_input: {}``)."""
    tool_use_id = pending.tool_use_id
    if not tool_use_id:
        wanted = DIALOG_TOOLS if pending.kind == "question" else None
        for candidate, (name, _) in reversed(open_tools.items()):
            if wanted is None or name in wanted:
                tool_use_id = candidate
                break
    if tool_use_id not in open_tools:
        return pending
    name, tool_input = open_tools[tool_use_id]
    dialog = pending.dialog
    if name in DIALOG_TOOLS and (dialog is None or not dialog.prompt):
        dialog = FORMS[name](tool_use_id, tool_input)
    kind = "question" if name in DIALOG_TOOLS else pending.kind
    return msgspec.structs.replace(
        pending,
        kind=kind,
        tool_use_id=tool_use_id,
        tool_name=name,
        tool_input=pending.tool_input or tool_input,
        dialog=dialog,
    )


class ClaudeCode(SpoolBackedAdapter["_SpoolView", "TranscriptParser"]):
    """The declaration: hook records through ``_signals.HookTranslator``, the transcript
    through ``TranscriptParser``, native status through ``_signals.read_native``, hooks
    armed by ``_lifecycle`` and ``_install``; every optional part but the trust gate
    and hand-started runs."""

    name: ClassVar[str] = "claude-code"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        native_status=True,
        install_scopes=("user", "project"),
        # ``message.id`` is the Anthropic API's: 1.0.x ``--continue`` copies a response
        # into the new file stamped with the time of the copy (docs/providers/claude-code.md §9).
        unique_response_ids=True,
    )
    executable: ClassVar[str] = "claude"
    arm_run = _lifecycle.setup
    installer = HookInstallerOf("agentspool.adapters.claude_code._install")

    @staticmethod
    def transcript_parser() -> TranscriptParser:
        from agentspool.adapters.claude_code._transcript import TranscriptParser

        return TranscriptParser()

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = history = lifecycle = ITSELF

    # -- arming ------------------------------------------------------------------------
    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019). A subagent's shell
        command has its parent's environment (2.1.328: the same ``CLAUDE_PID`` and
        ``CLAUDE_CODE_SESSION_ID``); its ``PreToolUse`` carries ``agent_id``
        (docs/providers/claude-code.md §3.9)."""
        return declarer.lifecycle_caller(run_dir(runtime_dir, run_id), pid)

    # -- reading -----------------------------------------------------------------------
    def _new_spool(self, run: RunHandle[_SpoolView]) -> _SpoolView:
        from agentspool.adapters.claude_code._signals import HookTranslator

        return TranslatedSpool(run.run_dir, HookTranslator())

    def _watched_paths(self, spool: _SpoolView) -> tuple[str, ...]:
        """For ``spool_sig``: the transcript, and what ``read_native`` looks at — the
        status file, and the agent's liveness by stat alone: ``/proc/<pid>`` (a reused
        pid is a new inode) and ``/proc/<pid>/exe``, whose target a zombie no longer has
        (a SIGKILLed agent stays one while unreaped, and reads as gone)."""
        path, pid = spool.translator.transcript_path, spool.translator.agent_pid
        watched = [path] if path else []
        if pid:
            watched += [f"/proc/{pid}", f"/proc/{pid}/exe"]
            if path:
                from agentspool.adapters.claude_code._signals import native_path

                watched.append(native_path(path, pid))
        return tuple(watched)

    def _live(self, run: RunHandle[_SpoolView], spool: _SpoolView) -> Live:
        from agentspool.adapters.claude_code import _signals

        translator = spool.translator
        pid = translator.agent_pid
        native = _signals.native_drift()
        located = run.transcript_path or translator.transcript_path
        status, gone = _signals.read_native(located, pid, native)
        return Live(
            extra=_signals.native_events(status, gone, pid),
            spool_drift=translator.drift.snapshot(translator.undecodable),
            native_drift=native.snapshot(),
            cwd=translator.cwd,
            pid=pid,
            process=process_state(pid, gone),
        )

    def _spool_events(
        self, run: RunHandle[_SpoolView], spool: _SpoolView, parser: TranscriptParser | None
    ) -> list[Event]:
        return spool.events

    def _facts(self, run: RunHandle[_SpoolView], parser: TranscriptParser) -> tuple[str, str, str]:
        return parser.session_id, parser.title, parser.cwd

    def _complete(self, parser: TranscriptParser) -> Callable[[InputRequested], InputRequested]:
        return lambda pending: _complete(pending, parser.open_tools)

    def sessions(self, since: float) -> list[Session]:
        from agentspool.adapters.claude_code._sessions import sessions

        return sessions(since)

    # -- the history index (ADR 0022) -------------------------------------------------
    def transcript_files(self) -> list[TranscriptFile]:
        """``<config dir>/projects/<slug>/<session>.jsonl`` and each subagent's own
        ``<session>/subagents/agent-<id>.jsonl`` beside it (docs/providers/claude-code.md
        §4.1)."""
        from agentspool.adapters.claude_code._home import config_dir

        projects = os.path.join(glob.escape(config_dir()), "projects")
        found = glob.glob(os.path.join(projects, "*", "*.jsonl"))
        found += glob.glob(os.path.join(projects, "*", "*", "subagents", "agent-*.jsonl"))
        return [TranscriptFile(path=path) for path in sorted(found)]

    def resume_transcript(self, path: str, offset: int, state: bytes) -> ResumedFile[HistoryParser]:
        # The CLI names a main transcript by its session (``HistoryParser``).
        from agentspool.adapters.claude_code._transcript import HistoryParser

        named = os.path.basename(path).removesuffix(".jsonl")
        parser = HistoryParser.resumed(state, named) if offset and state else None
        fresh = parser is None
        return ResumedFile(
            path,
            0 if parser is None else offset,
            parser or HistoryParser(named),
            fresh=fresh,
        )

    def usage_view(self, path: str) -> UsageView:
        from agentspool.adapters.claude_code._usage_view import usage_view

        return usage_view(path, os.path.basename(path).removesuffix(".jsonl"))

    def read_session(self, session: Session) -> Chat:
        """The transcript and the native status file (no spool: no hooks armed)."""
        from agentspool.adapters.claude_code import _signals

        run: RunHandle[_SpoolView] = self._open(session.session_id, "", session.transcript_path)
        pid = session.pid
        native = _signals.native_drift()
        status, gone = _signals.read_native(session.transcript_path, pid, native)
        live = Live(
            extra=_signals.native_events(status, gone, pid),
            native_drift=native.snapshot(),
            cwd=session.cwd,
            pid=pid,
            process=process_state(pid, gone) if pid else "unknown",
        )
        return self._compose(run, self._read_view(run.run_id, "", run.transcript_path), live)

    def session_at(self, path: str) -> Session | None:
        from agentspool.adapters.claude_code._sessions import session_at

        return session_at(path)

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session``, then each subagent's own transcript, opened by a link record
        made from its meta file: the main transcript of 2.1.328 holds no record of the
        subagent's id until the agent's result (never, for one still running), while the
        meta file names the spawning call from the start."""
        from agentspool.adapters.claude_code._sessions import (
            cwd_of,
            subagent_meta,
            subagent_transcripts,
        )

        chat = self.read_session(session)
        if not chat.cwd:
            chat.cwd = session.cwd or cwd_of(session.transcript_path)
        subagents = []
        for path in subagent_transcripts(session.transcript_path):
            child = self.read_chat(session.session_id, "", path)
            agent_id = next((m.agent_id for m in child.messages if m.agent_id), "")
            if not agent_id:
                continue  # no conversation record yet
            meta = subagent_meta(path)
            link = link_record(
                agent_id,
                meta.tool_use_id,
                text=meta.description,
                timestamp=child.messages[0].timestamp,
            )
            subagents.append((link, child))
        return with_subagents(chat, subagents)
