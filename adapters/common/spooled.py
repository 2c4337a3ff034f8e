"""What the adapters whose live signals are the hook spool share.

The spool protocol is provider-neutral, so the seam's spool-side methods are the same for
every such adapter (``SpoolMethods``). Claude Code and Codex also read alike around their
own parsers (``SpooledReads``): one spool view per run, refreshed on each read, whose
translator remembers the transcript the latest hook named; one ``TranscriptView`` per
transcript file, followed incrementally and folded with that run's spool events. What
differs — the translator, the parser, which spool events belong to a file, native status —
stays in the provider's subpackage.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.core.events import Event
from agentspool.core.merge import EventMerger
from agentspool.errors import TranscriptGoneError
from agentspool.spool import signature

if TYPE_CHECKING:
    from agentspool.spool.sweep import SweepReport


class SpoolMethods:
    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        return signature.spool_sig(run_id, runtime_dir)

    def sweep(self, runtime_dir: str, keep: Iterable[str], *, dry_run: bool = False) -> SweepReport:
        from agentspool.spool.sweep import sweep_spools  # not on the read path

        return sweep_spools(runtime_dir, keep, dry_run=dry_run)


class _Located(Protocol):
    transcript_path: str


class SpoolView(Protocol):
    """A run's spool, read incrementally by ``refresh``."""

    @property
    def translator(self) -> _Located: ...

    def refresh(self) -> None: ...


class Parser(Protocol):
    events: list[Event]

    def feed(self, block: memoryview) -> None: ...


S = TypeVar("S", bound=SpoolView)
P = TypeVar("P", bound=Parser)


class TranscriptView(Generic[P]):
    """One transcript file, parsed incrementally, with its event fold: the parser's
    events on the ``transcript`` channel, the run's hook events on ``spool``."""

    def __init__(self, follower: JsonlFollower, new_parser: Callable[[], P]) -> None:
        self.follower = follower
        self._new_parser = new_parser
        self._reset()

    def _reset(self) -> None:
        self.parser = self._new_parser()
        self.merger = EventMerger()
        self._transcript_seen = 0
        self._spool_seen = 0

    def _feed(self, block: memoryview) -> None:
        self.parser.feed(block)  # the parser of the moment: a reset replaces it

    def read(self) -> None:
        """Parse what the file gained since the last read (all of it if it was replaced)."""
        self.follower.read(self._feed, self._reset)
        self.merger.add("transcript", self.parser.events[self._transcript_seen :])
        self._transcript_seen = len(self.parser.events)

    def add_spool(self, events: list[Event]) -> None:
        """The run's hook events for this file (all so far: only the new ones are kept)."""
        self.merger.add("spool", events[self._spool_seen :])
        self._spool_seen = len(events)


class SpooledReads(SpoolMethods, Generic[S, P]):
    """Reading for an adapter with a spool view per run and a transcript view per file:
    the subclass says how to make each."""

    def __init__(self) -> None:
        self._spools: dict[tuple[str, str], S] = {}
        self._views: dict[tuple[str, str, str], TranscriptView[P]] = {}

    def _new_spool(self, run_id: str, runtime_dir: str) -> S:
        raise NotImplementedError

    def _new_view(self, run_id: str, transcript_path: str) -> TranscriptView[P]:
        raise NotImplementedError

    def _spool(self, run_id: str, runtime_dir: str) -> S:
        """The run's spool view, refreshed. The refresh re-checks the runtime dir and run
        dir each time (``SpoolReader``, ADR 0013): a dir that turned unsafe since the
        last read raises ``RuntimeDirError`` before a forged record is folded in."""
        key = (run_id, runtime_dir)
        view = self._spools.get(key)
        if view is None:
            view = self._spools[key] = self._new_spool(run_id, runtime_dir)
        view.refresh()
        return view

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        """The transcript the latest hook named (after ``/clear`` the new file); ``""``
        until a hook has fired and while the named file does not exist yet."""
        if not runtime_dir:
            return ""
        path = self._spool(run_id, runtime_dir).translator.transcript_path
        return path if path and os.path.exists(path) else ""

    def _live_spool(self, run_id: str, runtime_dir: str, transcript_path: str) -> S | None:
        """The start of every read: a named transcript must exist; the spool, refreshed,
        unless the read is transcript-only (``runtime_dir == ""``)."""
        if transcript_path and not os.path.exists(transcript_path):
            raise TranscriptGoneError(run_id, transcript_path)
        return self._spool(run_id, runtime_dir) if runtime_dir else None

    def _read_view(self, run_id: str, runtime_dir: str, transcript_path: str) -> TranscriptView[P]:
        """The transcript's view, with what the file gained since the last read parsed."""
        key = (run_id, runtime_dir, transcript_path)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = self._new_view(run_id, transcript_path)
        view.read()
        return view
