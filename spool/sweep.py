"""``sweep_spools``: collect the spools of runs outside the keep-set, and lose no record.

Guarantees (``tests/spool/test_sweep.py``, ``tests/spool/test_sweep_race.py``):

* never a run in ``keep``, nor one written within ``min_idle`` seconds (a live writer);
* no record is ever lost, whatever ``min_idle`` (ADR 0015): the sweep *takes* a run under
  the lock every append takes (``spool/write.py``), marks the dir, re-checks it and
  renames it to ``.trash-<run>-<pid>-<ns>``. An append that held the lock first keeps the
  run (busy); one that comes after sees the mark and is refused before it writes — the
  hook notes it in the runtime dir's ``faults.log`` and exits 0. So every record is in a
  kept run, in the archive, or was in the run when the sweep decided to remove it;
* never a half-deleted run: readers and ``spool_sig`` never look at dot-names, and the
  next sweep finishes any trash a crashed sweep left;
* one sweep at a time per runtime dir (a filelock, imported here only: its import
  alone costs ~50 ms, which hooks must never pay);
* idempotent: a second sweep with the same arguments removes nothing more;
* ``archive``: the run's evidence — ``events.spool``, its ledger (``ledger.spool``) and
  its ``provider`` file — is moved there first, into ``<archive>/<run>/<seconds>[.<n>]/``,
  a dir no other sweep made (never overwritten). An archived run is laid out like a run
  dir, so the ledger fold and ``replay`` read it as they read a live one (ADR 0018);
* ``select``: a caller that removes only some runs (``tidy``) is asked about each run
  outside ``keep`` under the sweep lock, after the stat the take re-checks: evidence
  written after its answer keeps the run (busy). ``_take`` locks the ledger as well as the
  spool, so a declaration racing the take is either seen or refused, never lost.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agentspool.spool.files import regular_fd
from agentspool.spool.layout import (
    DEFAULT_MIN_IDLE,
    PROVIDER_FILE,
    SWEEP_LOCK,
    TRASH_PREFIX,
    ensure_runtime_dir,
)
from agentspool.spool.signature import entry_stats
from agentspool.spool.write import EVENTS_FILE, LEDGER_FILE, SWEEP_MARK, run_id_problem

ARCHIVED_FILES = (EVENTS_FILE, LEDGER_FILE, PROVIDER_FILE)
"""What an archived run keeps: its evidence, its ledger and whose run it was."""
_LOCKED_FILES = (EVENTS_FILE, LEDGER_FILE)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# An open-file-description lock: a long-lived process that also reads the run (and closes
# its own descriptor on the spool) must not drop it, as it would a per-process POSIX
# lock. It conflicts with the POSIX ``lockf`` the hooks take. Linux ≥ 3.15.
_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", None)
_WHOLE_FILE_WRITE_LOCK = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)


@dataclass
class SweepReport:
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    """Not in the keep-set, but written within ``min_idle`` seconds, or written to while
    the sweep looked at it: left alone."""
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
    select: Callable[[str, str], bool] | None = None,
) -> SweepReport:
    """``select(run_id, run_path)``: when given, a run outside ``keep`` is removed only if
    it answers True (asked under the sweep lock, after the snapshot the take re-checks);
    a run it declines is reported ``kept``."""
    from filelock import FileLock

    runtime_dir = ensure_runtime_dir(runtime_dir)
    keep_set = set(keep)
    report = SweepReport(dry_run=dry_run)
    with FileLock(os.path.join(runtime_dir, SWEEP_LOCK)):
        for entry in sorted(os.scandir(runtime_dir), key=lambda e: e.name):
            name = entry.name
            if name.startswith(TRASH_PREFIX) and entry.is_dir(follow_symlinks=False):
                if not dry_run:
                    if archive is not None:
                        # A sweep stopped between the rename and the archive.
                        run = name[len(TRASH_PREFIX) :].rsplit("-", 2)[0]
                        _archive_run(entry.path, archive, run, int(time.time()))
                    shutil.rmtree(entry.path, ignore_errors=True)
                report.trash_finished += 1
                continue
            if run_id_problem(name) is not None or not entry.is_dir(follow_symlinks=False):
                continue  # not a run: lock file, fault log, anything foreign
            if name in keep_set:
                report.kept.append(name)
                if not dry_run:
                    _clear_mark(entry.path)
                continue
            clock = time.time() if now is None else now
            # Sizes too, not just mtimes: an append moves the size even within one timestamp tick.
            before = entry_stats(entry.path, hidden=True)
            seen = max([os.lstat(entry.path).st_mtime_ns, *(e[2] for e in before)]) / 1e9
            if clock - seen < min_idle:
                report.busy.append(name)
                if not dry_run:
                    _clear_mark(entry.path)
                continue
            if select is not None and not select(name, entry.path):
                report.kept.append(name)
                if not dry_run:
                    _clear_mark(entry.path)
                continue
            if dry_run:
                report.removed.append(name)
                continue
            # Unique per attempt: a trash a crashed sweep left behind must not block this one.
            trash = os.path.join(
                runtime_dir, f"{TRASH_PREFIX}{name}-{os.getpid()}-{time.monotonic_ns()}"
            )
            if not _take(entry.path, before, trash):
                report.busy.append(name)
                continue
            if archive is not None and _archive_run(trash, archive, name, int(clock)):
                report.archived.append(name)
            shutil.rmtree(trash, ignore_errors=True)
            report.removed.append(name)
    return report


def _take(path: str, before: list[tuple[str, int, int, int]], trash: str) -> bool:
    """Rename the run at ``path`` to ``trash`` if nothing was written since ``before``.

    Under the spool's lock: no append is in flight, and none can start before the mark
    is on the dir; every append after checks the mark under the same lock and refuses.
    A write between the idle check and the lock shows in the re-check and keeps the run.
    """
    dir_fd = os.open(path, _DIR_FLAGS)
    try:
        locked: list[int] = []
        try:
            for name in _LOCKED_FILES:
                fd = _open_spool(dir_fd, name)
                if fd < 0:
                    continue
                locked.append(fd)
                if not _lock_nowait(fd):
                    return False  # an append holds the lock: the run is being written
            mode = stat.S_IMODE(os.fstat(dir_fd).st_mode) & ~SWEEP_MARK
            os.fchmod(dir_fd, mode | SWEEP_MARK)
            try:
                if entry_stats(path, hidden=True) == before:
                    os.rename(path, trash)
                    return True
            except BaseException:
                os.fchmod(dir_fd, mode)
                raise
            os.fchmod(dir_fd, mode)
            return False
        finally:
            for fd in locked:
                os.close(fd)  # releases the lock: waiting appends now see the mark
    finally:
        os.close(dir_fd)


def _open_spool(dir_fd: int, name: str = EVENTS_FILE) -> int:
    """A write descriptor on the run's spool (to lock it), or -1 where no append can
    open it either: missing (the first append creates it after the mark is set, and so
    refuses), unreadable to us, or a symlink (appends never follow one)."""
    try:
        return os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except (FileNotFoundError, PermissionError):
        return -1
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return -1
        raise


def _lock_nowait(fd: int) -> bool:
    try:
        if _OFD_SETLK is None:
            # No OFD locks (not Linux): a per-process lock, which a close of another
            # descriptor on this spool in this process would drop (ADR 0015).
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            fcntl.fcntl(fd, _OFD_SETLK, _WHOLE_FILE_WRITE_LOCK)
    except (BlockingIOError, PermissionError):  # EAGAIN / EACCES: held by an append
        return False
    return True


def _clear_mark(path: str) -> None:
    """A mark on a run that stays is what a sweep that crashed mid-take left: clear it,
    or every append to the run would be refused."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    try:
        mode = os.fstat(fd).st_mode
        if mode & SWEEP_MARK:
            os.fchmod(fd, stat.S_IMODE(mode) & ~SWEEP_MARK)
    finally:
        os.close(fd)


def _archive_run(taken: str, archive: str, run: str, seconds: int) -> bool:
    """Move the evidence of the run dir ``taken`` (a trash dir) into a new dir
    ``<archive>/<run>/<seconds>[.<n>]``; False if it held none. Never into a dir that
    exists: the same run id can be set up and swept again within the same second, and
    two runtime dirs may share one archive (``mkdir`` is the exclusive claim)."""
    present = [name for name in ARCHIVED_FILES if _is_file(os.path.join(taken, name))]
    if not present:
        return False
    history = os.path.join(archive, run)
    os.makedirs(history, mode=0o700, exist_ok=True)
    n = 0
    while True:
        target = os.path.join(history, f"{seconds}.{n}" if n else str(seconds))
        n += 1
        try:
            os.mkdir(target, 0o700)
        except FileExistsError:
            continue
        break
    for name in present:
        _move_exclusive(os.path.join(taken, name), os.path.join(target, name))
    return True


def _move_exclusive(source: str, target: str) -> None:
    """Move ``source`` to ``target``, which must not exist: a hard link where it can
    (refuses an existing name, which rename would replace), else an exclusive copy."""
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:  # another filesystem, or no hard links there
        _copy_exclusive(source, target)
    os.unlink(source)


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _copy_exclusive(src: str, target: str) -> None:
    with open(regular_fd(src, nofollow=True), "rb") as source:  # a FIFO must not block
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with open(fd, "wb") as out:
                shutil.copyfileobj(source, out)
        except BaseException:
            os.unlink(target)  # a half copy is no archive; the spool stays in the trash
            raise
