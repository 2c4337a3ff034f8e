"""Atomic private files: settings ``setup`` renders, and config blocks it manages."""

from __future__ import annotations

import os
from collections.abc import Callable


def write_private_file(
    path: str, data: bytes, mode: int = 0o600, *, before_replace: Callable[[], None] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically: readers see the old file or the new, whole.

    The temporary file is created ``O_EXCL`` beside the target (same filesystem, so the
    rename is atomic) and never follows a symlink; ``os.replace`` swaps the name, so a
    symlink planted at ``path`` is replaced, not written through. ``before_replace`` runs
    after the data is on disk and just before the rename; if it raises, nothing is
    replaced (an editor re-checks there that nobody wrote the file since it read it).
    """
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, mode)
    except FileExistsError:
        os.unlink(tmp)  # left by a crashed earlier call of this same pid
        fd = os.open(tmp, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
