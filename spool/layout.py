"""Where runs live under the runtime dir, the rules for run ids, and which dirs we trust.

Not on the hook path (``spool/write.py`` is), but cheap to import all the same:
standard library ``errno``, ``os`` and ``stat`` only.

Two sides, one rule (ADR 0013): a runtime dir or run dir is **private** when it is a
real directory (not a symlink), owned by this user, and neither group nor others can
write to it. ``setup`` creates dirs that way and tightens a merely loose mode of its own
dir; readers (``open_run_dir_to_read``) refuse anything else and create or repair
nothing, so a spool planted by another account is never believed.
"""

from __future__ import annotations

import errno
import os
import stat

from agentspool.spool import write
from agentspool.spool.errors import RunIdError, RuntimeDirError
from agentspool.spool.write import SWEEP_MARK, run_id_problem

SWEEP_LOCK = ".sweep.lock"
DEFAULT_MIN_IDLE = 600.0
"""The sweep never removes a run whose spool was written this recently (seconds)."""
TRASH_PREFIX = ".trash-"
PROVIDER_FILE = write.PROVIDER_FILE
HOOK_FAILURES = "hook-failures.log"
"""In the runtime dir: one line per hook that could not run agentspool's hook at all
(the hook command's bootstrap writes it, ``agentspool doctor`` reads it)."""

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it can only ever name one directory below the runtime dir."""
    problem = run_id_problem(run_id)
    if problem is not None:
        raise RunIdError(run_id, problem)
    return run_id


def default_runtime_dir() -> str:
    """``$AGENTSPOOL_RUNTIME_DIR``, else the XDG per-user runtime dir, else a tmp dir —
    the rule installed hooks also follow when they create a run (``spool.write``)."""
    return write.default_runtime_dir(dict(os.environb))


def private_dir_problem(st: os.stat_result) -> str | None:
    """Why the directory ``st`` describes could hold evidence another account planted."""
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    return foreign_write_problem(st)


def foreign_write_problem(st: os.stat_result) -> str | None:
    """Why the file or dir ``st`` describes may hold what another account wrote."""
    if st.st_uid != os.getuid():
        return f"is owned by uid {st.st_uid}, not {os.getuid()}"
    if st.st_mode & 0o022:
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _open_problem(path: str, dir_fd: int | None, exc: OSError) -> str:
    """What ``os.open(path, DIR_FLAGS)`` failing with ``exc`` means, in words."""
    # O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR on Linux, ELOOP elsewhere.
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        try:
            if stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode):
                return "is a symlink"
        except OSError:
            pass
        return "is not a directory"
    return f"cannot be opened: {exc.strerror}"


def ensure_runtime_dir(path: str) -> str:
    """Create ``path`` (0700) if missing; refuse one that is not private to this user.

    Refuses a symlink, a non-directory, another user's directory and a directory that
    group or others can write to: any of them would let another account plant or read
    evidence. Our own dir with a merely loose mode (group/others may read) is tightened.
    """
    path = os.path.abspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise RuntimeDirError(path, f"cannot create: {exc.strerror}") from exc
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError as exc:
        raise RuntimeDirError(path, _open_problem(path, None, exc)) from None
    try:
        st = os.fstat(fd)
        problem = private_dir_problem(st)
        if problem is not None:
            raise RuntimeDirError(path, problem)
        if st.st_mode & 0o077:
            # Our own dir with a loose mode (an old umask): tighten it, it holds evidence.
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return path


def run_dir(runtime_dir: str, run_id: str) -> str:
    return os.path.join(runtime_dir, check_run_id(run_id))


def ensure_run_dir(runtime_dir: str, run_id: str) -> str:
    """The run's directory, created 0700 inside a checked runtime dir."""
    path = run_dir(ensure_runtime_dir(runtime_dir), run_id)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise RuntimeDirError(path, "exists and is not this user's directory") from None
        if st.st_mode & (0o077 | SWEEP_MARK):
            # Hooks refuse a run dir others can reach, or one a sweep marked (ADR 0015);
            # re-arming a run must not leave one that silently records nothing.
            os.chmod(path, 0o700)
    return path


def open_run_dir_to_read(runtime_dir: str, run_id: str) -> int | None:
    """A descriptor on the run's dir, for reading its evidence; ``None`` when the runtime
    dir or the run dir does not exist (nothing armed yet, or swept).

    Raises ``RuntimeDirError`` for either dir that is not private (``private_dir_problem``,
    or a symlink). The check is made on the opened descriptors, the run dir opened
    relative to the checked runtime dir, so the dir read is the dir checked: renaming
    another in between cannot substitute it. Creates and repairs nothing: a reader that
    tightened a mode would bless whatever was planted while it was loose.
    """
    return open_checked_run_dir(runtime_dir, check_run_id(run_id))


def open_checked_run_dir(runtime_dir: str, run_id: str) -> int | None:
    """``open_run_dir_to_read`` for a ``run_id`` its caller has already checked
    (``check_run_id``): a reader that opens the same run dir at every refresh checks
    the name once."""
    # A trailing slash would make the kernel follow a symlinked runtime dir.
    root = _open_checked(
        runtime_dir.rstrip("/") or ("/" if runtime_dir else "."), None, runtime_dir, ""
    )
    if root is None:
        return None
    try:
        return _open_checked(run_id, root, runtime_dir, f"run dir {run_id} ")
    finally:
        os.close(root)


def _open_checked(path: str, dir_fd: int | None, runtime_dir: str, what: str) -> int | None:
    try:
        fd = os.open(path, DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        failure = _open_problem(path, dir_fd, exc)
        raise RuntimeDirError(os.path.abspath(runtime_dir), f"{what}{failure}; refused") from None
    problem = private_dir_problem(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        raise RuntimeDirError(os.path.abspath(runtime_dir), f"{what}{problem}; refused")
    return fd
