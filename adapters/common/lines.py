"""What every transcript parser fed one line at a time keeps, and its feeding.

``LineParser`` holds the parse's output (``messages``, ``events``, ``usage``) and what
it could not read (``corrupt``, ``drift``): the fields the shared read takes from a
parser (``spooled.Parser``). Each line that is not blank goes to ``feed_line``, which
decodes it through ``_decoded``; a line that does not decode is counted and skipped.
The resumable Claude Code and Codex parses keep more (``resume.ParseState``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from agentspool.adapters.common.drift import DriftCounter
from agentspool.adapters.common.jsonl import DECODE_ERRORS, split_lines
from agentspool.core.events import Event
from agentspool.core.seam import Message, Usage

Line = TypeVar("Line")


class LineParser:
    """One transcript's parse: ``known`` names the fields of each record shape."""

    def __init__(self, known: Mapping[str, frozenset[str]]) -> None:
        self.messages: list[Message] = []
        self.events: list[Event] = []
        self.usage = Usage()
        self.session_id = ""
        self.cwd = ""
        self.cli_version = ""
        self.corrupt = 0
        self.drift = DriftCounter(known)

    def feed(self, block: memoryview) -> None:
        """A block of whole lines (what ``JsonlFollower`` hands on)."""
        for raw in split_lines(block):
            if raw.strip():
                self.feed_line(raw)

    def feed_line(self, raw: bytes) -> None:
        raise NotImplementedError

    def _decoded(self, decode: Callable[[bytes], Line], raw: bytes) -> Line | None:
        try:
            return decode(raw)
        except DECODE_ERRORS:
            self.corrupt += 1
            return None
