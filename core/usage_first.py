"""The usage-first parse (ADR 0043): what ``usage`` reads of files never read before,
parsed on every core, for one writer (``core/history.py``) to store.

Each file is read by its adapter's ``TranscriptHistory.usage_view``: the narrowest
reading of the format that still gives every response's usage as the full parse counts
it. ``full_usage_view`` is that reading for a format that allows nothing narrower: the
adapter's own full parse, of which only the records with usage are kept.

The files go to a pool of forked workers, one per core available, biggest first; each
returns its ``UsageParse`` (a few tuples per response) and the indexing process writes
them as they come. Forked, the workers inherit the adapters and start in milliseconds;
under ``POOL_MIN_BYTES`` of work, or on one core, the parse stays in process. A worker
that dies (killed, or by a mapped file cut short under it: ``disposable``) breaks the
pool; the files not done yet are then read in process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import msgspec

from agentspool.core.runs import prompt_title
from agentspool.core.seam import Adapter, ResumedParse, UsageView
from agentspool.core.store import UsageParse
from agentspool.core.store_rows import encode_usage_rows
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
    kept: dict[int, tuple[int, str, str, str, msgspec.Struct]] = {}
    title = ""
    first: tuple[int, str] | None = None  # (seq, timestamp): the span in file order
    last: tuple[int, str] | None = None
    while True:
        before = parse.offset
        for m in parse.read(chunk):
            if not title:
                title = prompt_title(m)
            stamp = m.timestamp
            if stamp:
                if first is None or m.seq < first[0]:
                    first = (m.seq, stamp)
                if last is None or m.seq >= last[0]:
                    last = (m.seq, stamp)
            if m.usage is not None:
                kept[m.seq] = (m.seq, stamp, m.model, m.message_id, m.usage)
        if parse.offset == before:
            break
    return UsageView(
        rows=[kept[seq] for seq in sorted(kept)],  # type: ignore[misc]
        facts=parse.facts(),
        first=first[1] if first else "",
        last=last[1] if last else "",
        title=title,
        count=parse.count,
    )


def usage_parse(adapter: Adapter, path: str) -> UsageParse:
    """``path``'s usage view with the file's stat as seen before the read (a later
    change makes the next run read it again), the usage encoded for the store.
    Raises ``TranscriptReplacedError`` if another file took its name meanwhile."""
    history = adapter.history
    assert history is not None  # the planner chose a file of an adapter that resumes
    with open(regular_fd(path), "rb", buffering=0) as fh:
        st = os.fstat(fh.fileno())
    view = history.usage_view(path)
    now = os.stat(path)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise TranscriptReplacedError(path)
    return UsageParse(
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


_JOBS: list[tuple[Adapter, str]] = []
"""The usage-first parses of one run, read by the pool's forked workers by index."""
_DISPOSABLE = False


def disposable() -> bool:
    """Whether this process is a pool worker of ``usage_parses``: one whose death loses
    nothing (its files are read again by the process that started it). A reader may then
    map a file instead of copying it in, though a file cut short meanwhile kills the
    process that maps it (SIGBUS)."""
    return _DISPOSABLE


def _in_a_worker() -> None:
    global _DISPOSABLE  # noqa: PLW0603 - set once, in the worker it describes
    _DISPOSABLE = True


def _usage_job(n: int) -> tuple[int, UsageParse | BaseException]:
    adapter, path = _JOBS[n]
    try:
        return n, usage_parse(adapter, path)
    except Exception as exc:  # noqa: BLE001 - handed to the writer, which reports it
        return n, exc


def usage_parses(
    jobs: list[tuple[Adapter, str, int]], workers: int | None
) -> Iterator[tuple[int, UsageParse | BaseException]]:
    """Each job's ``usage_parse`` (index into ``jobs``, result or failure) as it
    finishes: on every core by a pool of forked workers (this process writes), the
    biggest files first; in this process when it is little or there is one core, and for
    the files a worker did not finish when one died."""
    cores = workers if workers is not None else len(os.sched_getaffinity(0))
    total = sum(size for _, _, size in jobs)
    order = sorted(range(len(jobs)), key=lambda n: -jobs[n][2])
    _JOBS[:] = [(a, p) for a, p, _ in jobs]
    done: set[int] = set()
    try:
        if cores >= 2 and len(jobs) >= 2 and total >= POOL_MIN_BYTES:
            for result in _pooled(order, min(cores, len(jobs))):
                done.add(result[0])
                yield result
        for n in order:
            if n not in done:
                yield _usage_job(n)
    finally:
        _JOBS.clear()


def _pooled(order: list[int], workers: int) -> Iterator[tuple[int, UsageParse | BaseException]]:
    """The jobs' results from forked workers, as they finish; those of a pool that broke
    (a worker killed) stop there."""
    # Forked: the workers have the adapters already, and start in milliseconds.
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_in_a_worker
    )
    try:
        for future in as_completed([pool.submit(_usage_job, n) for n in order]):
            yield future.result()
    except BrokenProcessPool:
        return
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
