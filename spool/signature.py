"""``spool_sig``: a digest that changes whenever a run's evidence changes, from stat alone.

The watcher polls it while a transcript is byte-frozen (a dialog open, a turn silently
ended), so it must cost one ``scandir`` and read no file. Built from each entry's
(name, size, mtime_ns, inode), never the directory's own mtime: a record appended to an
existing file leaves the directory untouched, and mtimes can repeat within a tick —
the size still moves, and a replaced file has a new inode. The runtime dir and the run
dir are opened and checked first, as for every read (ADR 0013): a digest of a dir
another account can write would announce evidence no reader will believe.
"""

from __future__ import annotations

import binascii
import os

from agentspool.spool.layout import open_run_dir_to_read

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


def spool_sig(run_id: str, runtime_dir: str) -> str:
    """Digest of the run's spool directory; ``"absent"`` when there is none.

    Raises ``RuntimeDirError`` when the runtime dir or the run dir is not private.
    """
    dir_fd = open_run_dir_to_read(runtime_dir, run_id)
    if dir_fd is None:
        return ABSENT
    try:
        entries = entry_stats(dir_fd)
    finally:
        os.close(dir_fd)
    crc = 0
    for name, size, mtime_ns, inode in entries:
        crc = binascii.crc32(f"{name}\0{size}\0{mtime_ns}\0{inode}\n".encode(), crc)
    return f"{len(entries)}-{crc:08x}"
