"""The usage-first parse (ADR 0043): what ``usage`` reads of files never read before,
parsed on every core, for one writer (``core/history.py``) to store.

Each file is read by its adapter's ``TranscriptHistory.usage_view``: the narrowest
reading of the format that still gives every response's usage as the full parse counts
it. ``full_usage_view`` is that reading for a format that allows nothing narrower: the
adapter's own full parse, of which only the records with usage are kept.

The files go to a pool of forked workers, one per core available, biggest first, each
worker taking the next file when it is done with one; each returns its ``UsageParse`` (a
few tuples per response) and the indexing process writes them as they come. Given a
``SessionFolder`` (a first ``usage``, ADR 0061), each file's rows are folded where they
were parsed too, and the fold is handed back beside them. Forked, the workers inherit
the adapters and start in milliseconds; under ``POOL_MIN_BYTES`` of work, or on one
core, the parse stays in process. A file a worker did not hand back — it failed, or the
worker died (killed, or by a mapped file cut short under it: ``disposable``) — is read
in process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import selectors
import signal
import struct
from collections.abc import Iterator
from typing import NoReturn

import msgspec

from agentspool.core.runs import prompt_title
from agentspool.core.seam import Adapter, KeptUsage, PackedUsage, ResumedParse, UsageView
from agentspool.core.store import UsageParse
from agentspool.core.store_rows import Span, encode_usage_rows
from agentspool.core.usage import SessionFold, SessionFolder
from agentspool.spool.errors import TranscriptReplacedError
from agentspool.spool.files import regular_fd

__all__ = ["POOL_MIN_BYTES", "disposable", "full_usage_view", "usage_parse", "usage_parses"]

CHUNK = 1 << 20
"""Bytes a full parse reads at a time: memory follows the block, not the file."""
POOL_MIN_BYTES = 8 << 20
"""Below this much to parse, a pool's start costs more than the second core gives."""


def full_usage_view(parse: ResumedParse, chunk: int = CHUNK) -> UsageView:
    """A fresh full parse (``resume_transcript(path, 0, b"")``) read to its end, of which
    only what ``usage`` reads is kept: the records with usage, with their ``seq`` (a
    record handed out again, its usage changed, replaces the first copy), the facts, the
    first prompt's title and the records' span (the first and the last record with a
    time, in file order: ADR 0057)."""
    kept: dict[int, KeptUsage] = {}
    title = ""
    span = Span()
    while True:
        before = parse.offset
        for m in parse.read(chunk):
            if not title:
                title = prompt_title(m)
            span.see(m.seq, m.timestamp)
            if m.usage is not None:
                usage = PackedUsage.of(m.usage)
                kept[m.seq] = KeptUsage(m.seq, m.timestamp, m.model, m.message_id, usage)
        if parse.offset == before:
            break
    first, last = span.stamps()
    return UsageView(
        rows=[kept[seq] for seq in sorted(kept)],
        facts=parse.facts(),
        first=first,
        last=last,
        title=title,
        count=parse.count,
    )


def usage_parse(
    adapter: Adapter, path: str, folder: SessionFolder | None = None
) -> tuple[UsageParse, SessionFold | None]:
    """``path``'s usage view with the file's stat as seen before the read (a later
    change makes the next run read it again), the usage encoded for the store; and its
    rows folded by ``folder``, if one is given.
    Raises ``TranscriptReplacedError`` if another file took its name meanwhile."""
    history = adapter.history
    assert history is not None  # the planner chose a file of an adapter that resumes
    with open(regular_fd(path), "rb", buffering=0) as fh:
        st = os.fstat(fh.fileno())
    view = history.usage_view(path)
    now = os.stat(path)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise TranscriptReplacedError(path)
    parsed = UsageParse(
        device=st.st_dev,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        count=view.count,
        rows=encode_usage_rows(view.rows),
        facts=view.facts,
        title=view.title,
        first=view.first,
        last=view.last,
    )
    return parsed, None if folder is None else folder.fold(view.rows)


_JOBS: list[tuple[Adapter, str]] = []
"""The usage-first parses of one run, read by the forked workers by index."""
_FOLDER: list[SessionFolder | None] = [None]
"""The run's folder, if it folds (read by the forked workers too)."""
_DISPOSABLE = False


def disposable() -> bool:
    """Whether this process is a forked worker of ``usage_parses``: one whose death loses
    nothing (its files are read again by the process that started it). A reader may then
    map a file instead of copying it in, though a file cut short meanwhile kills the
    process that maps it (SIGBUS)."""
    return _DISPOSABLE


_Parsed = tuple[int, UsageParse | BaseException, SessionFold | None]
"""A job's index, its parse or failure, and its fold."""


def _usage_job(n: int) -> _Parsed:
    adapter, path = _JOBS[n]
    try:
        return (n, *usage_parse(adapter, path, _FOLDER[0]))
    except Exception as exc:  # noqa: BLE001 - handed to the writer, which reports it
        return n, exc, None


def usage_parses(
    jobs: list[tuple[Adapter, str, int]],
    workers: int | None,
    folder: SessionFolder | None = None,
) -> Iterator[_Parsed]:
    """Each job's ``usage_parse`` (index into ``jobs``, result or failure, fold) as it
    finishes: on every core by forked workers (this process writes), the biggest files
    first; in this process when it is little or there is one core, and for the files a
    worker did not hand back (it failed them, or died)."""
    cores = workers if workers is not None else len(os.sched_getaffinity(0))
    total = sum(size for _, _, size in jobs)
    order = sorted(range(len(jobs)), key=lambda n: -jobs[n][2])
    _JOBS[:] = [(a, p) for a, p, _ in jobs]
    _FOLDER[0] = folder
    done: set[int] = set()
    try:
        if cores >= 2 and len(jobs) >= 2 and total >= POOL_MIN_BYTES:
            for n, parsed, fold in _forked(order, min(cores, len(jobs))):
                done.add(n)
                yield n, parsed, fold
        for n in order:
            if n not in done:
                yield _usage_job(n)
    finally:
        _JOBS.clear()
        _FOLDER[0] = None


_TICKET = struct.Struct("<I")
"""A job on the workers' shared queue: its index."""
_QUEUE_BYTES = 1 << 20
"""The most a pipe may hold without privileges (Linux's default pipe-max-size): the
queue's, and each worker's results'."""


def _queue(order: list[int]) -> int:
    """The read end of a pipe holding ``order``'s jobs, a ticket each, in order, its write
    end closed: each worker takes the next ticket when it is done with a file, so a
    worker slowed by the machine's other work takes fewer. A pipe's read is atomic and
    the pipe holds whole tickets only (written in multiples of 4 bytes), so a 4-byte
    read takes one ticket whole. Tickets that do not fit in the pipe's buffer are left
    out: done in this process."""
    read, write = os.pipe()
    try:
        tickets = struct.pack(f"<{len(order)}I", *order)
        _widen(write, min(len(tickets), _QUEUE_BYTES))
        os.set_blocking(write, False)
        for at in range(0, len(tickets), select.PIPE_BUF):
            os.write(write, tickets[at : at + select.PIPE_BUF])  # whole, or BlockingIOError
    except BlockingIOError:
        pass  # the pipe is full: the jobs after are this process's
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


_FRAME = struct.Struct("<I")
"""A worker's result on its pipe: its length, then ``(job, UsageParse, fold)`` as
msgpack."""
_HandedBack = tuple[int, UsageParse, SessionFold | None]
"""What a worker hands back of a job it parsed: its index, its parse, its fold."""
_decode_result = msgspec.msgpack.Decoder(_HandedBack).decode


def _forked(order: list[int], workers: int) -> Iterator[_HandedBack]:
    """The jobs parsed by ``workers`` forked workers sharing one queue (``_queue``), as
    they are handed back.

    A plain fork and a pipe per worker, not ``multiprocessing`` (~18 ms to import, a
    tenth of a first ``usage``): forked, a worker has the adapters and the jobs already.
    A worker hands back what it parsed; a job it failed, or one it never reached because
    it died, is not yielded (the caller does it in this process, and sees its failure
    there)."""
    children: dict[int, int] = {}  # a worker's pipe → its pid
    queue = _queue(order)
    try:
        for _ in range(workers):
            read, write = os.pipe()
            _widen(write)
            try:
                pid = os.fork()
            except OSError:  # no process to be had (EAGAIN): the others take its share
                os.close(read)
                os.close(write)
                break
            if pid == 0:
                os.close(read)
                _work(queue, write)
            os.close(write)
            children[read] = pid
        os.close(queue)
        queue = -1
        yield from _handed_back(list(children))
    finally:
        if queue >= 0:
            os.close(queue)
        for read, pid in children.items():
            os.close(read)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # one this process stopped reading from
            os.waitpid(pid, 0)


def _widen(pipe: int, size: int = _QUEUE_BYTES) -> None:
    """``pipe`` made to hold ``size`` bytes (Linux; elsewhere it keeps its default).

    A result pipe is as wide as an unprivileged process may make it (1 MB, not 64 KB): a
    worker then goes on to its next file while this process is held up — by an ``fsync``
    of the store's checkpoint (2-38 ms, several times a first ``usage``), or by the
    workers themselves on the two cores. With 64 KB pipes each worker waited 38-75 ms of a
    ~0.4 s first ``usage`` for its results to be read (ADR 0062)."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the default size
        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, size)


def _work(queue: int, pipe: int) -> NoReturn:
    """A worker's life: the jobs it takes from ``queue`` parsed, each result written to
    ``pipe``; then exit, without the parent's cleanup (its store connection, its
    buffered output)."""
    global _DISPOSABLE  # noqa: PLW0603 - set once, in the worker it describes
    _DISPOSABLE = True
    code = 0
    try:
        encode = msgspec.msgpack.Encoder().encode
        while len(ticket := os.read(queue, _TICKET.size)) == _TICKET.size:
            (n,) = _TICKET.unpack(ticket)
            _, parsed, fold = _usage_job(n)
            if isinstance(parsed, UsageParse):
                data = encode((n, parsed, fold))
                _write_all(pipe, _FRAME.pack(len(data)) + data)
    except BaseException:  # noqa: BLE001 - a worker only ends; the parent reads what is left
        code = 1
    os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _handed_back(pipes: list[int]) -> Iterator[_HandedBack]:
    """Every whole result on ``pipes``, as it arrives, until each worker has ended."""
    pending = {fd: bytearray() for fd in pipes}
    # Read into one buffer: a fresh 1 MB block for each ``os.read`` cost ~10 ms of this
    # process's CPU on 500 MB, taken from the workers' two cores (ADR 0062).
    scratch = bytearray(_QUEUE_BYTES)
    into = memoryview(scratch)
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        while pending:
            for key, _ in selector.select():
                fd = key.fd
                got = os.readv(fd, [scratch])
                if not got:
                    selector.unregister(fd)
                    del pending[fd]
                    continue
                held = pending[fd]
                held += into[:got]
                while len(held) >= _FRAME.size:
                    (size,) = _FRAME.unpack_from(held)
                    if len(held) < _FRAME.size + size:
                        break
                    yield _decode_result(held[_FRAME.size : _FRAME.size + size])
                    del held[: _FRAME.size + size]
