"""``sweep_spools``: collect the spools of runs outside the keep-set, safely.

Guarantees (``tests/spool/test_sweep.py``):

* never a run in ``keep``, nor one written within ``min_idle`` seconds (a live writer);
* never a half-deleted run: a run is first renamed to ``.trash-<run>-<pid>-<ns>`` in one
  atomic step, re-checked, then deleted; readers and ``spool_sig`` never look at
  dot-names, and the next sweep finishes any trash a crashed (or raced) sweep left;
* a write that lands between the idle check and the rename (seen by the re-check:
  any entry's name, size, mtime or inode changed) puts the run back, whole;
* a hook racing the removal never fails: one that finds its run gone exits 0 and
  notes the fault in the runtime dir's ``faults.log``.

``min_idle`` is what "still being written" means. A sweep cannot see a hook that opens
the run dir after the re-check: with ``min_idle=0`` the caller asserts the runs outside
``keep`` are dead, and a record written in that last instant goes with its run.
* one sweep at a time per runtime dir (a filelock, imported here only: its import
  alone costs ~50 ms, which hooks must never pay);
* idempotent: a second sweep with the same arguments removes nothing more;
* ``archive``: the run's ``events.spool`` is moved there first, for replay history.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentspool.spool.layout import DEFAULT_MIN_IDLE, SWEEP_LOCK, TRASH_PREFIX, ensure_runtime_dir
from agentspool.spool.signature import entry_stats
from agentspool.spool.write import EVENTS_FILE, run_id_problem


@dataclass
class SweepReport:
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    """Not in the keep-set, but written within ``min_idle`` seconds: left alone."""
    archived: list[str] = field(default_factory=list)
    trash_finished: int = 0
    dry_run: bool = False


def sweep_spools(
    runtime_dir: str,
    keep: Iterable[str],
    *,
    min_idle: float = DEFAULT_MIN_IDLE,
    dry_run: bool = False,
    archive: str | None = None,
    now: float | None = None,
) -> SweepReport:
    from filelock import FileLock

    runtime_dir = ensure_runtime_dir(runtime_dir)
    keep_set = set(keep)
    report = SweepReport(dry_run=dry_run)
    with FileLock(os.path.join(runtime_dir, SWEEP_LOCK)):
        for entry in sorted(os.scandir(runtime_dir), key=lambda e: e.name):
            name = entry.name
            if name.startswith(TRASH_PREFIX) and entry.is_dir(follow_symlinks=False):
                if not dry_run:
                    shutil.rmtree(entry.path, ignore_errors=True)
                report.trash_finished += 1
                continue
            if run_id_problem(name) is not None or not entry.is_dir(follow_symlinks=False):
                continue  # not a run: lock file, fault log, anything foreign
            if name in keep_set:
                report.kept.append(name)
                continue
            clock = time.time() if now is None else now
            # Sizes too, not just mtimes: an append moves the size even within one timestamp tick.
            before = entry_stats(entry.path, hidden=True)
            seen = max([os.lstat(entry.path).st_mtime_ns, *(e[2] for e in before)]) / 1e9
            if clock - seen < min_idle:
                report.busy.append(name)
                continue
            if dry_run:
                report.removed.append(name)
                continue
            # Unique per attempt: a trash a raced rmtree left behind must not block this one.
            trash = os.path.join(
                runtime_dir, f"{TRASH_PREFIX}{name}-{os.getpid()}-{time.monotonic_ns()}"
            )
            os.rename(entry.path, trash)
            # A hook that opened the run dir just before the rename wrote into the trash:
            # that run is alive after all, so put it back.
            if entry_stats(trash, hidden=True) != before:
                os.rename(trash, entry.path)
                report.busy.append(name)
                continue
            if archive is not None:
                spool = os.path.join(trash, EVENTS_FILE)
                if os.path.exists(spool):
                    os.makedirs(archive, mode=0o700, exist_ok=True)
                    shutil.move(spool, os.path.join(archive, f"{name}.{int(clock)}.spool"))
                    report.archived.append(name)
            # A hook that opened the dir before the rename can still create a file in it
            # while rmtree runs (ENOTEMPTY); the trash then waits for the next sweep.
            shutil.rmtree(trash, ignore_errors=True)
            report.removed.append(name)
    return report
