"""The read side of the spool: records back from a byte cursor, tolerant of damage.

A reader never raises on what it reads: a torn record (a writer killed, or the disk
full, mid-write) or a corrupt one is skipped and counted, and reading resynchronises on
the next record's magic. A record whose bytes are still arriving is left for the next
read; it counts as torn only once a whole record follows it, because O_APPEND writers
cannot append past a write that is still in progress.
"""

from __future__ import annotations

import binascii
import errno
import os
import stat
from typing import NamedTuple

from agentspool.spool.errors import RuntimeDirError
from agentspool.spool.layout import check_run_id, foreign_write_problem, open_checked_run_dir
from agentspool.spool.write import EVENTS_FILE, MAGIC

_FIELDS = 10  # "AS1" + nine fields; see the spool package docstring
_READ_CHUNK = 8 << 20
_HEAD_PROBE = 512  # longer than any header line (see _parse_one)


class SpoolRecord(NamedTuple):
    event: str
    mono_ns: int
    wall_ns: int
    pid: int
    agent_pid: int
    head_bytes: int
    """-1 for a whole payload; else the payload is ``head_bytes`` of head, then tail."""
    orig_len: int
    payload: bytes
    offset: int
    """Byte offset of the record in the spool file: stable, unique, ordered."""

    @property
    def truncated(self) -> bool:
        return self.head_bytes >= 0


_OK, _INCOMPLETE, _BAD = 0, 1, 2


def _parse_one(buf: bytes, start: int, base: int) -> tuple[int, SpoolRecord | None, int]:
    """Parse the record at ``buf[start]`` (which begins with MAGIC) → (status, record, end)."""
    nl = buf.find(b"\n", start, start + _HEAD_PROBE)
    if nl < 0:
        return (_INCOMPLETE if len(buf) - start < _HEAD_PROBE else _BAD), None, start
    header_line = buf[start + 1 : nl]
    fields = header_line.split(b" ")
    if len(fields) != _FIELDS or fields[0] != b"AS1":
        return _BAD, None, start
    try:
        mono, wall, pid, apid = int(fields[2]), int(fields[3]), int(fields[4]), int(fields[5])
        cut = -1 if fields[6] == b"-" else int(fields[6])
        orig, length, crc = int(fields[7]), int(fields[8]), int(fields[9], 16)
        event = fields[1].decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return _BAD, None, start
    if length < 0:
        return _BAD, None, start
    body = nl + 1
    end = body + length
    if end >= len(buf):
        return _INCOMPLETE, None, start
    if buf[end] != 0x0A:
        return _BAD, None, start
    payload = buf[body:end]
    header = header_line[: header_line.rfind(b" ")]  # the CRC covers all but itself
    if binascii.crc32(payload, binascii.crc32(header)) != crc:
        return _BAD, None, start
    return _OK, SpoolRecord(event, mono, wall, pid, apid, cut, orig, payload, base + start), end + 1


def parse_records(buf: bytes, base: int = 0) -> tuple[list[SpoolRecord], int, int]:
    """Parse ``buf`` (file bytes from offset ``base``) → (records, bytes consumed, damaged).

    Bytes after the consumed prefix are an incomplete record still being written.
    """
    records: list[SpoolRecord] = []
    damaged = 0
    pos = 0
    size = len(buf)
    while pos < size:
        start = buf.find(MAGIC, pos)
        if start < 0:
            # Keep a tail that may be the first bytes of a record being written.
            keep = next(
                (
                    k
                    for k in range(min(len(MAGIC), size - pos), 0, -1)
                    if MAGIC.startswith(buf[size - k :])
                ),
                0,
            )
            if size - keep > pos:
                damaged += 1
            return records, size - keep, damaged
        if start > pos:
            damaged += 1  # bytes between records belong to no record
        status, record, end = _parse_one(buf, start, base)
        if status == _OK:
            assert record is not None
            records.append(record)
            pos = end
            continue
        if status == _INCOMPLETE and not _whole_record_after(buf, start + 1, base):
            return records, start, damaged
        damaged += 1
        nxt = buf.find(MAGIC, start + 1)
        pos = size if nxt < 0 else nxt
        if nxt < 0:
            return records, start if status == _INCOMPLETE else size, damaged
    return records, pos, damaged


def _whole_record_after(buf: bytes, pos: int, base: int) -> bool:
    nxt = buf.find(MAGIC, pos)
    while nxt >= 0:
        if _parse_one(buf, nxt, base)[0] == _OK:
            return True
        nxt = buf.find(MAGIC, nxt + 1)
    return False


class SpoolReader:
    """Incremental reader of one run's spool: each ``read()`` returns only new records.

    Follows the file by identity: if it is replaced or shrinks, the cursor restarts at
    0. Identity is the inode *and* the file's first header line (which carries the
    writer's pid and clock readings): a deleted spool's inode number is often reused
    at once by the next file created, with a size that may match the old cursor.
    A missing spool (or run dir, or runtime dir) reads as no records.

    Evidence only from this user's own files (ADR 0013): every ``read()`` opens the
    runtime dir (``run_dir``'s parent) and the run dir through checked descriptors and
    raises ``RuntimeDirError`` for either one that is a symlink, another user's, or
    writable by group or others, and for a spool file that another user owns or others
    may write — before a byte of it is parsed.
    """

    def __init__(self, run_dir: str, name: str = EVENTS_FILE) -> None:
        # The name is checked once, here: it is the same at every ``read()``.
        self.runtime_dir, self.run_id = os.path.split(run_dir)
        check_run_id(self.run_id)
        self.name = name
        self.offset = 0
        self.damaged = 0
        self._ino = -1
        self._head = b""

    def _open(self) -> int | None:
        dir_fd = open_checked_run_dir(self.runtime_dir, self.run_id)
        if dir_fd is None:
            return None
        try:
            # O_NONBLOCK: a FIFO in place of the spool must not hold the reader (ADR 0037).
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            return os.open(self.name, flags, dir_fd=dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symlink where the spool should be
                return None
            raise
        finally:
            os.close(dir_fd)

    def read(self) -> list[SpoolRecord]:
        fd = self._open()
        if fd is None:
            return []
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return []
            problem = foreign_write_problem(st)
            if problem is not None:
                raise RuntimeDirError(
                    os.path.abspath(self.runtime_dir),
                    f"run dir {self.run_id}: {self.name} {problem}; refused",
                )
            if (
                st.st_ino != self._ino
                or st.st_size < self.offset
                or (self._head and os.pread(fd, len(self._head), 0) != self._head)
            ):
                self._ino, self.offset, self._head = st.st_ino, 0, b""
            if not self._head:
                first = os.pread(fd, _HEAD_PROBE, 0)
                nl = first.find(b"\n")
                self._head = first[: nl + 1] if nl >= 0 else b""
            records: list[SpoolRecord] = []
            fh.seek(self.offset)
            pending = b""
            while True:
                chunk = fh.read(_READ_CHUNK)
                if not chunk:
                    break
                buf = pending + chunk
                base = self.offset
                got, used, damaged = parse_records(buf, base)
                records += got
                self.damaged += damaged
                self.offset += used
                pending = buf[used:]
        return records


def read_all(run_dir: str, name: str = EVENTS_FILE) -> list[SpoolRecord]:
    return SpoolReader(run_dir, name).read()
