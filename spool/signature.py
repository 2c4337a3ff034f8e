"""``spool_sig``: a digest that changes whenever a run's evidence changes, from stat alone.

The watcher polls it while a transcript is byte-frozen (a dialog open, a turn silently
ended), so it must cost one ``scandir`` and open nothing. Built from each entry's
(name, size, mtime_ns, inode), never the directory's own mtime: a record appended to an
existing file leaves the directory untouched, and mtimes can repeat within a tick —
the size still moves, and a replaced file has a new inode.
"""

from __future__ import annotations

import binascii
import os

from agentspool.spool.layout import run_dir as _run_dir

ABSENT = "absent"


def spool_sig(run_id: str, runtime_dir: str) -> str:
    """Digest of the run's spool directory; ``"absent"`` when there is none."""
    path = _run_dir(runtime_dir, run_id)
    try:
        entries = sorted(
            (e.name, e.stat(follow_symlinks=False))
            for e in os.scandir(path)
            if not e.name.startswith(".")
        )
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    crc = 0
    for name, st in entries:
        crc = binascii.crc32(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode(), crc)
    return f"{len(entries)}-{crc:08x}"
