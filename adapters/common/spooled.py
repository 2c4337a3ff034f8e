"""The spool-backed adapter: what every provider whose live signals are the hook spool
shares, written once.

A provider subclasses ``SpoolBackedAdapter`` and declares its parts: the spool view it
translates hook records with, the transcript view its parser reads through, the
installer, and whichever optional parts of the seam it has (``core/seam.py``). What
differs between providers — the translator, the parser, which spool events belong to a
file, native status — stays in the provider's subpackage, behind the few methods this
class calls (``_new_spool``, ``_new_view``, ``_live``, ``_spool_events``, ``_facts``).

One read is one ``RunHandle``: the run id is checked and the run dir joined once, the
spool refreshed once, the transcript checked once, and the located transcript taken from
that same refresh (``read_chat(..., None)``). The trust refusal, ``untrust`` for a CLI
without a trust gate and the read prelude are here and nowhere else.

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
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, overload

import msgspec

from agentspool.adapters.common.jsonl import JsonlFollower
from agentspool.core.compose import compose_chat
from agentspool.core.events import Event, InputRequested
from agentspool.core.merge import EventMerger
from agentspool.core.proc import ended_by_exit, process_state
from agentspool.core.seam import (
    Capabilities,
    Chat,
    Drift,
    HandStartedRuns,
    Installer,
    LifecycleCaller,
    LiveState,
    ProcessState,
    SessionDiscovery,
    SessionFiles,
    SourceDrift,
    Spawn,
    TranscriptHistory,
    Trust,
    TrustGate,
    Usage,
)
from agentspool.spool import signature
from agentspool.spool.errors import TranscriptGoneError, UnsupportedError
from agentspool.spool.layout import run_dir
from agentspool.spool.read import SpoolReader, SpoolRecord

if TYPE_CHECKING:
    from agentspool.core.seam import Message
    from agentspool.spool.read import SpoolRecord
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
T = TypeVar("T")


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


class _Located(Protocol):
    @property
    def transcript_path(self) -> str: ...


class SpoolView(Protocol):
    """A run's spool, read incrementally by ``refresh``."""

    @property
    def translator(self) -> _Located: ...

    def refresh(self) -> None: ...


class _Translating(_Located, Protocol):
    def translate(self, record: SpoolRecord) -> list[Event]: ...


Tr = TypeVar("Tr", bound=_Translating)


class TranslatedSpool(Generic[Tr]):
    """One run's spool, read incrementally: every record translated once, its events
    kept."""

    def __init__(self, run_dir: str, translator: Tr) -> None:
        self.reader = SpoolReader(run_dir)
        self.translator = translator
        self.events: list[Event] = []

    def refresh(self) -> None:
        for record in self.reader.read():
            self.events += self.translator.translate(record)


class _Drifting(Protocol):
    def snapshot(self, corrupt: int = 0) -> SourceDrift: ...


class Parser(Protocol):
    """What the shared read takes from a provider's transcript parser."""

    events: list[Event]
    messages: list[Message]
    usage: Usage
    cli_version: str
    corrupt: int

    @property
    def drift(self) -> _Drifting: ...

    def feed(self, block: memoryview) -> None: ...


class Follower(Protocol):
    """Follows one transcript: ``read`` hands on what it gained since the last call in
    blocks of whole lines, calling ``reset`` first when it was replaced (``JsonlFollower``
    for a file; a provider whose transcript is not a file brings its own)."""

    def read(self, on_lines: Callable[[memoryview], None], reset: Callable[[], None]) -> None: ...


S = TypeVar("S", bound=SpoolView)
P = TypeVar("P", bound=Parser)
P_co = TypeVar("P_co", bound=Parser, covariant=True)


class TurnParser(Protocol[P_co]):
    """A parser that derives the turn from the file itself (``lifecycle=True``), or
    leaves it to the live signals, which own it while a run is live."""

    def __call__(self, *, lifecycle: bool) -> P_co: ...


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
        self._untouched = True
        """Nothing fed or added since: a follower's reset before its first block (every
        first read) has nothing to undo, and makes no second parser."""

    def _restart(self) -> None:
        if not self._untouched:
            self._reset()

    def _feed(self, block: memoryview) -> None:
        self._untouched = False
        self.parser.feed(block)  # the parser of the moment: a reset replaces it

    def read(self) -> None:
        """Parse what the file gained since the last read (all of it if it was replaced)."""
        self.follower.read(self._feed, self._restart)
        self.merger.add("transcript", self.parser.events[self._transcript_seen :])
        self._transcript_seen = len(self.parser.events)

    def add_spool(self, events: list[Event]) -> None:
        """The run's hook events for this file (all so far: only the new ones are kept)."""
        self._untouched = False
        self.merger.add("spool", events[self._spool_seen :])
        self._spool_seen = len(events)


class Live:
    """What a run's live signals add to one read: events not kept in the spool view
    (native status, the process's end, a server's snapshot), drift, and the agent's
    process and working directory as the evidence names them."""

    __slots__ = ("cwd", "extra", "native_drift", "pid", "process", "spool_drift")

    def __init__(
        self,
        *,
        extra: Sequence[Event] = (),
        spool_drift: SourceDrift | None = None,
        native_drift: SourceDrift | None = None,
        cwd: str = "",
        pid: int = 0,
        process: ProcessState = "unknown",
    ) -> None:
        self.extra = extra
        self.spool_drift = spool_drift or SourceDrift()
        self.native_drift = native_drift or SourceDrift()
        self.cwd, self.pid, self.process = cwd, pid, process


NO_LIVE = Live()


class LiveTranslator(Protocol):
    """A hook translator that knows the agent process and whether it is gone."""

    agent_pid: int
    cwd: str
    undecodable: int

    @property
    def drift(self) -> _Drifting: ...

    def agent_gone(self) -> bool: ...


def ended_if_gone(translator: LiveTranslator) -> list[Event]:
    """A dead agent process ends whatever its hooks left open (never kept: a read
    asks again)."""
    return ended_by_exit(translator.agent_pid) if translator.agent_gone() else []


def translated_live(
    translator: LiveTranslator, extra: Sequence[Event], gone: bool | None = None
) -> Live:
    """What a translator's run adds to a read: ``extra`` (what the spool view does not
    keep), its drift, and its agent's process (``gone``: when the caller asked already)."""
    pid = translator.agent_pid
    return Live(
        extra=extra,
        spool_drift=translator.drift.snapshot(translator.undecodable),
        cwd=translator.cwd,
        pid=pid,
        process=process_state(pid, translator.agent_gone() if gone is None else gone),
    )


class Itself:
    """An optional part (core/seam.py) the adapter is itself: ``discovery = ITSELF``
    makes ``adapter.discovery`` the adapter, and mypy checks the class against the
    part's Protocol right there."""

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Itself: ...
    @overload
    def __get__(self, instance: T, owner: type[Any]) -> T: ...
    def __get__(self, instance: object, owner: type[Any]) -> object:
        return self if instance is None else instance


ITSELF = Itself()


class DeclaredAdapter:
    """What every adapter here declares alike (core/seam.py): no installer and no
    optional part until a subclass names one (``discovery = ITSELF``, ``installer =
    ...``), the capabilities that are the presence of a part (``discovers_sessions``,
    ``resumes_transcripts``) said by the part alone, and ``setup``, which refuses
    ``trust="config"`` without a trust gate before the subclass arms the run (``_arm``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("capabilities")
        if declared is not None:
            cls.capabilities = msgspec.structs.replace(
                declared,
                discovers_sessions=cls.discovery is not None,
                resumes_transcripts=cls.history is not None,
            )

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    executable: ClassVar[str]
    installer: ClassVar[Installer | None] = None
    """The part that arms the hooks in the CLI's own settings (``common.install``)."""
    trust_gate: ClassVar[TrustGate | None] = None
    discovery: ClassVar[SessionDiscovery | None] = None
    session_files: ClassVar[SessionFiles | None] = None
    history: ClassVar[TranscriptHistory | None] = None
    lifecycle: ClassVar[LifecycleCaller | None] = None
    hand_started: ClassVar[HandStartedRuns | None] = None
    live_state: ClassVar[LiveState | None] = None

    def setup(
        self,
        run_id: str,
        runtime_dir: str,
        *,
        trust: Trust = "bypass",
        config_home: str | None = None,
    ) -> Spawn:
        if trust != "bypass" and self.trust_gate is None:
            raise UnsupportedError(self.name, f"has no hook trust gate: trust={trust!r}")
        return self._arm(run_id, runtime_dir, trust, config_home)

    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        """Render the run's settings (``trust`` is ``"bypass"`` without a gate)."""
        raise NotImplementedError


class RunHandle(Generic[S]):
    """One read of one run. ``spool`` is the run's spool view, refreshed once for this
    read (``None`` for a transcript-only read); ``transcript_path`` the transcript
    checked once (``""``: not located)."""

    __slots__ = ("run_dir", "run_id", "runtime_dir", "spool", "transcript_path")

    def __init__(self, run_id: str, runtime_dir: str) -> None:
        self.run_id, self.runtime_dir = run_id, runtime_dir
        # The run id is checked here, once: a transcript-only read names no run dir.
        self.run_dir = run_dir(runtime_dir, run_id) if runtime_dir else ""
        self.spool: S | None = None
        self.transcript_path = ""


class SpoolBackedAdapter(DeclaredAdapter, Generic[S, P]):
    """An adapter whose live signals are the hook spool: a spool view per run and a
    transcript view per file, kept in bounded caches; the subclass says how to make
    each and declares its parts."""

    arm_run: ClassVar[Callable[[str, str], Spawn] | None] = None
    """How a run is armed when that takes the run id and runtime dir alone (the
    provider's ``_lifecycle.setup``); a provider whose arming takes the trust mode or a
    config home overrides ``_arm`` instead."""
    transcript_parser: Callable[[], P]
    """What parses a transcript file (``_new_view``'s default: a JSONL file followed
    line by line into one such parser)."""
    turn_parser: TurnParser[P] | None = None
    """Instead of ``transcript_parser``, a parser that derives the turn itself when the
    file is read alone (transcript-only, an ended run) and not when it is read live."""

    # The part it is itself: it lets go of a run core reads as ended (``release_run``).
    live_state = ITSELF

    def __init__(self) -> None:
        # (run, runtime dir) → (the run dir's identity when the view was made, the view)
        self._spools: _Lru[tuple[str, str], tuple[tuple[int, int], S]] = _Lru(MAX_SPOOL_VIEWS)
        self._views: _Lru[tuple[str, str, str], TranscriptView[P]] = _Lru(MAX_TRANSCRIPT_VIEWS)
        self._watched: _Lru[tuple[str, str], tuple[str, ...]] = _Lru(MAX_SIG_HINTS)

    # -- arming ------------------------------------------------------------------------
    def _arm(self, run_id: str, runtime_dir: str, trust: Trust, config_home: str | None) -> Spawn:
        """Render the run's hook settings (``trust`` is ``"bypass"`` without a gate)."""
        arm = type(self).arm_run
        if arm is None:
            raise NotImplementedError
        return arm(run_id, runtime_dir)

    def untrust(self, config_home: str | None = None) -> bool:
        """Without a trust gate nothing was ever recorded (a gate overrides this)."""
        return False

    # -- what a provider declares --------------------------------------------------------
    def _new_spool(self, run: RunHandle[S]) -> S:
        raise NotImplementedError

    def _new_view(self, run_id: str, transcript_path: str, *, live: bool) -> TranscriptView[P]:
        return TranscriptView(JsonlFollower(transcript_path, run_id), self._new_parser(live))

    def _new_parser(self, live: bool) -> Callable[[], P]:
        """What makes the parser of a transcript read ``live`` (its run's spool folded)."""
        derives_turn = self.turn_parser
        if derives_turn is None:
            return self.transcript_parser
        return lambda: derives_turn(lifecycle=not live)

    def _transcript_exists(self, path: str) -> bool:
        """Whether a transcript path names something that exists (here: a file)."""
        return os.path.exists(path)

    def _watched_paths(self, spool: S) -> tuple[str, ...]:
        """Evidence outside the run dir that the next read would look at, for
        ``spool_sig``: here the transcript the latest hook named."""
        path = spool.translator.transcript_path
        return (path,) if path else ()

    def _live(self, run: RunHandle[S], spool: S) -> Live:
        """What the run's live signals add to this read (``NO_LIVE``: nothing)."""
        return NO_LIVE

    def _spool_events(self, run: RunHandle[S], spool: S, parser: P | None) -> list[Event]:
        """The run's hook events that fold with ``parser``'s file (``None``: no file)."""
        raise NotImplementedError

    def _facts(self, run: RunHandle[S], parser: P) -> tuple[str, str, str]:
        """The transcript's id, its title and the cwd it names (``""``: none)."""
        raise NotImplementedError

    def _complete(self, parser: P) -> Callable[[InputRequested], InputRequested] | None:
        """How to name the call of a wait the live signals could not match."""
        return None

    # -- the spool -----------------------------------------------------------------------
    def _spool(self, run: RunHandle[S]) -> S:
        """The run's spool view, refreshed. The refresh re-checks the runtime dir and run
        dir each time (``SpoolReader``, ADR 0013): a dir that turned unsafe since the
        last read raises ``RuntimeDirError`` before a forged record is folded in."""
        key = (run.run_id, run.runtime_dir)
        view = self._cached_spool(run, key)
        view.refresh()
        self._watched.put(key, self._watched_paths(view))
        return view

    def _cached_spool(self, run: RunHandle[S], key: tuple[str, str]) -> S:
        """The view made for this run dir; a new one if the dir was swept or set up anew
        since (a view of the old spool would keep its events, and its cursor)."""
        identity = _dir_identity(run.run_dir)
        cached = self._spools.hit(key)
        if cached is not None and cached[0] == identity:
            return cached[1]
        if cached is not None:
            self.release_run(*key)
        view = self._new_spool(run)
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
        """Remove spools of runs outside ``keep`` (``spool.sweep``), and their views."""
        from agentspool.spool.sweep import sweep_spools  # not on the read path

        report = sweep_spools(runtime_dir, keep, dry_run=dry_run)
        for run_id in [] if dry_run else report.removed:
            self.release_run(run_id, runtime_dir)
        return report

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        sig = signature.spool_sig(run_id, runtime_dir)
        watched = self._watched.get((run_id, runtime_dir))
        return f"{sig}+{signature.paths_sig(watched)}" if watched else sig

    def _located(self, spool: S) -> str:
        """The transcript the latest hook named (after ``/clear`` the new file); ``""``
        until a hook has fired and while the named file does not exist yet."""
        path = spool.translator.transcript_path
        return path if path and self._transcript_exists(path) else ""

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        if not runtime_dir:
            return ""
        return self._located(self._spool(RunHandle(run_id, runtime_dir)))

    # -- one read ------------------------------------------------------------------------
    def _open(self, run_id: str, runtime_dir: str, transcript_path: str | None) -> RunHandle[S]:
        """The start of every read: a named transcript must exist; the spool, refreshed
        once, unless the read is transcript-only (``runtime_dir == ""``); ``None``: the
        transcript that refresh locates."""
        run: RunHandle[S] = RunHandle(run_id, runtime_dir)
        if transcript_path and not self._transcript_exists(transcript_path):
            transcript_path = self._vanished(run, transcript_path)
        if runtime_dir and run.spool is None:
            run.spool = self._spool(run)
        if transcript_path is None:
            transcript_path = self._located(run.spool) if run.spool is not None else ""
        run.transcript_path = transcript_path
        return run

    def _vanished(self, run: RunHandle[S], transcript_path: str) -> str:
        """A named transcript that does not exist: gone (a provider whose CLI deletes a
        file as evidence of something says what to read instead, ``""``: none)."""
        raise TranscriptGoneError(run.run_id, transcript_path)

    def _read_view(self, run_id: str, runtime_dir: str, transcript_path: str) -> TranscriptView[P]:
        """The transcript's view, with what the file gained since the last read parsed."""
        key = (run_id, runtime_dir, transcript_path)
        view = self._views.hit(key)
        if view is None:
            view = self._new_view(run_id, transcript_path, live=bool(runtime_dir))
            self._views.put(key, view)
        view.read()
        return view

    def read_chat(self, run_id: str, runtime_dir: str, transcript_path: str | None) -> Chat:
        run = self._open(run_id, runtime_dir, transcript_path)
        spool = run.spool
        live = self._live(run, spool) if spool is not None else NO_LIVE
        if not run.transcript_path:
            # Not located yet: live signals alone (a dialog can be open before any
            # transcript exists); with none, an idle empty chat.
            merger = EventMerger()
            if spool is not None:
                merger.add("spool", self._spool_events(run, spool, None))
            return compose_chat(
                merger.state(live.extra),
                drift=Drift(spool=live.spool_drift, native=live.native_drift),
                cwd=live.cwd,
                pid=live.pid,
                process=live.process,
            )
        view = self._read_view(run_id, runtime_dir, run.transcript_path)
        if spool is not None:
            view.add_spool(self._spool_events(run, spool, view.parser))
        return self._compose(run, view, live)

    def _compose(self, run: RunHandle[S], view: TranscriptView[P], live: Live) -> Chat:
        """The chat of a read whose transcript is located: the fold, and the file's facts."""
        parser = view.parser
        transcript_id, title, cwd = self._facts(run, parser)
        return compose_chat(
            view.merger.state(live.extra),
            parser.messages,
            transcript_id=transcript_id,
            transcript_path=run.transcript_path,
            title=title,
            usage=parser.usage,
            complete_pending=self._complete(parser),
            drift=Drift(
                cli_version=parser.cli_version,
                transcript=parser.drift.snapshot(parser.corrupt),
                spool=live.spool_drift,
                native=live.native_drift,
            ),
            cwd=live.cwd or cwd,
            pid=live.pid,
            process=live.process,
        )


def agent_watched(path: str, pid: int) -> tuple[str, ...]:
    """For ``spool_sig``: the transcript, and the agent's liveness by stat alone
    (``/proc/<pid>``; ``/proc/<pid>/exe``, which a killed, unreaped one no longer has)."""
    watched = [path] if path else []
    if pid:
        watched += [f"/proc/{pid}", f"/proc/{pid}/exe"]
    return tuple(watched)
