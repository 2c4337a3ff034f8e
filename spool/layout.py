"""Where runs live under the runtime dir, and the rules for run ids.

Not on the hook path (``spool/write.py`` is), but cheap to import all the same:
standard library ``os`` and ``stat`` only.
"""

from __future__ import annotations

import os
import stat

from agentspool.errors import RunIdError, RuntimeDirError
from agentspool.spool.write import RUNTIME_DIR_ENV, run_id_problem

SWEEP_LOCK = ".sweep.lock"
DEFAULT_MIN_IDLE = 600.0
"""The sweep never removes a run whose spool was written this recently (seconds)."""
TRASH_PREFIX = ".trash-"


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it can only ever name one directory below the runtime dir."""
    problem = run_id_problem(run_id)
    if problem is not None:
        raise RunIdError(run_id, problem)
    return run_id


def default_runtime_dir() -> str:
    """``$AGENTSPOOL_RUNTIME_DIR``, else the XDG per-user runtime dir, else a tmp dir."""
    explicit = os.environ.get(RUNTIME_DIR_ENV)
    if explicit:
        return os.path.abspath(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        return os.path.join(xdg, "agentspool")
    tmp = os.environ.get("TMPDIR") or "/tmp"  # noqa: S108 - per-user name, checked below
    return os.path.join(os.path.abspath(tmp), f"agentspool-{os.getuid()}")


def ensure_runtime_dir(path: str) -> str:
    """Create ``path`` (0700) if missing; refuse one that is not private to this user.

    Refuses a symlink, a non-directory, another user's directory and a directory that
    group or others can write to: any of them would let another account plant or read
    evidence.
    """
    path = os.path.abspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise RuntimeDirError(path, f"cannot create: {exc.strerror}") from exc
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise RuntimeDirError(path, "is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise RuntimeDirError(path, "is not a directory")
    if st.st_uid != os.getuid():
        raise RuntimeDirError(path, f"owned by uid {st.st_uid}, not {os.getuid()}")
    if st.st_mode & 0o022:
        raise RuntimeDirError(path, f"writable by others (mode {stat.S_IMODE(st.st_mode):o})")
    if st.st_mode & 0o077:
        # Our own dir with a loose mode (an old umask): tighten it, it holds evidence.
        os.chmod(path, 0o700)
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
        if st.st_mode & 0o077:
            # Hooks refuse a run dir others can reach; re-arming a run must not leave
            # one that silently records nothing.
            os.chmod(path, 0o700)
    return path
