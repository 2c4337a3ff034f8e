"""Following a growing JSONL file by byte offset, for transcript parsers.

``JsonlFollower.read()`` hands each *complete* new line to ``on_line`` and keeps a torn
last line for the next call, so a re-read costs only the appended bytes. The file is
followed by identity: replaced (new inode) or shrunk means start over (``reset`` is
called). The file is streamed in chunks: memory follows the longest line, not the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from agentspool.errors import TranscriptGoneError

CHUNK = 4 << 20


class JsonlFollower:
    def __init__(
        self,
        path: str,
        on_line: Callable[[bytes], None],
        reset: Callable[[], None],
        run_id: str = "",
    ) -> None:
        self.path = path
        self.offset = 0
        self.on_line = on_line
        self._reset = reset
        self._run_id = run_id
        self._ino = -1
        self._pending = b""

    def read(self) -> None:
        """Consume what was appended since the last call; ``TranscriptGoneError`` if gone."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below, streamed in chunks
        except (FileNotFoundError, NotADirectoryError):
            raise TranscriptGoneError(self._run_id, self.path) from None
        with fh:
            st = os.fstat(fh.fileno())
            if st.st_ino != self._ino or st.st_size < self.offset + len(self._pending):
                self._ino, self.offset, self._pending = st.st_ino, 0, b""
                self._reset()
            fh.seek(self.offset + len(self._pending))
            on_line = self.on_line
            while True:
                chunk = fh.read(CHUNK)
                if not chunk:
                    break
                if self._pending:
                    chunk = self._pending + chunk
                    self._pending = b""
                end = chunk.rfind(b"\n")
                if end < 0:
                    self._pending = chunk
                    continue
                for line in chunk[:end].split(b"\n"):
                    on_line(line)
                self.offset += end + 1
                self._pending = chunk[end + 1 :]
