"""The run list and its poll: every run's summary, and a poll that re-reads only
the runs whose evidence moved since the last one (``watch``, ``serve``).

A module of the public API (``agentspool``); the facade re-exports its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from agentspool.adapters import registry
from agentspool.core.runs import RunSummary
from agentspool.core.seam import (
    Chat,
    Session,
)
from agentspool.spool.errors import (
    AgentspoolError,
    TranscriptGoneError,
)

if TYPE_CHECKING:
    pass

__all__ = ["RunPoll", "list_runs", "poll_runs", "run_key"]


from agentspool.api import RECENT_SESSIONS, _runtime, read_chat, spool_sig


def list_runs(
    runtime_dir: str | None = None,
    *,
    include_ended: bool = False,
    sessions: bool = True,
    warnings: list[str] | None = None,
) -> list[RunSummary]:
    """Every run that is live (``include_ended``: ended ones too), one ``RunSummary``
    each, most urgent first: waiting on the operator (longest first), then working,
    then idle, then ended.

    Runs are the runtime dir's (armed by a wrapper or by installed hooks) and, with
    ``sessions``, the sessions the CLIs' own files show that no run covers (their
    ``run_id`` is ``""``): a live one is listed whenever its process is known to run; one
    whose process is not known (only its transcript changed in the last
    ``RECENT_SESSIONS`` seconds) only with ``include_ended``.

    One run that cannot be read (its run dir not private, its transcript a directory
    or a FIFO: ``unreadable_run``) is left out and described in ``warnings`` (one line
    each), never fails the list. A runtime dir that is not private still raises.
    """
    import time

    from agentspool.core import runs
    from agentspool.core.reader import read_session

    runtime = _runtime(runtime_dir)
    found = []
    covered: set[str] = set()
    for ref in runs.run_dirs(runtime, registry.names()):
        if not ref.provider:
            continue  # a dir no registered adapter can read
        try:
            chat = _read_run(ref.provider, ref.run_id, runtime)
        except UNREADABLE_RUN as exc:
            if warnings is not None:
                warnings.append(unreadable_run(ref.provider, ref.run_id, exc))
            continue
        covered |= {chat.transcript_id, chat.transcript_path} - {""}
        if chat.state != "ended" or include_ended:
            found.append(runs.summarize(ref.provider, ref.run_id, chat))
    since = time.time() - RECENT_SESSIONS
    for provider in registry.names() if sessions else ():
        adapter = registry.load(provider)
        if adapter.discovery is None:
            continue
        for session in adapter.discovery.sessions(since):
            if session.session_id in covered or session.transcript_path in covered:
                continue
            try:
                chat = read_session(adapter, session)
            except TranscriptGoneError:
                continue  # deleted between the listing and the read
            except UNREADABLE_RUN as exc:
                if warnings is not None:
                    warnings.append(unreadable_run(provider, session.session_id, exc))
                continue
            if (chat.state != "ended" and chat.process == "alive") or include_ended:
                found.append(runs.summarize(provider, "", chat))
    return runs.by_urgency(found)


UNREADABLE_RUN = (AgentspoolError, OSError)
"""What reading one run may raise that is that run's alone (a run dir not private, a
transcript that is a directory or a FIFO): the listing goes on without it."""


def unreadable_run(provider: str, run_id: str, exc: BaseException) -> str:
    """The one warning line for a run left out of a listing."""
    return f"{provider} run {run_id}: left out: {exc}"


def _read_run(provider: str, run_id: str, runtime: str) -> Chat:
    try:
        return read_chat(provider, run_id, runtime)
    except TranscriptGoneError:
        return read_chat(provider, run_id, runtime, "", ended=True)


class RunPoll(msgspec.Struct, kw_only=True):
    """What ``poll_runs`` saw: pass it back as ``previous`` to the next poll."""

    sigs: dict[str, str] = {}
    """Every run's key → its signature (stat only) when it was last taken."""
    runs: dict[str, RunSummary] = {}
    """Every run's key → its summary, ended ones and unlisted sessions included."""
    listed: list[str] = []
    """The keys ``list_runs`` would list (with its ``include_ended``), most urgent first."""
    changed: list[str] = []
    """The keys whose signature moved since ``previous``: new, re-read, or gone."""
    sessions: dict[str, Session] = {}
    """Sessions no run covers, by key: re-signed without listing the CLIs' files again."""
    quiet: list[str] = []
    """Sessions whose process is not known to run (listed only with ``include_ended``)."""
    stamps: dict[str, str] = {}
    """Every run's key → the stat of its event spool, which every hook appends to (what a
    poll with ``full=False`` compares)."""
    listing: str = ""
    """The runtime dir's own stat when its run dirs were listed."""
    warnings: dict[str, str] = {}
    """Every run left out because it cannot be read → its warning line
    (``unreadable_run``); the others are listed all the same."""


def run_key(summary: RunSummary) -> str:
    """The key ``poll_runs`` files a run under: ``provider:run_id`` for a run, and
    ``provider:session:<session id>`` for a session no hook armed."""
    if summary.run_id:
        return f"{summary.provider}:{summary.run_id}"
    return f"{summary.provider}:session:{summary.session_id}"


def poll_runs(
    previous: RunPoll | None = None,
    runtime_dir: str | None = None,
    *,
    include_ended: bool = False,
    sessions: bool = True,
    discover: bool = True,
    full: bool = True,
) -> RunPoll:
    """``list_runs`` for a watcher: every run's signature is taken (``spool_sig``; for a
    session no hook armed, the stat of its transcript and process), and only runs whose
    signature moved since ``previous`` are read again. Runs nothing wrote to cost a stat.

    ``discover=False`` re-signs the sessions ``previous`` knew without listing the CLIs'
    files again (that listing globs every transcript: a watcher does it less often).

    ``full=False`` is the cheaper poll a watcher makes between full ones (one ``stat`` per
    run): only the runs whose event spool a hook appended to since ``previous`` are
    signed and read; everything else — transcripts, status files, processes, the
    ledger's declarations, sessions — keeps what ``previous`` saw. A run dir created or
    removed meanwhile makes it a full poll.
    """
    from agentspool.spool.signature import listing_stamp

    before = previous or RunPoll()
    runtime = _runtime(runtime_dir)
    if not full and previous is not None and listing_stamp(runtime) == before.listing:
        return _poll_hooked(before, runtime, include_ended=include_ended)
    return _poll_all(
        before, runtime, include_ended=include_ended, sessions=sessions, discover=discover
    )


def _sessions_of(provider: str, since: float) -> list[Session]:
    """The sessions a provider's own files show (none without the ``discovery`` part)."""
    discovery = registry.load(provider).discovery
    return discovery.sessions(since) if discovery is not None else []


class _Polled:
    """What a poll found so far: each run's signature and summary, the keys read again,
    the runs that could not be read, the hand-started sessions."""

    def __init__(
        self,
        sigs: dict[str, str],
        found: dict[str, RunSummary],
        changed: list[str],
        warnings: dict[str, str],
    ) -> None:
        self.sigs, self.found, self.changed, self.warnings = sigs, found, changed, warnings
        self.unarmed: dict[str, Session] = {}
        self.quiet: list[str] = []
        """Sessions whose process is not known to run."""


def _session_listing(
    before: RunPoll, names: list[str], sessions: bool, *, discover: bool
) -> list[tuple[str, Session]]:
    """The hand-started sessions to poll (``sessions``): found anew when discovering,
    else the last poll's."""
    if not sessions:
        return []
    if not discover:
        return [(key.partition(":")[0], s) for key, s in before.sessions.items()]
    import time

    since = time.time() - RECENT_SESSIONS
    return [(provider, session) for provider in names for session in _sessions_of(provider, since)]


def _poll_session(
    before: RunPoll,
    provider: str,
    session: Session,
    polled: _Polled,
) -> None:
    """One hand-started session, read again if what it watches moved."""
    from agentspool.core import runs
    from agentspool.core.reader import read_session
    from agentspool.spool.signature import paths_sig

    key = f"{provider}:session:{session.session_id}"
    # /proc/<pid>/exe: a killed agent left unreaped keeps /proc/<pid> but not it
    proc = (f"/proc/{session.pid}", f"/proc/{session.pid}/exe") if session.pid else ()
    watched = (session.transcript_path, *session.watched, *proc)
    sig = f"{session.process}+{paths_sig(watched)}"
    summary = before.runs.get(key)
    if summary is None or before.sigs.get(key) != sig:
        try:
            chat = read_session(registry.load(provider), session)
        except TranscriptGoneError:
            return  # deleted between the listing and the read
        except UNREADABLE_RUN as exc:
            polled.warnings[key] = unreadable_run(provider, session.session_id, exc)
            return
        summary = runs.summarize(provider, "", chat)
        polled.changed.append(key)
        if chat.process != "alive":
            polled.quiet.append(key)
    elif key in before.quiet:
        polled.quiet.append(key)
    polled.sigs[key] = sig
    polled.unarmed[key] = session
    polled.found[key] = summary


def _poll_all(
    before: RunPoll, runtime: str, *, include_ended: bool, sessions: bool, discover: bool
) -> RunPoll:

    from agentspool.core import runs
    from agentspool.spool.signature import listing_stamp, spool_stamps

    names = registry.names()
    runtime_stamp = listing_stamp(runtime)  # before the listing: a run dir made after moves it
    # A run's provider is read once; again when discovering (a run dir set up again).
    known = {} if discover else {s.run_id: s.provider for s in before.runs.values() if s.run_id}
    refs = [ref for ref in runs.run_dirs(runtime, names, known) if ref.provider]
    stamps = spool_stamps(runtime, [ref.run_id for ref in refs])
    sigs: dict[str, str] = {}
    found: dict[str, RunSummary] = {}
    changed: list[str] = []
    warnings: dict[str, str] = {}
    for ref in refs:
        key = f"{ref.provider}:{ref.run_id}"
        try:
            sigs[key], found[key], read = _resign(before, key, ref.provider, ref.run_id, runtime)
        except UNREADABLE_RUN as exc:
            warnings[key] = unreadable_run(ref.provider, ref.run_id, exc)
            continue
        if read:
            changed.append(key)
    covered = {c for s in found.values() for c in (s.session_id, s.transcript_path)} - {""}
    polled = _Polled(sigs, found, changed, warnings)
    for provider, session in _session_listing(before, names, sessions, discover=discover):
        if session.session_id not in covered and session.transcript_path not in covered:
            _poll_session(before, provider, session, polled)
    changed += [key for key in before.sigs if key not in sigs]
    return _finish(
        found,
        include_ended=include_ended,
        sigs=sigs,
        changed=changed,
        sessions=polled.unarmed,
        quiet=polled.quiet,
        stamps={f"{ref.provider}:{ref.run_id}": stamps.get(ref.run_id, "") for ref in refs},
        listing=runtime_stamp,
        warnings=warnings,
    )


def _poll_hooked(before: RunPoll, runtime: str, *, include_ended: bool) -> RunPoll:
    """The runs of ``before`` a hook appended to since, signed and read again."""
    from agentspool.spool.signature import spool_stamps

    armed = {key: s for key, s in before.runs.items() if s.run_id}
    now = spool_stamps(runtime, [s.run_id for s in armed.values()])
    moved = [key for key, s in armed.items() if now.get(s.run_id, "") != before.stamps.get(key)]
    if not moved:
        return msgspec.structs.replace(before, changed=[])
    found = dict(before.runs)
    sigs = dict(before.sigs)
    stamps = dict(before.stamps)
    changed: list[str] = []
    warnings = dict(before.warnings)
    for key in moved:
        run = armed[key]
        stamps[key] = now.get(run.run_id, "")
        try:
            sigs[key], found[key], read = _resign(before, key, run.provider, run.run_id, runtime)
        except UNREADABLE_RUN as exc:
            warnings[key] = unreadable_run(run.provider, run.run_id, exc)
            del found[key]
            sigs.pop(key, None)
            changed.append(key)
            continue
        warnings.pop(key, None)
        if read:
            changed.append(key)
    if not changed:
        return msgspec.structs.replace(before, sigs=sigs, stamps=stamps, changed=[])
    return _finish(
        found,
        include_ended=include_ended,
        sigs=sigs,
        changed=changed,
        sessions=before.sessions,
        quiet=before.quiet,
        stamps=stamps,
        listing=before.listing,
        warnings=warnings,
    )


def _resign(
    before: RunPoll, key: str, provider: str, run_id: str, runtime: str
) -> tuple[str, RunSummary, bool]:
    """One run's signature now, and its summary: read again if the signature moved since
    ``before`` (then ``True``), else the one ``before`` had."""
    from agentspool.core import runs

    sig = spool_sig(provider, run_id, runtime)
    summary = before.runs.get(key)
    if summary is not None and before.sigs.get(key) == sig:
        return sig, summary, False
    return sig, runs.summarize(provider, run_id, _read_run(provider, run_id, runtime)), True


def _finish(
    found: dict[str, RunSummary],
    *,
    include_ended: bool,
    sigs: dict[str, str],
    changed: list[str],
    sessions: dict[str, Session],
    quiet: list[str],
    stamps: dict[str, str],
    listing: str,
    warnings: dict[str, str],
) -> RunPoll:
    from agentspool.core import runs

    hidden = {k for k, s in found.items() if s.state == "ended"} | set(quiet)
    shown = [s for k, s in found.items() if include_ended or k not in hidden]
    return RunPoll(
        sigs=sigs,
        runs=found,
        listed=[run_key(s) for s in runs.by_urgency(shown)],
        changed=changed,
        sessions=sessions,
        quiet=quiet,
        stamps=stamps,
        listing=listing,
        warnings=warnings,
    )
