"""The Gemini CLI adapter: composes a run's state from the hook spool and the chat file.

Precedence (docs/adr/0029-gemini-cli-state-precedence.md). All evidence becomes
canonical events, folded by the one reducer in evidence-time order; what decides:

1. An open question — ``ask_user``'s ``BeforeTool`` (the form's questions), confirmed by
   ``Notification{ToolPermission, details.type: "ask_user"}`` → ``question`` with
   ``pending_dialog``.
2. An open approval — only ``Notification{ToolPermission}`` shows one (the chat file
   holds the same record while a tool waits, runs or a question is open). It names no
   call: matched to the newest open ``BeforeTool`` of the session → ``needs_input`` with
   ``pending_approval`` (the hook's tool and input; ``tool_use_id`` is the hook's own
   ``tool-<n>``, the CLI's call id is written only once the call completed). No hook
   says it closed: the approved shell command running under the gemini process, the
   call's ``AfterTool`` (approved and run), the chat file's ``cancelled`` tool call
   (denied, or Esc: no hook fires), the turn's or the session's end, or the process
   gone.
3. Otherwise the turn: ``BeforeAgent`` opens it, ``AfterAgent`` ends it (also after an
   API error, and after Esc while the model streams); the chat file's ``Request
   cancelled.`` record ends it when Esc or "No" answered a confirmation (no hook fires).

The chat file alone (a transcript-only read: an ended run, a session no hook armed)
derives the turn from its records (``_chat``). ``locate_transcript`` follows the newest
hook's ``transcript_path`` but ``SessionEnd``'s, so ``/clear`` moves it to the new file.
The CLI deletes a session's file at exit when it holds no answer: a live read named that
file, whose ``SessionEnd`` the spool holds, reads the spool alone, not
``TranscriptGoneError``. A dead gemini process (the hooks' parent) ends the run.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import ClassVar

from agentspool.adapters.common.declarer import outside_agent, runs_lifecycle
from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.parent_agent import ParentAgentAdapter, SettledSpool
from agentspool.adapters.common.spooled import ITSELF, RunHandle, TranscriptView
from agentspool.adapters.common.subagents import link_record, with_subagents
from agentspool.adapters.gemini_cli import _home, _lifecycle, _signals
from agentspool.adapters.gemini_cli._chat import ChatParser
from agentspool.adapters.gemini_cli._document import (
    DocumentFollower,
    DocumentParser,
    document_session_id,
    is_document,
    listed_session_id,
)
from agentspool.adapters.gemini_cli._records import (
    SHELL_TOOL,
    SUBAGENT_TOOL,
    session_id_of,
    subagent_progress,
)
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Message,
    Session,
    Spawn,
    Trust,
)


def _project_root(chat_file: str) -> str:
    """The directory of the project a chat file belongs to (``""`` if not recorded)."""
    chats = os.path.dirname(os.path.abspath(chat_file))
    try:
        with open(os.path.join(os.path.dirname(chats), ".project_root"), encoding="utf-8") as fh:
            return fh.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return ""


class GeminiCli(ParentAgentAdapter[_signals.HookTranslator, ChatParser]):
    """The declaration: hook records through ``_signals.HookTranslator``, the chat file
    through ``ChatParser`` (``DocumentParser`` for the older one-document file), no
    native status (a dead gemini process ends the run), hooks armed by ``_lifecycle``
    into the settings ``_install`` wrote; discovery, session files and the lifecycle
    caller as optional parts."""

    name: ClassVar[str] = "gemini-cli"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        attests_supersession=True,
        install_scopes=("user",),
    )
    executable: ClassVar[str] = "gemini"
    hook_translator = _signals.HookTranslator
    turn_parser = ChatParser  # live, the hooks own the turn (_chat's module doc)
    installer = HookInstallerOf("agentspool.adapters.gemini_cli._install", "HOOKS")

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = lifecycle = ITSELF

    # -- arming ------------------------------------------------------------------------
    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        """``config_home``: the dir holding the settings the hooks are installed in
        (default: the CLI's own)."""
        return _lifecycle.setup(run_id, runtime_dir, config_home)

    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` in this run (ADR 0019). A subagent's shell
        call fires the same hooks as its parent's, with the parent's ``session_id`` and
        no call id; its command has the same environment. What tells them apart is time
        (docs/providers/gemini-cli.md §4.1): a subagent makes a call only after the model
        answered it, and its chat file records that answer when it arrives, while a
        call the main agent made beside an ``invoke_agent`` (one answer, both calls) is
        made before any subagent answered. So: the newest open shell call that runs
        ``agentspool … lifecycle``; if an ``invoke_agent`` of its session was open when
        it was made, and a subagent of that session, not finished, had an answer
        recorded by then — that subagent's id (the latest to answer); else ``""``.
        ``None`` when no such call is open or ``pid`` provably does not run under the
        gemini process."""
        translator = self._spool(RunHandle(run_id, runtime_dir)).translator
        calls = translator.open_calls()
        declaring = [c for c in calls if c.name == SHELL_TOOL and runs_lifecycle(c.tool_input)]
        if not declaring:
            return None
        if outside_agent(translator.agent_pid, translator.agent_seen_ns, pid):
            return None
        made = declaring[-1]
        if not any(
            c.name == SUBAGENT_TOOL and c.session == made.session and c.at <= made.at for c in calls
        ):
            return ""
        chats = os.path.dirname(translator.transcript_path)
        folder = os.path.join(glob.escape(chats), glob.escape(made.session))
        answered: list[tuple[float, str]] = []
        for path in glob.glob(os.path.join(folder, "*.jsonl")):
            answers, finished = subagent_progress(path)
            before = [at for at in answers if at <= made.at]
            if before and not finished:
                answered.append((max(before), session_id_of(path)))
        return max(answered)[1] if answered else ""

    # -- reading -----------------------------------------------------------------------
    def _new_view(
        self, run_id: str, transcript_path: str, *, live: bool
    ) -> TranscriptView[ChatParser]:
        if is_document(transcript_path):  # the older chat file, one JSON document
            return TranscriptView(
                DocumentFollower(transcript_path, run_id),
                lambda: DocumentParser(lifecycle=not live),
            )
        return super()._new_view(run_id, transcript_path, live=live)

    def sessions(self, since: float) -> list[Session]:
        """Chat files changed at or after ``since`` (``<.gemini>/tmp/<project>/chats/
        session-*.jsonl``, and the older ``session-*.json`` documents; a subagent's own
        file, in a folder named after its parent's session, is not a session). Gemini
        CLI keeps no status file: a session's process is not known from its files, so
        its state is the chat file's."""
        base = os.path.join(glob.escape(_home.gemini_dir()), "tmp", "*", "chats")
        found = []
        for pattern in ("session-*.jsonl", "session-*.json"):
            for path in glob.glob(os.path.join(base, pattern)):
                try:
                    recent = os.stat(path).st_mtime >= since
                except OSError:
                    continue
                session = self._session(path, listed=True) if recent else None
                if session is not None:
                    found.append(session)
        return found

    def session_at(self, path: str) -> Session | None:
        """A chat file (its first line the session's metadata; or an older chat file, one
        JSON document with ``sessionId`` and ``messages``), with the project it belongs
        to: ``tmp/<project>/.project_root`` holds the project's directory."""
        return self._session(path, listed=False)

    def _session(self, path: str, *, listed: bool) -> Session | None:
        """``listed``: found where the CLI keeps its chats, so a document's id may be
        read from its head (``listed_session_id``)."""
        if path.endswith(".jsonl"):
            session_id = session_id_of(path)
        elif is_document(path):
            session_id = listed_session_id(path) if listed else document_session_id(path)
        else:
            session_id = ""
        if not session_id:
            return None
        return Session(session_id=session_id, transcript_path=path, cwd=_project_root(path))

    def read_session(self, session: Session) -> Chat:
        chat = self.read_chat(session.session_id, "", session.transcript_path)
        chat.cwd = chat.cwd or session.cwd
        return chat

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session``, then each subagent's own chat file —
        ``chats/<spawner's session id>/<subagent's session id>.jsonl`` — and theirs in
        turn, each opened by a link record naming the ``invoke_agent`` call that ran it
        (the call names its subagent once it completed: until then the link has none;
        docs/providers/gemini-cli.md §4.1)."""
        chat = self.read_session(session)
        root = session.session_id or chat.transcript_id
        if not root:
            return chat
        chats = os.path.dirname(session.transcript_path)
        subagents: list[tuple[Message | None, Chat]] = []
        seen = {root}
        spawners = [(root, session.transcript_path, chat)]
        while spawners:
            spawner_id, spawner_path, spawner = spawners.pop(0)
            spawned = self._read_view(spawner_id, "", spawner_path).parser.spawned
            calls = {m.tool_use_id: m for m in spawner.messages if m.kind == "tool_call"}
            children = []
            folder = os.path.join(glob.escape(chats), glob.escape(spawner_id))
            for path in glob.glob(os.path.join(folder, "*.jsonl")):
                child_id = session_id_of(path)
                if child_id and child_id not in seen:
                    seen.add(child_id)
                    child = self.read_chat(child_id, "", path)
                    first = child.messages[0].timestamp if child.messages else ""
                    children.append((first, child_id, path, child))
            for first, child_id, path, child in sorted(children, key=lambda c: c[:2]):
                call_id = spawned.get(child_id, "")
                call = calls.get(call_id)
                args = (call.tool_input if call is not None else None) or {}
                name = str(args.get("agent_name", ""))
                link = link_record(child_id, call_id, text=name, timestamp=first)
                subagents.append((link, child))
                spawners.append((child_id, path, child))
        return with_subagents(chat, subagents)

    def _vanished(
        self, run: RunHandle[SettledSpool[_signals.HookTranslator]], transcript_path: str
    ) -> str:
        if run.runtime_dir:
            run.spool = self._spool(run)
            if transcript_path in run.spool.translator.ended_paths:
                # Deleted by the CLI at the session's end (it held no answer): not gone
                # evidence, the spool says what happened.
                return ""
        return super()._vanished(run, transcript_path)

    def _facts(
        self, run: RunHandle[SettledSpool[_signals.HookTranslator]], parser: ChatParser
    ) -> tuple[str, str, str]:
        return parser.session_id, "", ""  # the chat file names no cwd
