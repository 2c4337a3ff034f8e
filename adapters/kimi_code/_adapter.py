"""The Kimi Code adapter: composes a run's state from its wire and the hook spool.

Precedence (docs/adr/0048-kimi-code.md, docs/providers/kimi-code.md). The wire records
the turn and each dialog as it happens, so its events decide, live and after the fact
alike; the hooks name the session (and so the wire), end it, and give the agent process:

1. An open question — the wire's ``interaction.request{kind: question}`` without its
   ``interaction.resolved`` → ``question`` with ``pending_dialog`` (no hook fires for
   it).
2. An open approval — ``interaction.request{kind: approval}`` (and the
   ``PermissionRequest`` hook, the same instant) until ``interaction.resolved`` /
   ``PermissionResult`` → ``needs_input`` with ``pending_approval``: the call id, the
   tool, and the command it shows.
3. Otherwise the turn: ``turn.prompt`` opens it, ``turn.ended`` ends it (``cancelled``
   after Esc: interrupted).

``/clear`` is a new session: the newest ``SessionStart`` names it, and its wire is read
from then on. A dead kimi process (the hooks' parent past their shell) ends the run.
"""

from __future__ import annotations

import glob
import os
from typing import ClassVar

import msgspec

from agentspool.adapters.common.armed import armed_by_install
from agentspool.adapters.common.installer_part import HookInstallerOf
from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.adapters.common.parent_agent import ParentAgentAdapter, SettledSpool
from agentspool.adapters.common.recent import changed_since
from agentspool.adapters.common.spooled import ITSELF, RunHandle, TranscriptView
from agentspool.adapters.kimi_code._home import kimi_dir
from agentspool.adapters.kimi_code._signals import HookTranslator
from agentspool.adapters.kimi_code._wire import WireParser, is_wire, session_id_of
from agentspool.core.seam import Capabilities, Chat, Session, Spawn, Trust
from agentspool.spool.files import open_regular


class KimiCode(ParentAgentAdapter[HookTranslator, WireParser]):
    """The declaration: hook records through ``HookTranslator``, the main agent's wire
    through ``WireParser``, hooks installed once in ``config.toml`` (``_install``, tomlkit
    for what it re-laid out); ``setup`` requires them and names the run in the env."""

    name: ClassVar[str] = "kimi-code"
    capabilities: ClassVar[Capabilities] = Capabilities(live_signals=True, install_scopes=("user",))
    executable: ClassVar[str] = "kimi"
    hook_translator = HookTranslator
    installer = HookInstallerOf("agentspool.adapters.kimi_code._install")

    # The optional parts this adapter is itself (core/seam.py).
    discovery = session_files = ITSELF

    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        """``config_home``: the dir holding the ``config.toml`` the hooks are installed in."""
        from agentspool.adapters.kimi_code import _install  # tomlkit: only what arms a run

        path = _install.config_path(config_home)
        return armed_by_install(
            _install.PROVIDER, path, _install.missing(config_home), run_id, runtime_dir
        )

    def _new_view(
        self, run_id: str, transcript_path: str, *, live: bool
    ) -> TranscriptView[WireParser]:
        session = session_id_of(transcript_path)
        return TranscriptView(JsonlFollower(transcript_path, run_id), lambda: WireParser(session))

    def _facts(
        self, run: RunHandle[SettledSpool[HookTranslator]], parser: WireParser
    ) -> tuple[str, str, str]:
        return parser.session_id, "", ""

    # -- sessions from the CLI's own files (ls, show, the history index) ---------------
    def sessions(self, since: float) -> list[Session]:
        """Main wires changed at or after ``since``. Kimi Code keeps no pid file: a
        session's process is not known from its files."""
        base = os.path.join(glob.escape(kimi_dir()), "sessions", "*", "session_*")
        pattern = os.path.join(base, "agents", "main", "wire.jsonl")
        return [s for s in map(self.session_at, changed_since(pattern, since)) if s is not None]

    def read_session(self, session: Session) -> Chat:
        chat = self.read_chat(session.session_id, "", session.transcript_path)
        chat.cwd = chat.cwd or session.cwd
        return chat

    def read_session_with_subagents(self, session: Session) -> Chat:
        return self.read_session(session)  # subagents' own wires are not read yet

    def session_at(self, path: str) -> Session | None:
        """A main agent's wire (its first line the protocol's ``metadata``), with the cwd
        its session's ``state.json`` names."""
        if not is_wire(path):
            return None
        state = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(path))), "state.json")
        return Session(session_id=session_id_of(path), transcript_path=path, cwd=_state_cwd(state))


class _State(msgspec.Struct):
    cwd: str = ""


def _state_cwd(path: str) -> str:
    try:
        with open_regular(path) as fh:
            return msgspec.json.decode(fh.read(1 << 20), type=_State).cwd
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return ""
