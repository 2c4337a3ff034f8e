"""Atomic private files: settings ``setup`` renders, and config blocks it manages."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from io import BufferedReader

from agentspool.spool.errors import NotRegularFileError

# Opening a FIFO for reading blocks until a writer comes; O_NONBLOCK returns at once, and
# the fstat that follows turns away anything but a regular file (ADR 0037).
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK


def file_kind(mode: int) -> str:
    """What ``mode`` (``st_mode``) says a path is, in words."""
    for test, kind in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return kind
    return "not a file"


def check_regular_fd(fd: int, path: str) -> os.stat_result:
    """``fd``'s stat if it is a regular file; else close it, ``NotRegularFileError``."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFileError(path, file_kind(st.st_mode))
    return st


def regular_fd(path: str, *, dir_fd: int | None = None, nofollow: bool = False) -> int:
    """A descriptor on ``path`` for reading if it is a regular file: never blocks on a
    FIFO, never reads a directory or a device (``NotRegularFileError``, an ``OSError``).
    ``nofollow``: a symlink there is refused too (``ELOOP``)."""
    fd = os.open(path, _READ_FLAGS | (os.O_NOFOLLOW if nofollow else 0), dir_fd=dir_fd)
    check_regular_fd(fd, path)
    return fd


def open_regular(path: str) -> BufferedReader:
    """``regular_fd`` as a buffered binary file (``open(regular_fd(p), "rb",
    buffering=0)`` for a raw one)."""
    return open(regular_fd(path), "rb")


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
