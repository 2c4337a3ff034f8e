"""Following a growing JSONL file by byte offset, for transcript parsers.

``JsonlFollower.read(on_lines, reset)`` hands what was appended since the last call to
``on_lines`` in blocks of *complete* lines (each ends with its newline), and leaves a
torn last line for the next call, so a re-read costs only the appended bytes. A last
line without its newline that is a whole JSON value is complete (``whole_tail``): the
CLIs write each record with its newline, and a file that ends without one was cut after
its last record (copied by a tool that dropped it); a torn write is no whole value. The file
is followed by identity: replaced (new inode) or shrunk means start over (``reset`` is
called first). The callbacks are passed per call, not kept: a view that owns a follower
holds no reference cycle through it, so dropping the view frees its parse at once.

The file is read into one reused buffer and each block is handed on as a ``memoryview``
of it, valid only during the call: no copy per line, and a parser can decode a whole
block in one call (``msgspec``'s ``decode_lines``). Memory follows the block size or the
longest line, not the file. ``split_lines`` splits a block for a consumer of single lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from io import FileIO

import msgspec

from agentspool.spool.errors import TranscriptGoneError
from agentspool.spool.files import regular_fd

OnLines = Callable[[memoryview], None]

DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
"""What a line that is not a record of the view raises: torn, corrupt, of another shape."""
_decode_any = msgspec.json.Decoder(msgspec.Raw).decode


def whole_tail(tail: bytes | memoryview) -> bool:
    """Whether a file's last bytes, after its last newline, are a whole JSON value (a
    record whose newline the file lacks), not a line still being written."""
    if not bytes(tail).strip():
        return False
    try:
        _decode_any(tail)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return True


def split_lines(block: memoryview) -> list[bytes]:
    """A block's lines, without their newlines (a blank last item is dropped)."""
    split = block.tobytes().split(b"\n")
    if split and not split[-1]:
        split.pop()
    return split


class JsonlFollower:
    BLOCK = 1 << 20

    def __init__(self, path: str, run_id: str = "") -> None:
        self.path = path
        self.offset = 0
        self._run_id = run_id
        self._ino = -1

    def _open(self) -> FileIO:
        try:
            return open(regular_fd(self.path), "rb", buffering=0)
        except (FileNotFoundError, NotADirectoryError):
            raise TranscriptGoneError(self._run_id, self.path) from None

    def read(self, on_lines: OnLines, reset: Callable[[], None]) -> None:
        """Hand on what was appended since the last call; ``TranscriptGoneError`` if gone."""
        with self._open() as fh:
            st = os.fstat(fh.fileno())
            if st.st_ino != self._ino or st.st_size < self.offset:
                self._ino, self.offset = st.st_ino, 0
                reset()
            fh.seek(self.offset)
            buf = bytearray(min(self.BLOCK, max(st.st_size - self.offset, 0) + 1))
            held = 0  # the start of a line not complete yet, kept at the front of buf
            while True:
                if held == len(buf):  # a line longer than the buffer: a new, larger one
                    buf = buf + bytes(max(len(buf), self.BLOCK))
                view = memoryview(buf)
                got = fh.readinto(view[held:])
                if not got:
                    break
                end = held + got
                cut = buf.rfind(b"\n", held, end) + 1
                if not cut:
                    held = end
                    continue
                on_lines(view[:cut])
                self.offset += cut
                held = end - cut
                buf[:held] = buf[cut:end]  # same-size assignment: fine while views live
            if held and whole_tail(memoryview(buf)[:held]):
                # The last record, its newline missing: handed on as a whole line. A
                # newline written after it later reads as a blank line.
                on_lines(memoryview(bytes(buf[:held]) + b"\n"))
                self.offset += held
