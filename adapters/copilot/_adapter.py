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

from typing import ClassVar

from agentspool.adapters.common.install import HookInstaller
from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.adapters.common.spooled import (
    Live,
    RunHandle,
    SpoolBackedAdapter,
    TranscriptView,
    TranslatedSpool,
    agent_watched,
    ended_if_gone,
    translated_live,
)
from agentspool.adapters.copilot import _install, _lifecycle, _signals
from agentspool.adapters.copilot._transcript import EventsParser
from agentspool.core.events import Event
from agentspool.core.seam import Capabilities, Installer, Spawn, Trust

_SpoolView = TranslatedSpool[_signals.HookTranslator]


class Copilot(SpoolBackedAdapter[_SpoolView, EventsParser]):
    """The declaration: hook records through ``_signals.HookTranslator``, the session's
    ``events.jsonl`` through ``EventsParser``, hooks armed per run by ``_lifecycle``
    (a plugin dir) or once by ``_install`` (a hooks file in the CLI's hooks folder)."""

    name: ClassVar[str] = "copilot"
    capabilities: ClassVar[Capabilities] = Capabilities(
        live_signals=True,
        install_scopes=("user",),
        unique_response_ids=False,
    )
    executable: ClassVar[str] = "copilot"
    installer: ClassVar[Installer | None] = HookInstaller(
        _install.install_hooks, _install.uninstall_hooks, _install.installed_hooks
    )

    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        return _lifecycle.setup(run_id, runtime_dir)

    def _new_spool(self, run: RunHandle[_SpoolView]) -> _SpoolView:
        return TranslatedSpool(run.run_dir, _signals.HookTranslator())

    def _new_view(
        self, run_id: str, transcript_path: str, *, live: bool
    ) -> TranscriptView[EventsParser]:
        return TranscriptView(JsonlFollower(transcript_path, run_id), EventsParser)

    def _watched_paths(self, spool: _SpoolView) -> tuple[str, ...]:
        return agent_watched(spool.translator.transcript_path, spool.translator.agent_pid)

    def _live(self, run: RunHandle[_SpoolView], spool: _SpoolView) -> Live:
        # Not kept: a dead copilot process ends whatever its hooks left open.
        return translated_live(spool.translator, ended_if_gone(spool.translator))

    def _spool_events(
        self, run: RunHandle[_SpoolView], spool: _SpoolView, parser: EventsParser | None
    ) -> list[Event]:
        return spool.events

    def _facts(self, run: RunHandle[_SpoolView], parser: EventsParser) -> tuple[str, str, str]:
        return parser.session_id, parser.title, parser.cwd
