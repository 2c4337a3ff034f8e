"""Files a CLI keeps its sessions in, by a glob, changed at or after a time (discovery)."""

from __future__ import annotations

import glob
import os


def changed_since(pattern: str, since: float) -> list[str]:
    """The files matching ``pattern`` whose mtime is ``since`` or later (gone ones skipped)."""
    found = []
    for path in glob.glob(pattern):
        try:
            if os.stat(path).st_mtime >= since:
                found.append(path)
        except OSError:
            continue
    return sorted(found)
