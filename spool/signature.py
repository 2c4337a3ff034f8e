"""``spool_sig``: a digest that changes whenever a run's evidence changes, from stat alone.

The watcher polls it while a transcript is byte-frozen (a dialog open, a turn silently
ended), so it must cost one ``scandir`` and read no file. Built from each entry's
(name, size, mtime_ns, inode), never the directory's own mtime: a record appended to an
existing file leaves the directory untouched, and mtimes can repeat within a tick —
the size still moves, and a replaced file has a new inode. The runtime dir and the run
dir are opened and checked first, as for every read (ADR 0013): a digest of a dir
another account can write would announce evidence no reader will believe.

``spool_stamps`` is the cheaper subset a watcher checks between two rounds of
``spool_sig``: the stat of the file hooks append to, one ``stat`` per run, relative to
the runtime dir opened once — no listing of any directory.
"""

from __future__ import annotations

import binascii
import os
import stat
from collections.abc import Iterable

from agentspool.spool.errors import RuntimeDirError
from agentspool.spool.layout import DIR_FLAGS, foreign_write_problem, open_run_dir_to_read
from agentspool.spool.write import EVENTS_FILE, LEDGER_FILE, run_id_problem

_EVIDENCE = frozenset((EVENTS_FILE, LEDGER_FILE))

ABSENT = "absent"


def entry_stats(path: str | int, *, hidden: bool = False) -> list[tuple[str, int, int, int]]:
    """Each entry's (name, size, mtime_ns, inode), sorted by name; dot-names only if
    ``hidden``. ``path`` may be an open directory descriptor. Also what ``sweep``
    compares to see a write land during its removal."""
    out = []
    for entry in os.scandir(path):
        if hidden or not entry.name.startswith("."):
            st = entry.stat(follow_symlinks=False)
            out.append((entry.name, st.st_size, st.st_mtime_ns, st.st_ino))
    return sorted(out)


def paths_sig(paths: tuple[str, ...]) -> str:
    """Digest of other files' stat (following symlinks; a missing or unreachable one
    counts as such): what an adapter folds into its ``spool_sig`` for evidence outside
    the run dir — a transcript, a native status file, ``/proc/<pid>`` for liveness."""
    crc = 0
    for path in paths:
        try:
            st = os.stat(path)
            entry = f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n"
        except FileNotFoundError:
            entry = f"{path}\0-\n"
        except OSError as exc:
            entry = f"{path}\0!{exc.errno}\n"
        crc = binascii.crc32(entry.encode(), crc)
    return f"{crc:08x}"


def spool_sig(run_id: str, runtime_dir: str) -> str:
    """Digest of the run's spool directory; ``"absent"`` when there is none.

    Raises ``RuntimeDirError`` when the runtime dir or the run dir is not private.
    """
    dir_fd = open_run_dir_to_read(runtime_dir, run_id)
    if dir_fd is None:
        return ABSENT
    try:
        entries = []
        for entry in os.scandir(dir_fd):
            if entry.name.startswith("."):
                continue
            st = entry.stat(follow_symlinks=False)
            if entry.name in _EVIDENCE and stat.S_ISREG(st.st_mode):
                # What a read refuses, a signature does not vouch for (ADR 0013): the same
                # check SpoolReader makes, on the stat taken here anyway.
                problem = foreign_write_problem(st)
                if problem is not None:
                    raise RuntimeDirError(
                        os.path.abspath(runtime_dir),
                        f"run dir {run_id}: {entry.name} {problem}; refused",
                    )
            entries.append((entry.name, st.st_size, st.st_mtime_ns, st.st_ino))
        entries.sort()
    finally:
        os.close(dir_fd)
    crc = 0
    for name, size, mtime_ns, inode in entries:
        crc = binascii.crc32(f"{name}\0{size}\0{mtime_ns}\0{inode}\n".encode(), crc)
    return f"{len(entries)}-{crc:08x}"


def listing_stamp(runtime_dir: str) -> str:
    """The runtime dir's own stat: it moves when a run dir is created, removed or renamed
    (the link count counts subdirectories, so even within one mtime tick)."""
    try:
        st = os.stat(runtime_dir, follow_symlinks=False)
    except OSError:
        return ABSENT
    return f"{st.st_ino}.{st.st_nlink}.{st.st_mtime_ns}"


def spool_stamps(runtime_dir: str, run_ids: Iterable[str]) -> dict[str, str]:
    """Each run's event spool's (size, mtime_ns, inode): a hook's record moves its run's
    stamp (the size grows). One ``stat`` per run, no file opened, nothing trusted: a
    stamp is a trigger to take the run's ``spool_sig`` and read it, which check the dirs
    (ADR 0013). A run id that could name another path is left out."""
    try:
        root = os.open(runtime_dir.rstrip("/") or "/", DIR_FLAGS)
    except OSError:
        return {}
    out = {}
    try:
        for run_id in run_ids:
            if run_id_problem(run_id) is not None:
                continue
            try:
                st = os.stat(f"{run_id}/{EVENTS_FILE}", dir_fd=root, follow_symlinks=False)
                out[run_id] = f"{st.st_size}.{st.st_mtime_ns}.{st.st_ino}"
            except OSError:
                out[run_id] = ABSENT
    finally:
        os.close(root)
    return out
