"""What ``usage`` reads of a Claude Code transcript, through the narrowest view (ADR 0043).

The full parse (``HistoryParser``) decodes every field a record shows: the message
content, its blocks, each tool call's input. On conversation-heavy transcripts that is
~270 MB/s. ``usage`` needs, of each line, its type, side, ids, time and the API's usage
figures: this view names only those, msgspec skips the rest (the content, the tool
results) without building anything, and a whole file reads at ~1.6 GB/s.

The counting rules are ``TranscriptParser``'s, kept here line for line where they decide
what counts: bookkeeping and foreign records say nothing; the first conversation record
decides the file's side (a subagent's own file is all sidechain); every assistant line
with usage counts — the file's side, an inline subagent's (1.0.x, in the main file), or
the main agent's response seen from a subagent's file (``_other_side``) — its first line
begins the response, and a later line of it with tokens restates the whole response
(``_priced``, ``_reprice``, the latest ``RESPONSES_KEPT`` responses). The session's span
is that of the lines that make a record, the first and the last in file order (ADR 0057).
Not read here, and written when the file's records are: the CLI's title, the first
prompt's title and the record count (``usage`` reads none of them; finding the CLI's
title in a scanned file took a second pass over every byte, ADR 0063).

A file of ``SCAN_FROM`` to ``SCAN_UP_TO`` bytes is not decoded line by line at all
(``_scan``, ADR 0057): most of its bytes are tool results and text that no rule reads,
and a SIMD substring search (StringZilla) finds the lines that can change the answer —
those with usage — at memory speed. They are fed to the same ``_Reader``, in file order,
after the head (until the file's side, session, cwd and first record are known) and
before the tail (until its last record and version are seen); a file where that cannot
be proven reads whole, line by line.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from io import FileIO

import msgspec
import stringzilla

from agentspool.adapters.claude_code._records import (
    BOOKKEEPING,
    CONVERSATION,
    DECODE_ERRORS,
    FILE_RECORDS,
    FOREIGN_TYPES,
    RESPONSES_KEPT,
    ApiUsage,
    BlockKind,
    CountedLine,
    ShownLine,
    has_tokens,
    salvaged,
    usage_of,
)
from agentspool.adapters.common.jsonl import split_lines, whole_tail
from agentspool.core.seam import KeptUsage, PackedUsage, TranscriptFacts, UsageView
from agentspool.core.usage_first import disposable
from agentspool.spool.files import regular_fd

__all__ = ["usage_view"]

BLOCK = 8 << 20
"""Bytes decoded at a time: the view keeps nothing of a line it does not count."""
SCAN_FROM = 256 << 10
"""Smaller files read whole: their head and tail are most of them."""
SCAN_UP_TO = 64 << 20
"""Larger files read whole, a block at a time: a scan holds its file in memory."""
HEAD_LINES = 64
"""Lines a scan reads from the start to learn the file's side, session, cwd and first
record; a file that has not said them by then reads whole."""
TAIL_LINES = 32
"""Lines a scan reads at the end, where the last record and the last version are (then
16 times as many, if those did not hold them)."""
_NEEDLE = '"usage":'
"""What makes a line in the middle of a file one that can change what the view reads:
a ``usage`` key (the only one msgspec reads as ``message.usage``: JSON's writers put no
space before a colon, and a quote inside a string value is escaped, so the needle is
never inside one)."""
_SYSTEM_RECORDS = frozenset(
    {"compact_boundary", "microcompact_boundary", "api_error", "error", "api_refusal"}
)
"""System subtypes ``TranscriptParser._system`` makes a record of (and those below when
they carry content): the span is the records'."""
_SYSTEM_NOTES = frozenset({"local_command", "informational", "model_refusal_fallback", None})


_decoder = msgspec.json.Decoder(ShownLine)
_middle_decoder = msgspec.json.Decoder(CountedLine)
_SHOWN_BLOCKS = frozenset({"text", "thinking", "tool_use"})


def _shows(line: ShownLine) -> bool:
    """Whether ``_assistant`` makes a record of the line's content."""
    content = line.message.content if line.message is not None else None
    if not isinstance(content, str) and content is not None:
        return bool(content) and (
            line.is_api_error_message or any(b.type in _SHOWN_BLOCKS for b in content)
        )
    return bool(content)


def _user_record(content: str | Sequence[BlockKind] | None) -> bool:
    """Whether ``_user`` makes a record: a tool result, or text."""
    if not isinstance(content, str) and content is not None:
        return any(b.type == "tool_result" or (b.type == "text" and b.text) for b in content)
    return bool(content)


class _Reader:
    def __init__(self) -> None:
        self.sidechain: bool | None = None
        self.agent_id = self.session_id = self.cwd = self.any_cwd = self.version = ""
        self.rows: list[KeptUsage] = []
        self.seen: set[str] = set()
        self.carriers: dict[str, tuple[int, ApiUsage]] = {}
        """The latest responses begun: their row's place in ``rows``, and their usage as
        the API wrote it."""
        self.first = self.last = ""
        self.lines = 0
        """The place of the line read last, a row's ``seq``: its number in a whole read,
        one past its byte offset in a scan (which counts no lines)."""
        self.stamped = self.versions = 0
        """Lines read that made a record with a time, and that set the version (a scan's
        proof that its tail held the last of each)."""

    @property
    def settled(self) -> bool:
        """Whether the lines read so far decided what only the file's first lines decide:
        its side, its session and cwd, any cwd at all, and its first record."""
        return bool(self.sidechain is not None and self.session_id and self.any_cwd and self.first)

    def read(self, line: ShownLine) -> None:
        self.lines += 1
        if not self.any_cwd and line.cwd:
            self.any_cwd = line.cwd
        kind = line.type
        if kind in BOOKKEEPING or kind in FOREIGN_TYPES or line.subtype == "stop_hook_summary":
            return
        if kind in FILE_RECORDS:
            self._file_record(line)
            return
        if self.sidechain is None:
            self.sidechain = line.is_sidechain
            self.agent_id = line.agent_id or "" if line.is_sidechain else ""
        if line.is_sidechain != self.sidechain:
            if self.sidechain or kind not in CONVERSATION:
                # The other side's response: it counts.
                if kind == "assistant" and self._usage(line, self.lines):
                    self._span(line.timestamp)
                return
        elif not self.session_id and line.session_id:
            self.session_id, self.cwd = line.session_id, line.cwd or ""
        if line.version:
            self.version = line.version
            self.versions += 1
        if kind == "assistant":
            if self._usage(line, self.lines) or _shows(line):
                self._span(line.timestamp)
        elif kind == "user":
            if line.message is not None and _user_record(line.message.content):
                self._span(line.timestamp)
        elif kind == "system" and (
            line.subtype in _SYSTEM_RECORDS or (line.subtype in _SYSTEM_NOTES and line.content)
        ):
            self._span(line.timestamp)

    def read_middle(self, starts: list[int], lines: list[CountedLine]) -> None:
        """What ``read`` does with the lines of a file's middle (``_Scan.middle``: read
        once the reader is ``settled``, before the tail, which decides the version and the
        span's last line again): each assistant line's usage counts, whichever side it is
        on. A line's place is one past its byte offset (``starts``): a scan counts no
        lines."""
        usage = self._usage
        for start, line in zip(starts, lines, strict=True):
            if line.type == "assistant" and line.subtype != "stop_hook_summary":
                usage(line, start + 1)

    def _file_record(self, line: ShownLine) -> None:
        if line.pr_url if line.type == "pr-link" else line.frame_url:
            self._span(line.timestamp)

    def _span(self, stamp: str | None) -> None:
        """A line that makes a record: the span runs from the first to the last such line
        with a time, in file order (ADR 0057)."""
        if stamp:
            if not self.first:
                self.first = stamp
            self.last = stamp
            self.stamped += 1

    def _usage(self, line: CountedLine, seq: int) -> bool:
        """Whether the line (its place ``seq``) begins a response (or is one of no id)
        with usage: its first record carries it (``_priced``)."""
        msg = line.message
        if msg is None or msg.usage is None:
            return False
        api = msg.usage
        message_id = msg.id or ""
        if message_id:
            carried = self.carriers.get(message_id)
            if carried is not None:
                # Most lines of a response repeat its usage: compared as the API wrote it.
                if carried[1] != api:
                    usage = usage_of(api, PackedUsage)
                    if has_tokens(usage):  # a later line restates the whole response
                        place = carried[0]
                        self.rows[place] = msgspec.structs.replace(self.rows[place], usage=usage)
                        self.carriers[message_id] = (place, api)
                return False
            if message_id in self.seen:  # a response older than those kept: counted
                return False
        usage = usage_of(api, PackedUsage)
        rows = self.rows
        rows.append(KeptUsage(seq, line.timestamp or "", msg.model or "", message_id, usage))
        if message_id:
            self.seen.add(message_id)
            self.carriers[message_id] = (len(rows) - 1, api)
            if len(self.carriers) > RESPONSES_KEPT:
                del self.carriers[next(iter(self.carriers))]
        return True

    def feed(self, block: bytes | memoryview) -> None:
        try:
            decoded = _decoder.decode_lines(block)
        except DECODE_ERRORS:
            for raw in split_lines(memoryview(block)):
                if raw[:1] != b"{" and not raw.strip():
                    continue
                try:
                    one: ShownLine | None = _decoder.decode(raw)
                except msgspec.ValidationError:
                    one = salvaged(ShownLine, raw)
                except (msgspec.DecodeError, UnicodeDecodeError):
                    one = None
                if one is None:
                    self.lines += 1  # corrupt: counted as a line, read as nothing
                else:
                    self.read(one)
            return
        for line in decoded:
            self.read(line)


def _read_whole(fh: FileIO, size: int, reader: _Reader) -> None:
    """Every line of the file, a block at a time."""
    # One buffer for the whole file, read into again and again: a fresh block for every
    # read cost a page fault per 4 KB, and in two forked workers side by side that was
    # ~0.1 s of a first ``usage``'s 500 MB (ADR 0043).
    buffer = bytearray(max(min(size + 1, BLOCK), 1))
    view = memoryview(buffer)
    held = 0  # bytes at the buffer's start after its last newline: a line's beginning
    while True:
        if held == len(buffer):  # a line longer than the buffer: make room for it
            view.release()
            buffer.extend(bytes(len(buffer)))
            view = memoryview(buffer)
        got = fh.readinto(view[held:])
        if not got:
            if whole_tail(view[:held]):  # the last record, its newline missing
                reader.feed(view[:held])
            break
        end = held + got
        cut = buffer.rfind(b"\n", 0, end) + 1
        if cut:
            reader.feed(view[:cut])
            buffer[: end - cut] = bytes(view[cut:end])  # the next line's start
            held = end - cut
        else:
            held = end


class _Scan:
    """One file in memory, its lines found by substring search (module docstring)."""

    def __init__(self, data: memoryview, reader: _Reader) -> None:
        self.data = data
        self.text = stringzilla.Str(data)
        self.reader = reader

    def feed(self, start: int, end: int) -> bool:
        """The line at ``start`` read (its place: its byte offset); ``False`` if it does
        not decode (the whole read salvages what it can)."""
        self.reader.lines = start
        try:
            self.reader.read(_decoder.decode(self.data[start:end]))
        except DECODE_ERRORS:
            return False
        return True

    def head(self) -> int:
        """Where the middle begins: after the lines that settle the reader (``-1``: they
        did not, in ``HEAD_LINES``)."""
        start = 0
        for _ in range(HEAD_LINES):
            end: int = self.text.find("\n", start)
            if end < 0 or not self.feed(start, end):
                return -1
            start = end + 1
            if self.reader.settled:
                return start
        return -1

    def tail(self, middle: int, lines: int) -> int:
        """Where the last ``lines`` lines begin (not before ``middle``)."""
        cut = len(self.data)
        for _ in range(lines):
            newline = self.text.rfind("\n", middle, cut - 1)
            if newline < 0:
                return middle
            cut = newline + 1
        return cut

    def middle(self, start: int, end: int) -> bool:
        """Every line in ``[start, end)`` that holds ``_NEEDLE``, in file order, read by
        ``read_middle`` (``False``: one does not decode)."""
        starts: list[int] = []
        ends: list[int] = []
        find, rfind = self.text.find, self.text.rfind
        at = start
        while (found := find(_NEEDLE, at, end)) >= 0:
            starts.append(rfind("\n", start - 1, found) + 1)
            at = find("\n", found, end)
            ends.append(at)
            at += 1
        data = self.data
        try:
            joined = b"\n".join([data[s:e] for s, e in zip(starts, ends, strict=True)])
            lines = _middle_decoder.decode_lines(joined)
        except DECODE_ERRORS:
            return False
        self.reader.read_middle(starts, lines)
        return True

    def last_lines(self, start: int) -> bool:
        """Every line from ``start`` on, the last one without its newline only if whole."""
        size = len(self.data)
        while start < size:
            end = self.text.find("\n", start)
            if end < 0:
                return not whole_tail(self.data[start:]) or self.feed(start, size)
            if not self.feed(start, end):
                return False
            start = end + 1
        return True


def _scanned(fh: FileIO, size: int) -> _Reader | None:
    """A reader fed the file by a ``_Scan``; ``None`` when the scan cannot prove it read
    what a whole read reads. A tail without a record or a version (a subagent's progress
    lines can be the last hundreds of lines) is tried once more, longer."""
    mapped = None
    if disposable():
        # A worker maps the file rather than copying it in (~0.1 s of CPU on 500 MB):
        # if the file is cut short meanwhile it dies, and its files are read again.
        mapped = mmap.mmap(fh.fileno(), size, flags=_MAP_FLAGS, prot=mmap.PROT_READ)
        data = memoryview(mapped)
    else:
        data = _scratch(size)
        data = data[: fh.readinto(data)]
    try:
        return _scan(data)
    finally:
        data.release()
        if mapped is not None:
            mapped.close()


def _scan(data: memoryview) -> _Reader | None:
    for tail_lines in (TAIL_LINES, TAIL_LINES * 16):
        scan = _Scan(data, _Reader())
        middle = scan.head()
        if middle < 0:
            return None
        end = scan.tail(middle, tail_lines)
        if not scan.middle(middle, end):
            return None
        reader = scan.reader
        stamped, versions = reader.stamped, reader.versions
        if not scan.last_lines(end):
            return None
        # The tail holds a record with a time and a version: the last of each in the file.
        if reader.stamped > stamped and reader.versions > versions:
            return reader
    return None


_MAP_FLAGS = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
"""Private and read-only; populated at once where the system can (Linux): one call
instead of a fault per page."""
_SCRATCH = bytearray()
"""The buffer a scan reads its file into, kept for the next one (a fresh one costs a page
fault per 4 KB: ~0.1 s of a first ``usage``'s 500 MB, ADR 0043); at most ``SCAN_UP_TO``."""


def _scratch(size: int) -> memoryview:
    if len(_SCRATCH) < size:
        _SCRATCH.extend(bytes(size - len(_SCRATCH)))
    return memoryview(_SCRATCH)[:size]


def usage_view(path: str, file_session: str) -> UsageView:
    """``path`` read through the usage view: scanned or whole (module docstring).
    ``file_session``: the session the file is named after (``HistoryParser``: a main
    transcript's session)."""
    with open(regular_fd(path), "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        reader = _scanned(fh, size) if SCAN_FROM <= size <= SCAN_UP_TO else None
        if reader is None:
            fh.seek(0)
            reader = _Reader()
            _read_whole(fh, size, reader)
    agent = reader.agent_id
    session = reader.session_id if agent else file_session or reader.session_id
    return UsageView(
        rows=reader.rows,
        facts=TranscriptFacts(
            session_id=session,
            agent_id=agent,
            parent_session_id=reader.session_id if agent else "",
            cwd=reader.cwd or reader.any_cwd,
            cli_version=reader.version,
        ),
        first=reader.first,
        last=reader.last,
    )
