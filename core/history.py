"""The history index: every transcript on the machine, ingested into a ``SessionStore``
incrementally (ADR 0022).

Each adapter names its CLI's transcript files (``TranscriptHistory.transcript_files``;
an adapter without that capability, its ``sessions(0.0)``). Per file the store keeps a
cursor — device, inode, size and mtime as last seen, the byte offset parsed up to, a
fingerprint of the bytes before it, the adapter's parse state — and a run decides from
it, per file:

``unchanged``  same device, inode, size and mtime: not opened.
``appended``   same file, grown, and the bytes before the offset are the ones parsed
               (the fingerprint: a digest of the first and the last ``FINGERPRINT``
               bytes before it): parsed from the offset with the saved state, so it
               costs what was appended.
``rewritten``  replaced (another inode), truncated (smaller than the offset), rewritten
               (the fingerprint differs), compressed (read whole), an adapter that
               cannot resume, or a state this version cannot use: parsed again from
               the first byte; what the new parse does not hold any more is removed.
``new``        never seen: parsed from the first byte.
``gone``       ingested before, and the file is no longer there: the session and its
               records stay (the CLIs delete old transcripts; the history keeps them),
               marked ``gone``; ``forget_gone`` removes them instead.

A file first seen at a path that has the device and inode of one no longer at its own
path, and the bytes that one's cursor parsed (its fingerprint), was renamed: its session
is moved to the new path and then judged as above (usually ``unchanged``). A CLI may
archive a session by renaming its transcript into another folder, and rename it back to
unarchive: read as a new file, its usage would count twice.

One file is one transaction: its records (and their search rows), its session's facts
and its cursor are committed together, so an indexer killed at any point loses nothing
and duplicates nothing — the next run finds the old cursor and does that file again.
A big file is parsed and written in blocks of ``CHUNK`` bytes within its transaction:
memory follows the block, not the file. Runs are serialized by a lock file beside the
store; readers (search, show, usage) never wait.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Literal, NamedTuple

import msgspec

from agentspool.core.seam import (
    Adapter,
    Message,
    ResumedParse,
    Session,
    TranscriptFacts,
    TranscriptFile,
    TranscriptGoneError,
)
from agentspool.core.store import FileCursor, SessionStore
from agentspool.core.usage import SessionFolder
from agentspool.core.usage_first import usage_parses
from agentspool.spool.errors import TranscriptReplacedError
from agentspool.spool.files import regular_fd

__all__ = ["CHUNK", "FINGERPRINT", "IndexReport", "index_file", "index_history"]

CHUNK = 1 << 20
"""Bytes parsed (and written) at a time within a file's transaction."""
FINGERPRINT = 4096
"""Bytes at each end of the parsed part that the fingerprint covers."""

Verdict = Literal["new", "appended", "rewritten", "unchanged"]
Progress = Callable[[int, int], None]
"""``progress(bytes done, bytes to read)``, after each block."""


class IndexReport(msgspec.Struct, kw_only=True):
    """What one run of the indexer did (``agentspool index --json``)."""

    files: int = 0
    """Transcript files seen."""
    new: int = 0
    appended: int = 0
    rewritten: int = 0
    unchanged: int = 0
    gone: int = 0
    """Files ingested before that are no longer there (found so in this run)."""
    moved: int = 0
    """Files found renamed, their sessions moved with them (also counted above by what
    they needed: usually ``unchanged``)."""
    forgotten: int = 0
    """Sessions removed because their file is gone (``forget_gone``)."""
    failed: int = 0
    """Files that could not be read; ``errors`` says why, one line each."""
    records: int = 0
    """Record rows written (inserted, changed or removed)."""
    bytes_read: int = 0
    seconds: float = 0.0
    busy: bool = False
    """Another indexer held the store: this run did nothing (``wait=False``)."""
    errors: list[str] = []
    tightened: str = ""
    """The store was readable by others and was made private (``SessionStore.tightened``:
    what its mode was)."""


class _Planned(msgspec.Struct, kw_only=True):
    adapter: Adapter
    file: TranscriptFile
    session: Session | None
    """For an adapter without resumable parsing: what ``read_session`` reads."""
    estimate: int
    """Bytes this file should cost (for the progress bar)."""


def _fingerprint(fd: int, offset: int) -> bytes:
    head = os.pread(fd, min(FINGERPRINT, offset), 0)
    start = max(0, offset - FINGERPRINT)
    tail = os.pread(fd, offset - start, start)
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every command)

    return hashlib.blake2b(head + b"\0" + tail, digest_size=16).digest()


class _SharedStat(NamedTuple):
    """The stat a transcript kept in shared files (``TranscriptFile.within``) is known
    by: the first file's identity, and a size and mtime that move when any one does —
    or, when the CLI keeps a version of the session, that version as the size (and no
    mtime): other sessions' changes to the shared files leave it unchanged."""

    st_dev: int
    st_ino: int
    st_size: int
    st_mtime_ns: int


Stat = os.stat_result | _SharedStat


def _stat(file: TranscriptFile) -> Stat:
    """The file's stat; for a transcript kept in shared files, theirs (``OSError`` when
    the first of them is gone). A further one that is missing or empty holds nothing:
    left out (a reader of a database can create its empty write-ahead log)."""
    if not file.within:
        return os.stat(file.path)
    first = os.stat(file.within[0])
    if file.version:
        return _SharedStat(first.st_dev, first.st_ino, file.version, 0)
    stats = [first]
    for path in file.within[1:]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        if st.st_size:
            stats.append(st)
    return _SharedStat(
        first.st_dev,
        first.st_ino,
        sum(st.st_size for st in stats),
        max(st.st_mtime_ns for st in stats),
    )


@contextmanager
def _opened(file: TranscriptFile) -> Iterator[int | None]:
    """The transcript file open for reading; ``None`` for one kept in shared files (its
    adapter reads it)."""
    if file.within:
        yield None
        return
    with open(regular_fd(file.path), "rb", buffering=0) as fh:
        yield fh.fileno()


def _identity(st: Stat) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _resumes(adapter: Adapter) -> bool:
    return adapter.history is not None


class _WholeSession:
    """An adapter without resumable parsing: its ``read_session``, whole (``fresh``) —
    with its subagents' records where the adapter reads them with the session
    (``discovery.read_session_with_subagents``): a CLI that keeps a subagent's conversation as a
    session of its own, not a file, has no file for the index to list."""

    fresh = True

    def __init__(self, adapter: Adapter, session: Session, size: int) -> None:
        self._adapter = adapter
        self._session = session
        self._size = size
        self.offset = 0
        self.count = 0
        self._facts = TranscriptFacts()

    def read(self, limit: int) -> list[Message]:
        if self.offset:
            return []
        discovery = self._adapter.discovery
        if discovery is not None:
            chat = discovery.read_session_with_subagents(self._session)
        else:
            chat = self._adapter.read_chat(
                self._session.session_id, "", self._session.transcript_path
            )
        self.offset = max(self._size, 1)
        self.count = len(chat.messages)
        self._facts = TranscriptFacts(
            session_id=chat.transcript_id or self._session.session_id,
            cwd=chat.cwd or self._session.cwd,
        )
        return chat.messages

    def state(self) -> bytes:
        return b""

    def facts(self) -> TranscriptFacts:
        return self._facts


def _decide(cursor: FileCursor | None, st: Stat, *, resumable: bool, fd: int | None) -> Verdict:
    """What a file needs (module docstring); ``fd`` given: check the fingerprint too."""
    if cursor is None:
        return "new"
    if (cursor.device, cursor.inode) != _identity(st):
        return "rewritten"
    if (cursor.size, cursor.mtime_ns) == (st.st_size, st.st_mtime_ns):
        return "unchanged"
    if not resumable or st.st_size < cursor.offset:
        return "rewritten"
    if fd is not None and _fingerprint(fd, cursor.offset) != cursor.fingerprint:
        return "rewritten"
    return "appended"


def index_file(
    store: SessionStore,
    adapter: Adapter,
    file: TranscriptFile,
    *,
    session: Session | None = None,
    chunk: int = CHUNK,
    on_block: Callable[[int], None] | None = None,
) -> tuple[Verdict, int]:
    """Bring one transcript file's session in ``store`` up to date, in one transaction;
    return what it needed and the bytes read. ``session``: for an adapter without
    resumable parsing, what its ``read_session`` reads (default: the file, no session
    id). ``on_block(bytes)`` after each block parsed."""
    path = file.path
    resumable = _resumes(adapter) and not file.whole and not file.within
    with store.ingest(path, adapter.name) as ingest, _opened(file) as fd:
        st = os.fstat(fd) if fd is not None else _stat(file)
        verdict = _decide(ingest.cursor, st, resumable=resumable, fd=fd)
        if verdict == "unchanged":
            return verdict, 0
        parse: ResumedParse | _WholeSession
        history = adapter.history
        if history is not None and (resumable or file.whole):
            cursor = ingest.cursor
            if verdict == "appended" and cursor is not None:
                parse = history.resume_transcript(path, cursor.offset, cursor.state)
            else:
                parse = history.resume_transcript(path, 0, b"")
        else:
            session = session or Session(session_id="", transcript_path=path)
            parse = _WholeSession(adapter, session, st.st_size)
        if parse.fresh:
            ingest.start_over()
            if verdict == "appended" and ingest.cursor is not None and ingest.cursor.offset:
                verdict = "rewritten"  # a state this adapter could not resume from
        read = 0
        while True:
            before = parse.offset
            ingest.write(parse.read(chunk))
            if parse.offset == before:
                break
            read += parse.offset - before
            if on_block is not None:
                on_block(parse.offset - before)
        if _identity(_stat(file)) != _identity(st):
            raise TranscriptReplacedError(path)
        offset = parse.offset
        ingest.finish(
            count=parse.count,
            facts=parse.facts(),
            cursor=FileCursor(
                device=st.st_dev,
                inode=st.st_ino,
                # As seen before the parse: what was appended while it ran (maybe read
                # already, maybe not) makes the next run look again.
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                offset=offset,
                fingerprint=b""
                if fd is None
                else _fingerprint(fd, min(offset, os.fstat(fd).st_size)),
                state=parse.state(),
            ),
        )
    return verdict, read


@contextmanager
def _run_lock(store: SessionStore, *, wait: bool) -> Iterator[bool]:
    """One indexer per store at a time (a lock file beside it); yields whether held."""
    if store.path == ":memory:":
        yield True
        return
    fd = os.open(store.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def _holders(session: Session) -> tuple[str, ...]:
    if os.path.isfile(session.transcript_path):
        return ()
    return session.watched


class _Tracked:
    """The files of one adapter the store holds cursors for, as the run goes: path →
    (session, cursor, gone), and by device and inode to find a renamed one."""

    def __init__(self, store: SessionStore, provider: str) -> None:
        self.store = store
        self.by_path = store.cursors(provider)
        self._by_identity: dict[tuple[int, int], list[str]] | None = None

    def moved_here(self, path: str, st: Stat) -> tuple[int, FileCursor, bool] | None:
        """The cursor of a tracked file that was renamed to ``path`` (module docstring),
        its session moved to ``path`` in the store; ``None`` if there is none."""
        if self._by_identity is None:
            self._by_identity = {}
            for known, (_, cursor, _) in self.by_path.items():
                identity = (cursor.device, cursor.inode)
                self._by_identity.setdefault(identity, []).append(known)
        for old in self._by_identity.get(_identity(st), ()):
            session, cursor, _ = self.by_path[old]
            if os.path.lexists(old) or not _same_bytes(path, cursor):
                continue
            if not self.store.move(session, path):
                return None
            del self.by_path[old]
            self._by_identity[_identity(st)].remove(old)
            self.by_path[path] = (session, cursor, False)
            return self.by_path[path]
        return None


def _same_bytes(path: str, cursor: FileCursor) -> bool:
    """Whether ``path`` holds, up to the cursor's offset, the bytes it parsed (an inode
    freed by a deleted file and taken by a new one does not)."""
    try:
        with open(regular_fd(path), "rb", buffering=0) as fh:
            fd = fh.fileno()
            if os.fstat(fd).st_size < cursor.offset:
                return False
            return _fingerprint(fd, cursor.offset) == cursor.fingerprint
    except OSError:
        return False


def _discover(adapter: Adapter) -> list[tuple[TranscriptFile, Session | None]]:
    if adapter.history is not None:
        return [(f, None) for f in adapter.history.transcript_files()]
    if adapter.discovery is not None:
        # A transcript that is no file of its own lives in the files its session watches.
        return [
            (TranscriptFile(path=s.transcript_path, within=_holders(s), version=s.version), s)
            for s in adapter.discovery.sessions(0.0)
            if s.transcript_path
        ]
    return []


def index_history(
    store: SessionStore,
    adapters: Sequence[Adapter],
    *,
    chunk: int = CHUNK,
    progress: Callable[[int, int], None] | None = None,
    forget_gone: bool = False,
    wait: bool = True,
    usage_first: bool = False,
    workers: int | None = None,
    folder: SessionFolder | None = None,
) -> IndexReport:
    """Bring ``store`` up to date with every transcript the adapters find (module
    docstring). ``wait=False``: if another indexer runs, do nothing (``busy``) — unless
    a usage-first run left records to write, which this run (not ``usage_first``) must
    finish: then it waits.

    ``usage_first`` (what ``usage`` runs, ADR 0043): a file never read before is read
    on every core (``workers`` processes, default one per core) through its adapter's
    usage view, and only its records with usage and its session's facts are stored;
    its records and their search rows are written by the next run that is not
    ``usage_first``. Files read before are brought up to date as always. ``folder``: a
    usage-first file's rows are folded where they are parsed too, the fold kept in
    ``folder.folded`` under the file's id in the store (a first ``usage``, ADR 0061)."""
    started = time.monotonic()
    report = IndexReport(tightened=store.tightened)
    if not usage_first and store.has_pending():
        wait = True  # search and show need every record: finish what usage left
    with _run_lock(store, wait=wait) as held:
        if not held:
            report.busy = True
            return report
        plan = _Plan()
        for adapter in adapters:
            _plan_adapter(store, adapter, plan, report, usage_first=usage_first)
        total = sum(p.estimate for p in plan.files) + sum(size for _, _, size in plan.usage)
        done = 0

        def on_block(size: int) -> None:
            nonlocal done
            done += size
            if progress is not None:
                progress(min(done, total), total)

        if progress is not None:
            progress(0, total)
        _write_usage_first(store, plan.usage, workers, report, on_block, folder=folder)
        for item in plan.files:
            _write_planned(
                store, item, chunk=chunk, report=report, on_block=on_block, gone=plan.gone
            )
        if plan.gone:
            report.gone = len(plan.gone)
            store.mark_gone(plan.gone)
        if forget_gone:
            doomed = [s.id for s in store.sessions() if s.gone and s.path]
            store.forget(doomed)
            report.forgotten = len(doomed)
        if folder is not None:
            folder.generation = store.generation()
    report.seconds = round(time.monotonic() - started, 3)
    return report


class _Plan:
    """What one run will do: the files to index, the files to read usage-first (adapter,
    path, size), and the sessions whose file is gone."""

    def __init__(self) -> None:
        self.files: list[_Planned] = []
        self.usage: list[tuple[Adapter, str, int]] = []
        self.gone: list[int] = []


def _plan_adapter(
    store: SessionStore, adapter: Adapter, plan: _Plan, report: IndexReport, *, usage_first: bool
) -> None:
    """Judge every file the adapter lists against what the store holds of it."""
    tracked = _Tracked(store, adapter.name)
    pending = store.pending(adapter.name)
    shared: set[str] = set()  # transcripts kept in shared files, listed this run
    for file, session in _discover(adapter):
        report.files += 1
        if file.within:
            shared.add(file.path)
        try:
            st = _stat(file)
        except OSError:
            continue  # gone since it was listed: found gone below
        if isinstance(st, os.stat_result) and not stat.S_ISREG(st.st_mode):
            # A FIFO named like a transcript would block the open for ever.
            report.failed += 1
            report.errors.append(f"{file.path}: not a regular file")
            continue
        known = tracked.by_path.get(file.path)
        if known is None and not file.within:
            known = tracked.moved_here(file.path, st)
            if known is not None:
                report.moved += 1
        cursor = known[1] if known is not None else None
        resumable = _resumes(adapter) and not file.whole and not file.within
        if usage_first and resumable and cursor is None:
            seen = pending.get(file.path)
            if seen is not None and seen[1] == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
                report.unchanged += 1
            else:
                plan.usage.append((adapter, file.path, st.st_size))
            continue
        verdict = _decide(cursor, st, resumable=resumable, fd=None)
        if verdict == "unchanged":
            report.unchanged += 1
            continue
        estimate = st.st_size - (cursor.offset if verdict == "appended" and cursor else 0)
        plan.files.append(_Planned(adapter=adapter, file=file, session=session, estimate=estimate))
    # A file not listed any more may still be there (listed from another config dir,
    # say): only one that is not there is gone. A transcript kept in shared files is
    # there as long as it is listed.
    for known_files, kept in ((tracked.by_path, shared), (pending, set())):
        plan.gone += [
            key
            for path, (key, _, was_gone) in known_files.items()
            if not was_gone and path not in kept and not os.path.exists(path)
        ]


def _write_usage_first(
    store: SessionStore,
    jobs: list[tuple[Adapter, str, int]],
    workers: int | None,
    report: IndexReport,
    on_block: Callable[[int], None],
    *,
    folder: SessionFolder | None,
) -> None:
    """Store each file's usage view as the pool hands it back (one transaction each),
    and keep its fold in ``folder``."""
    for n, parsed, fold in usage_parses(jobs, workers, folder):
        adapter, path, size = jobs[n]
        if isinstance(parsed, (FileNotFoundError, TranscriptGoneError)):
            continue  # gone since it was listed: never ingested, nothing to mark
        if isinstance(parsed, OSError):
            report.failed += 1
            report.errors.append(f"{path}: {parsed}")
            continue
        if isinstance(parsed, BaseException):
            raise parsed
        before = store.changes
        session = store.ingest_usage(path, adapter.name, parsed)
        if folder is not None and fold is not None:
            folder.folded[session] = fold
        report.records += store.changes - before
        report.bytes_read += size
        report.new += 1
        on_block(size)


def _write_planned(
    store: SessionStore,
    item: _Planned,
    *,
    chunk: int,
    report: IndexReport,
    on_block: Callable[[int], None],
    gone: list[int],
) -> None:
    """Index one planned file; a file gone meanwhile joins ``gone``."""
    before = store.changes
    try:
        verdict, read = index_file(
            store, item.adapter, item.file, session=item.session, chunk=chunk, on_block=on_block
        )
    except (FileNotFoundError, TranscriptGoneError):
        key = store.cursors(item.adapter.name).get(item.file.path)
        if key is not None and not key[2]:
            gone.append(key[0])
        return
    except OSError as exc:
        report.failed += 1
        report.errors.append(f"{item.file.path}: {exc}")
        return
    report.records += store.changes - before
    report.bytes_read += read
    if verdict == "new":
        report.new += 1
    elif verdict == "appended":
        report.appended += 1
    elif verdict == "rewritten":
        report.rewritten += 1
    else:
        report.unchanged += 1
