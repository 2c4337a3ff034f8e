"""What the adapters whose live signals are the hook spool share.

The spool protocol is provider-neutral, so the seam's spool-side methods are the same for
every such adapter (``SpoolMethods``). Claude Code and Codex also read alike around their
own parsers (``SpooledReads``): one spool view per run, refreshed on each read, whose
translator remembers the transcript the latest hook named; one ``TranscriptView`` per
transcript file, followed incrementally and folded with that run's spool events. What
differs — the translator, the parser, which spool events belong to a file, native status —
stays in the provider's subpackage.

A process that reads many runs holds this state only for the latest ones: at most
``MAX_SPOOL_VIEWS`` runs' spool views and ``MAX_TRANSCRIPT_VIEWS`` transcript views,
least recently read dropped first (a dropped view is rebuilt by reading its file again).
A run's live state is also dropped once the run is swept (through ``sweep``, or found
gone or set up anew at the next read) or read as ended (``release_run``, which core's
reader calls). Objects handed to a caller are never changed by a later read.

``spool_sig`` folds, besides the run dir's entries, the stat of the evidence the last
read of the run found outside it (``_watched_paths``: the located transcript, for Claude
Code also the native status file and ``/proc/<pid>``): stat only, no file is read.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from agentspool.core.events import Event
from agentspool.core.merge import EventMerger
from agentspool.errors import TranscriptGoneError
from agentspool.spool import signature
from agentspool.spool.layout import run_dir

if TYPE_CHECKING:
    from agentspool.spool.sweep import SweepReport

# Runs whose spool view (its hook events, a few KiB to a few MiB) an adapter keeps.
MAX_SPOOL_VIEWS = 128
# Transcript files whose parse (every message of the file) an adapter keeps: the
# conversations a dashboard shows at once. Reading more in turn re-parses each.
MAX_TRANSCRIPT_VIEWS = 32
# Runs whose watched paths ``spool_sig`` remembers (a few short strings each): kept
# longer than the views, so the signature stays whole while a view is rebuilt.
MAX_SIG_HINTS = 4096

K = TypeVar("K")
V = TypeVar("V")


class _Lru(OrderedDict[K, V]):
    """A dict of at most ``limit`` entries that drops the least recently used first."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def hit(self, key: K) -> V | None:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


def _dir_identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


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


class Follower(Protocol):
    """Follows one transcript: ``read`` hands on what it gained since the last call in
    blocks of whole lines, calling ``reset`` first when it was replaced (``JsonlFollower``
    for a file; a provider whose transcript is not a file brings its own)."""

    def read(self, on_lines: Callable[[memoryview], None], reset: Callable[[], None]) -> None: ...


S = TypeVar("S", bound=SpoolView)
P = TypeVar("P", bound=Parser)


class TranscriptView(Generic[P]):
    """One transcript file, parsed incrementally, with its event fold: the parser's
    events on the ``transcript`` channel, the run's hook events on ``spool``."""

    def __init__(self, follower: Follower, new_parser: Callable[[], P]) -> None:
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
        # (run, runtime dir) → (the run dir's identity when the view was made, the view)
        self._spools: _Lru[tuple[str, str], tuple[tuple[int, int], S]] = _Lru(MAX_SPOOL_VIEWS)
        self._views: _Lru[tuple[str, str, str], TranscriptView[P]] = _Lru(MAX_TRANSCRIPT_VIEWS)
        self._watched: _Lru[tuple[str, str], tuple[str, ...]] = _Lru(MAX_SIG_HINTS)

    def _new_spool(self, run_id: str, runtime_dir: str) -> S:
        raise NotImplementedError

    def _new_view(self, run_id: str, transcript_path: str) -> TranscriptView[P]:
        raise NotImplementedError

    def _transcript_exists(self, path: str) -> bool:
        """Whether a transcript path names something that exists (here: a file)."""
        return os.path.exists(path)

    def _watched_paths(self, spool: S) -> tuple[str, ...]:
        """Evidence outside the run dir that the next read would look at, for
        ``spool_sig``: here the transcript the latest hook named."""
        path = spool.translator.transcript_path
        return (path,) if path else ()

    def _spool(self, run_id: str, runtime_dir: str) -> S:
        """The run's spool view, refreshed. The refresh re-checks the runtime dir and run
        dir each time (``SpoolReader``, ADR 0013): a dir that turned unsafe since the
        last read raises ``RuntimeDirError`` before a forged record is folded in."""
        key = (run_id, runtime_dir)
        view = self._cached_spool(key)
        view.refresh()
        self._watched.put(key, self._watched_paths(view))
        return view

    def _cached_spool(self, key: tuple[str, str]) -> S:
        """The view made for this run dir; a new one if the dir was swept or set up anew
        since (a view of the old spool would keep its events, and its cursor)."""
        identity = _dir_identity(run_dir(key[1], key[0]))
        cached = self._spools.hit(key)
        if cached is not None and cached[0] == identity:
            return cached[1]
        if cached is not None:
            self.release_run(*key)
        view = self._new_spool(*key)
        if identity is not None:  # a run dir that is not there is not worth a cache entry
            self._spools.put(key, (identity, view))
        return view

    def release_run(self, run_id: str, runtime_dir: str | None = None) -> None:
        """Forget the run's live state — its spool view and the transcript views that
        fold it — in ``runtime_dir``, or in every runtime dir. Transcript-only views
        (what ended runs are read with) stay, until they are the least recently read."""
        for key in [k for k in self._spools if k[0] == run_id]:
            if runtime_dir is None or key[1] == runtime_dir:
                del self._spools[key]
                self._watched.pop(key, None)
        for view_key in [k for k in self._views if k[0] == run_id and k[1]]:
            if runtime_dir is None or view_key[1] == runtime_dir:
                del self._views[view_key]

    def sweep(self, runtime_dir: str, keep: Iterable[str], *, dry_run: bool = False) -> SweepReport:
        report = super().sweep(runtime_dir, keep, dry_run=dry_run)
        for run_id in [] if dry_run else report.removed:
            self.release_run(run_id, runtime_dir)
        return report

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        sig = signature.spool_sig(run_id, runtime_dir)
        watched = self._watched.get((run_id, runtime_dir))
        return f"{sig}+{signature.paths_sig(watched)}" if watched else sig

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        """The transcript the latest hook named (after ``/clear`` the new file); ``""``
        until a hook has fired and while the named file does not exist yet."""
        if not runtime_dir:
            return ""
        path = self._spool(run_id, runtime_dir).translator.transcript_path
        return path if path and self._transcript_exists(path) else ""

    def _live_spool(self, run_id: str, runtime_dir: str, transcript_path: str) -> S | None:
        """The start of every read: a named transcript must exist; the spool, refreshed,
        unless the read is transcript-only (``runtime_dir == ""``)."""
        if transcript_path and not self._transcript_exists(transcript_path):
            raise TranscriptGoneError(run_id, transcript_path)
        return self._spool(run_id, runtime_dir) if runtime_dir else None

    def _read_view(self, run_id: str, runtime_dir: str, transcript_path: str) -> TranscriptView[P]:
        """The transcript's view, with what the file gained since the last read parsed."""
        key = (run_id, runtime_dir, transcript_path)
        view = self._views.hit(key)
        if view is None:
            view = self._new_view(run_id, transcript_path)
            self._views.put(key, view)
        view.read()
        return view
