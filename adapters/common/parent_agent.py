"""What the providers whose agent process runs their hooks (the hook's parent: Gemini
CLI, Qwen Code, Kimi Code, Copilot CLI) or writes the spool itself (Pi's extension)
share: the translator's bookkeeping of every record — the agent's pid, schema drift, the
cwd — and the adapter's parts built on it (the read's live signals, ``spool_sig``'s
watched paths).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from agentspool.adapters.common.salvage import HookDecoder
from agentspool.adapters.common.spooled import (
    Live,
    P,
    RunHandle,
    SpoolBackedAdapter,
    TranslatedSpool,
    agent_watched,
    ended_if_gone,
    translated_live,
)
from agentspool.adapters.common.translator import HookFields, HookReader
from agentspool.core import proc as _proc
from agentspool.core.events import Event
from agentspool.spool.read import SpoolRecord

H = TypeVar("H", bound=HookFields)


class ParentAgentHooks(HookReader[H]):
    """A translator's state every record updates (``take``); a subclass translates."""

    def __init__(self, decode: HookDecoder[H], known: Mapping[str, frozenset[str]]) -> None:
        super().__init__(decode, known)
        self.agent_seen_ns = 0

    def translate(self, record: SpoolRecord) -> list[Event]:
        raise NotImplementedError

    def settled(self) -> list[Event]:
        """After a refresh: what the spool's records prove together (default: nothing)."""
        return []

    def take(self, record: SpoolRecord) -> H | None:
        """The record's payload (``None``: undecodable, counted), its agent and cwd noted."""
        hook = self._payload(record)
        if hook is None:
            return None
        if record.agent_pid > 1:  # pid 1: a hook that outlived its agent
            self.agent_pid, self.agent_seen_ns = record.agent_pid, record.mono_ns
        if hook.cwd:
            self.cwd = hook.cwd
        return hook

    def agent_gone(self) -> bool:
        """The process that ran the hooks is dead, or its pid names a younger process:
        nothing runs or waits any more (SIGKILL fires no hook)."""
        return (
            bool(self.agent_pid) and _proc.same_process(self.agent_pid, self.agent_seen_ns) is None
        )


T = TypeVar("T", bound="ParentAgentHooks[Any]")


class SettledSpool(TranslatedSpool[T]):
    """The spool's events, then what its records prove together (``settled``)."""

    def refresh(self) -> None:
        super().refresh()
        self.events += self.translator.settled()


class ParentAgentAdapter(SpoolBackedAdapter[SettledSpool[T], P], Generic[T, P]):
    """The spool parts of such a provider: ``hook_translator`` names its translator."""

    hook_translator: Callable[[], T]
    """What translates the run's spool records (one per run view)."""

    def _new_translator(self) -> T:
        return self.hook_translator()

    def _new_spool(self, run: RunHandle[SettledSpool[T]]) -> SettledSpool[T]:
        return SettledSpool(run.run_dir, self._new_translator())

    def _watched_paths(self, spool: SettledSpool[T]) -> tuple[str, ...]:
        return agent_watched(spool.translator.transcript_path, spool.translator.agent_pid)

    def _live(self, run: RunHandle[SettledSpool[T]], spool: SettledSpool[T]) -> Live:
        return translated_live(spool.translator, ended_if_gone(spool.translator))

    def _spool_events(
        self, run: RunHandle[SettledSpool[T]], spool: SettledSpool[T], parser: P | None
    ) -> list[Event]:
        return spool.events
