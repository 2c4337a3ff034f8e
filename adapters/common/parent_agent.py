"""What the providers whose agent process runs their hooks (the hook's parent: Gemini
CLI, Qwen Code, Kimi Code) share: the translator's bookkeeping of every record — the
agent's pid, schema drift, the cwd — the spool view that keeps its events, and the
adapter's parts built on them (the read's live signals, ``spool_sig``'s watched paths).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, Protocol, TypeVar

from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.spooled import (
    Live,
    P,
    RunHandle,
    SpoolBackedAdapter,
    translated_live,
)
from agentspool.core import proc as _proc
from agentspool.core.events import Event
from agentspool.spool.read import SpoolReader, SpoolRecord


class _Payload(Protocol):
    cwd: str


H = TypeVar("H", bound=_Payload)


class ParentAgentHooks:
    """A translator's state every record updates (``take``); a subclass translates."""

    def __init__(self, known: Mapping[str, frozenset[str]]) -> None:
        self.transcript_path = ""
        self.cwd = ""
        self.undecodable = 0
        self.agent_pid = 0
        self.agent_seen_ns = 0
        self.drift = DriftCounter(known)

    def translate(self, record: SpoolRecord) -> list[Event]:
        raise NotImplementedError

    def settled(self) -> list[Event]:
        """After a refresh: what the spool's records prove together (default: nothing)."""
        return []

    def take(self, record: SpoolRecord, decode: Callable[[SpoolRecord], H | None]) -> H | None:
        """The record's payload (``None``: undecodable, counted), its agent and drift noted."""
        hook = decode(record)
        if hook is None:
            self.undecodable += 1
            return None
        if record.agent_pid > 1:  # pid 1: a hook that outlived its agent
            self.agent_pid, self.agent_seen_ns = record.agent_pid, record.mono_ns
        if record.event not in self.drift.checked and not record.truncated:
            self.drift.see(record.event, record.payload)
        if hook.cwd:
            self.cwd = hook.cwd
        return hook

    def agent_gone(self) -> bool:
        """The process that ran the hooks is dead, or its pid names a younger process:
        nothing runs or waits any more (SIGKILL fires no hook)."""
        return (
            bool(self.agent_pid) and _proc.same_process(self.agent_pid, self.agent_seen_ns) is None
        )


T = TypeVar("T", bound=ParentAgentHooks)


class TranslatedSpool(Generic[T]):
    """One run's spool, read incrementally; every record translated once, kept as events."""

    def __init__(self, run_dir: str, translator: T) -> None:
        self.reader = SpoolReader(run_dir)
        self.translator = translator
        self.events: list[Event] = []

    def refresh(self) -> None:
        for record in self.reader.read():
            self.events += self.translator.translate(record)
        self.events += self.translator.settled()

    def liveness(self) -> list[Event]:
        """Not kept: a dead agent process ends whatever its hooks left open."""
        if not self.translator.agent_gone():
            return []
        return _proc.ended_by_exit(self.translator.agent_pid)


class ParentAgentAdapter(SpoolBackedAdapter[TranslatedSpool[T], P], Generic[T, P]):
    """The spool parts of such a provider: ``_new_translator`` names its translator."""

    def _new_translator(self) -> T:
        raise NotImplementedError

    def _new_spool(self, run: RunHandle[TranslatedSpool[T]]) -> TranslatedSpool[T]:
        return TranslatedSpool(run.run_dir, self._new_translator())

    def _watched_paths(self, spool: TranslatedSpool[T]) -> tuple[str, ...]:
        """For ``spool_sig``: the transcript, and the agent's liveness by stat alone
        (``/proc/<pid>``; ``/proc/<pid>/exe``, which a killed, unreaped one no longer has)."""
        path, pid = spool.translator.transcript_path, spool.translator.agent_pid
        watched = [path] if path else []
        if pid:
            watched += [f"/proc/{pid}", f"/proc/{pid}/exe"]
        return tuple(watched)

    def _live(self, run: RunHandle[TranslatedSpool[T]], spool: TranslatedSpool[T]) -> Live:
        return translated_live(spool.translator, spool.liveness())

    def _spool_events(
        self, run: RunHandle[TranslatedSpool[T]], spool: TranslatedSpool[T], parser: P | None
    ) -> list[Event]:
        return spool.events
