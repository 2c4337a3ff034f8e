"""The Codex adapter: composes a run's state from the hook spool and the rollout.

Precedence (docs/adr/0007-codex-state-precedence.md). All evidence becomes canonical
events, folded by the one reducer in evidence-time order; what decides:

1. An open question — a ``request_user_input`` call with no output yet, seen in the
   rollout (``function_call`` without ``function_call_output``) or as its
   ``PreToolUse`` hook → ``question`` with ``pending_dialog`` (questions and options
   from the call's arguments).
2. An open approval — only the ``PermissionRequest`` hook shows one (the rollout is
   byte-identical to "command running"). It carries no ``tool_use_id``: it is matched
   to the latest unfinished ``PreToolUse`` of the same turn and tool → ``needs_input``
   with ``pending_approval``. It is closed by the call's ``PostToolUse`` or
   ``function_call_output``, by a ``PreModelRequest`` of the same turn (the turn went
   on, so it was approved), by the approved command running under the codex process
   (below), or by the turn's end (Esc = ``Interrupt``/``turn_aborted``).
3. Otherwise the turn lifecycle: ``task_started``/``UserPromptSubmit`` open turn T;
   exactly one of ``task_complete`` (``error`` → failed; no ``Stop`` then),
   ``turn_aborted``, ``Stop``, ``Interrupt`` finalizes it. Records appended after that
   for T (a background command's late ``item_completed``) are stale.

Sub-agents: their hooks carry ``agent_id`` and go to the child's own channel, their
rollouts are their own files; neither touches the parent's turn. ``locate_transcript``
follows the latest hook's ``transcript_path`` of the run's own thread (not
SubagentStart's, which names the child's file), so it follows ``/new`` and ``/clear``.
A rollout is created lazily at the first prompt: until it exists the path is ``""``, as
it stays in ``exec --ephemeral`` (no file at all).
The codex process: each hook record names it (the hook's parent). Between an approval
and the command's end or 10 s yield Codex writes nothing, so the approved command itself
is the evidence: a child of that process running the command, started after the
``PermissionRequest``, closes the approval (kept once seen; the run reads ``working``
within a read of the key). A dead codex process (or its pid reused by a younger one)
ends the run: SIGKILL fires no hook and writes no rollout record.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import msgspec

from agentspool.adapters.codex import _home, _lifecycle, _signals
from agentspool.adapters.codex._records import KNOWN_TYPES, QUESTION_TOOL, UUID, dialog_for
from agentspool.adapters.codex._rollout import (
    HistoryParser,
    RolloutParser,
    ZstFollower,
    thread_id_from_path,
)
from agentspool.adapters.common import declarer
from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.adapters.common.resume import ResumedFile
from agentspool.adapters.common.spooled import (
    ITSELF,
    Live,
    RunHandle,
    SpoolBackedAdapter,
    TranscriptView,
    agent_watched,
    ended_if_gone,
    translated_live,
)
from agentspool.adapters.common.subagents import head_lines, with_subagents
from agentspool.core.events import Event, InputRequested
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Message,
    Session,
    Spawn,
    TranscriptFacts,
    TranscriptFile,
    Trust,
    UsageView,
)
from agentspool.spool.layout import run_dir
from agentspool.spool.read import SpoolReader


class _SpoolView:
    """One run's spool, read incrementally; every record translated once, kept as
    events per channel (``""`` = the run's own thread, else a sub-agent's id)."""

    def __init__(self, run_dir: str) -> None:
        self.reader = SpoolReader(run_dir)
        self.translator = _signals.HookTranslator()
        self.events: dict[str, list[Event]] = {"": []}

    def refresh(self) -> None:
        for record in self.reader.read():
            for agent, event in self.translator.translate(record):
                self.events.setdefault(agent, []).append(event)
        for agent, event in self.translator.commands_started():
            self.events.setdefault(agent, []).append(event)

    def channel(self, agent: str) -> list[Event]:
        return self.events.get(agent, [])


def _complete(pending: InputRequested, parser: RolloutParser) -> InputRequested:
    """Name the call of an approval the hooks could not match (no PreToolUse seen),
    from the rollout's open call of that turn; give a question its form."""
    if pending.kind == "question":
        if pending.dialog is None and pending.tool_use_id in parser.open_calls:
            _, arguments, _ = parser.open_calls[pending.tool_use_id]
            return msgspec.structs.replace(
                pending, dialog=dialog_for(pending.tool_use_id, arguments)
            )
        return pending
    if pending.tool_use_id:
        return pending
    wanted = _signals.HOOK_TOOL_NAMES.get(pending.tool_name, pending.tool_name)
    for call_id, (name, _, turn) in reversed(parser.open_calls.items()):
        if name == wanted and name != QUESTION_TOOL and turn in ("", pending.turn_id):
            return msgspec.structs.replace(pending, tool_use_id=call_id)
    return pending


class _MetaPayload(msgspec.Struct, gc=False):
    id: str = ""
    cwd: str = ""


class _MetaHead(msgspec.Struct, gc=False):
    """A rollout's first line, as far as ``session_at`` reads it."""

    type: str = ""
    payload: _MetaPayload = msgspec.field(default_factory=_MetaPayload)
    id: Any = ""
    """The thread id of a pre-envelope header (no ``type``)."""


_decode_head = msgspec.json.Decoder(_MetaHead).decode


def _rollout_of(thread_id: str, beside: str) -> str:
    """The rollout of a thread: in the directory ``beside`` first, else anywhere under
    ``$CODEX_HOME/sessions/YYYY/MM/DD``; ``""`` when none is found."""
    tree = os.path.join(glob.escape(_home.codex_home()), "sessions", "*", "*", "*")
    for where in (glob.escape(beside), tree):
        for suffix in (".jsonl", ".jsonl.zst"):
            found = glob.glob(os.path.join(where, f"rollout-*-{glob.escape(thread_id)}{suffix}"))
            if found:
                return sorted(found)[0]
    return ""


class _WholeRollout:
    """A compressed rollout for the history index: read whole at the first ``read``
    (there is no byte offset into a compressed stream; the CLI writes such a file once,
    finished)."""

    fresh = True

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.parser = HistoryParser(thread_id_from_path(path))

    @property
    def count(self) -> int:
        return self.parser.count

    def read(self, limit: int) -> list[Message]:
        if self.offset:
            return []
        ZstFollower(self.path).read(self.parser.feed, lambda: None)
        self.offset = max(os.path.getsize(self.path), 1)
        return self.parser.take()

    def state(self) -> bytes:
        return b""

    def facts(self) -> TranscriptFacts:
        return self.parser.facts()


# Where Codex 0.169.0 renames a thread's rollout when the thread is archived, flat
# (docs/providers/codex.md §6.1).
ARCHIVED = "archived_sessions"

# What Codex 0.169.0 puts in every shell command's environment (docs/providers/codex.md §5.9).
THREAD_ENV = "CODEX_THREAD_ID"
SESSION_ENV = "CODEX_SESSION_ID"


class Codex(SpoolBackedAdapter[_SpoolView, RolloutParser]):
    """The declaration: hook records through ``_signals.HookTranslator``, the rollout
    through ``RolloutParser`` (``ZstFollower`` for a compressed one), no native status
    (a dead codex process ends the run), hooks armed and trusted by ``_lifecycle``,
    installed by ``_install``; every optional part."""

    name: ClassVar[str] = "codex"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        hook_trust=True,
        install_scopes=("user",),
    )
    executable: ClassVar[str] = "codex"
    installer = HookInstallerOf("agentspool.adapters.codex._install")

    # The optional parts this adapter is itself (core/seam.py).
    trust_gate = discovery = session_files = history = lifecycle = hand_started = ITSELF

    # -- arming ------------------------------------------------------------------------
    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        return _lifecycle.setup(run_id, runtime_dir, trust_mode=trust, home=config_home)

    def untrust(self, config_home: str | None = None) -> bool:
        return _lifecycle.untrust(config_home)

    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019). Codex tells every
        shell command its thread (``CODEX_THREAD_ID``, a sub-agent's own id, the
        ``agent_id`` of its hooks) and the root session (``CODEX_SESSION_ID``): they
        differ in a sub-agent (docs/providers/codex.md §5.9). Without them, the hooks:
        a sub-agent's ``PreToolUse`` carries ``agent_id``."""
        thread = environ.get(THREAD_ENV, "")
        session = environ.get(SESSION_ENV, "")
        if thread and session:
            return "" if thread == session else thread
        return declarer.lifecycle_caller(run_dir(runtime_dir, run_id), pid)

    def own_run(self, runtime_dir: str, environ: Mapping[str, str]) -> list[str]:
        """The hand-started run (installed hooks) of the Codex session whose command this
        is, found by ``CODEX_SESSION_ID`` in the runs' hooks: a sandboxed command runs in
        a pid namespace of its own, where the Codex process is not an ancestor."""
        session = environ.get(SESSION_ENV, "")
        if not session:
            return []
        return declarer.run_with_session(runtime_dir, self.name + "-", session)

    # -- reading -----------------------------------------------------------------------
    def _new_spool(self, run: RunHandle[_SpoolView]) -> _SpoolView:
        return _SpoolView(run.run_dir)

    def _new_view(
        self, run_id: str, transcript_path: str, *, live: bool
    ) -> TranscriptView[RolloutParser]:
        follower = ZstFollower if transcript_path.endswith(".zst") else JsonlFollower
        thread_id = thread_id_from_path(transcript_path)
        return TranscriptView(follower(transcript_path, run_id), lambda: RolloutParser(thread_id))

    def _watched_paths(self, spool: _SpoolView) -> tuple[str, ...]:
        """For ``spool_sig``: the rollout, and the codex process's liveness by stat alone
        (``/proc/<pid>``; ``/proc/<pid>/exe``, which a killed, unreaped one no longer
        has). Codex fires no hook when it exits, so without these a watcher never reads
        the run again and never sees it end."""
        return agent_watched(spool.translator.transcript_path, spool.translator.agent_pid)

    def _live(self, run: RunHandle[_SpoolView], spool: _SpoolView) -> Live:
        return translated_live(spool.translator, ended_if_gone(spool.translator))

    def _spool_events(
        self, run: RunHandle[_SpoolView], spool: _SpoolView, parser: RolloutParser | None
    ) -> list[Event]:
        # A sub-agent's own file folds the child's hooks, the run's file its own.
        return spool.channel(parser.agent_id if parser is not None else "")

    def _facts(self, run: RunHandle[_SpoolView], parser: RolloutParser) -> tuple[str, str, str]:
        return parser.thread_id, "", parser.cwd

    def _complete(self, parser: RolloutParser) -> Callable[[InputRequested], InputRequested]:
        return lambda pending: _complete(pending, parser)

    def sessions(self, since: float) -> list[Session]:
        """Rollouts changed at or after ``since``
        (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…``). Codex keeps no status file: a
        session's process is not known from its files, so its state is the rollout's."""
        base = os.path.join(_home.codex_home(), "sessions")
        found = []
        for pattern in ("rollout-*.jsonl", "rollout-*.jsonl.zst"):
            for path in glob.glob(os.path.join(glob.escape(base), "*", "*", "*", pattern)):
                thread = thread_id_from_path(path)
                try:
                    recent = os.stat(path).st_mtime >= since
                except OSError:
                    continue
                if thread and recent:
                    found.append(Session(session_id=thread, transcript_path=path))
        return found

    def read_session(self, session: Session) -> Chat:
        return self.read_chat(session.session_id, "", session.transcript_path)

    def session_at(self, path: str) -> Session | None:
        """A rollout: a ``.jsonl`` whose first record is ``session_meta`` — or another
        rollout record where a file named ``rollout-<time>-<thread id>`` lacks its header
        (older copies, other tools' files) — or, in the pre-envelope format, a header
        with no ``type``; a ``.jsonl.zst`` by its name, not decompressed."""
        if not os.path.isfile(path):
            return None
        if path.endswith(".jsonl.zst"):
            thread = thread_id_from_path(path)
            return Session(session_id=thread, transcript_path=path) if thread else None
        if not path.endswith(".jsonl"):
            return None
        for raw in head_lines(path):
            try:
                head = _decode_head(raw)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
                return None
            named = thread_id_from_path(path)
            if head.type == "session_meta":
                thread = head.payload.id if UUID.fullmatch(head.payload.id) else ""
                thread = thread or named or head.payload.id
            elif head.type in KNOWN_TYPES or (not head.type and head.id):
                thread = named
            else:
                return None
            if not thread:
                return None
            return Session(session_id=thread, transcript_path=path, cwd=head.payload.cwd)
        return None

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session``, then each sub-agent's own rollout: the ones the session's
        ``spawn_agent`` link records name (the rollout holds them), and theirs in turn.
        A sub-agent's rollout is looked for beside the session's, then under
        ``$CODEX_HOME/sessions``; one not found is left out (its link record stays)."""
        chat = self.read_session(session)
        if not chat.cwd:
            chat.cwd = self._read_view(session.session_id, "", session.transcript_path).parser.cwd
        seen = {session.session_id}
        subagents: list[tuple[Message | None, Chat]] = []
        pending = [chat]
        while pending:
            spawner = pending.pop(0)
            for record in spawner.messages:
                child_id = record.agent_id
                if record.kind != "subagent" or not child_id or child_id in seen:
                    continue
                seen.add(child_id)
                path = _rollout_of(child_id, os.path.dirname(session.transcript_path))
                if path:
                    child = self.read_chat(session.session_id, "", path)
                    subagents.append((None, child))
                    pending.append(child)
        return with_subagents(chat, subagents)

    # -- the history index (ADR 0022) -------------------------------------------------
    def transcript_files(self) -> list[TranscriptFile]:
        """Every rollout under ``$CODEX_HOME/sessions/YYYY/MM/DD/`` (a sub-agent's too: its
        own file) and, archived, right under ``$CODEX_HOME/archived_sessions/``
        (docs/providers/codex.md §6.1); compressed ones read whole."""
        home = glob.escape(_home.codex_home())
        found: list[str] = []
        for base in (os.path.join(home, "sessions", "*", "*", "*"), os.path.join(home, ARCHIVED)):
            found += glob.glob(os.path.join(base, "rollout-*.jsonl"))
            found += glob.glob(os.path.join(base, "rollout-*.jsonl.zst"))
        return [TranscriptFile(path=p, whole=p.endswith(".zst")) for p in sorted(found)]

    def resume_transcript(
        self, path: str, offset: int, state: bytes
    ) -> ResumedFile[HistoryParser] | _WholeRollout:
        if path.endswith(".zst"):
            return _WholeRollout(path)
        parser = HistoryParser.resumed(state) if offset and state else None
        return ResumedFile(
            path,
            0 if parser is None else offset,
            parser or HistoryParser(thread_id_from_path(path)),
            fresh=parser is None,
        )

    def usage_view(self, path: str) -> UsageView:
        # A response's model is the turn_context's before it and its usage a token_count
        # event's: the full parse, whose records carry both (ADR 0043).
        from agentspool.core.usage_first import full_usage_view

        return full_usage_view(self.resume_transcript(path, 0, b""))
