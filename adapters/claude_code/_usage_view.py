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
is that of the lines that make a record. Not read here, and written when the file's
records are: the first prompt's title and the record count (``usage`` reads neither).
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.claude_code._records import (
    BOOKKEEPING,
    CONVERSATION,
    DECODE_ERRORS,
    FILE_RECORDS,
    FOREIGN_TYPES,
    RESPONSES_KEPT,
    TITLE_RANK,
    ApiUsage,
    has_tokens,
    salvaged,
    usage_of,
)
from agentspool.adapters.common.jsonl import split_lines, whole_tail
from agentspool.core.seam import TranscriptFacts, Usage, UsageView
from agentspool.spool.files import regular_fd

__all__ = ["usage_view"]

BLOCK = 8 << 20
"""Bytes decoded at a time: the view keeps nothing of a line it does not count."""
_SYSTEM_RECORDS = frozenset(
    {"compact_boundary", "microcompact_boundary", "api_error", "error", "api_refusal"}
)
"""System subtypes ``TranscriptParser._system`` makes a record of (and those below when
they carry content): the span is the records'."""
_SYSTEM_NOTES = frozenset({"local_command", "informational", "model_refusal_fallback", None})


class _BlockKind(msgspec.Struct, gc=False):
    """A content block's type, and a text block's text: whether it makes a record."""

    type: str = ""
    text: str | None = None


class _UsageMessage(msgspec.Struct, gc=False):
    id: str | None = None
    model: str | None = None
    usage: ApiUsage | None = None
    content: str | list[_BlockKind] | None = None


class _UsageLine(msgspec.Struct, rename="camel", gc=False):
    type: str = ""
    subtype: str | None = None
    is_sidechain: bool = False
    is_api_error_message: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    timestamp: str | None = None
    version: str | None = None
    content: str | None = None
    """A system record's text (a conversation record's is in ``message``, not read)."""
    message: _UsageMessage | None = None
    ai_title: str | None = None
    custom_title: str | None = None
    pr_url: str | None = None
    frame_url: str | None = None


_decoder = msgspec.json.Decoder(_UsageLine)
_SHOWN_BLOCKS = frozenset({"text", "thinking", "tool_use"})


def _shows(line: _UsageLine) -> bool:
    """Whether ``_assistant`` makes a record of the line's content."""
    content = line.message.content if line.message is not None else None
    if isinstance(content, list):
        return bool(content) and (
            line.is_api_error_message or any(b.type in _SHOWN_BLOCKS for b in content)
        )
    return bool(content)


def _user_record(content: str | list[_BlockKind] | None) -> bool:
    """Whether ``_user`` makes a record: a tool result, or text."""
    if isinstance(content, list):
        return any(b.type == "tool_result" or (b.type == "text" and b.text) for b in content)
    return bool(content)


class _Reader:
    def __init__(self) -> None:
        self.sidechain: bool | None = None
        self.agent_id = self.session_id = self.cwd = self.any_cwd = self.version = ""
        self.title = ""
        self.title_rank = 0
        self.rows: list[list[object]] = []
        self.seen: set[str] = set()
        self.carriers: dict[str, list[object]] = {}
        self.first = self.last = ""
        self.lines = 0

    def read(self, line: _UsageLine) -> None:
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
                if kind == "assistant" and self._usage(line):  # the other side's response
                    self._span(line.timestamp)
                return
        elif not self.session_id and line.session_id:
            self.session_id, self.cwd = line.session_id, line.cwd or ""
        if line.version:
            self.version = line.version
        if kind == "assistant":
            if self._usage(line) or _shows(line):
                self._span(line.timestamp)
        elif kind == "user":
            if line.message is not None and _user_record(line.message.content):
                self._span(line.timestamp)
        elif kind == "system" and (
            line.subtype in _SYSTEM_RECORDS or (line.subtype in _SYSTEM_NOTES and line.content)
        ):
            self._span(line.timestamp)

    def _file_record(self, line: _UsageLine) -> None:
        rank = TITLE_RANK.get(line.type, 0)
        if rank:
            title = (line.custom_title if rank == 2 else line.ai_title) or ""
            if title and rank >= self.title_rank:
                self.title, self.title_rank = title, rank
        elif line.pr_url if line.type == "pr-link" else line.frame_url:
            self._span(line.timestamp)

    def _span(self, stamp: str | None) -> None:
        """A line that makes a record: the span runs from the first to the last such line
        with a time, in file order (ADR 0057)."""
        if stamp:
            if not self.first:
                self.first = stamp
            self.last = stamp

    def _usage(self, line: _UsageLine) -> bool:
        """Whether the line begins a response (or is one of no id) with usage: its
        first record carries it (``_priced``)."""
        msg = line.message
        if msg is None or msg.usage is None:
            return False
        usage = usage_of(msg.usage)
        message_id = msg.id or ""
        if message_id and message_id in self.seen:
            carrier = self.carriers.get(message_id)
            if carrier is not None and has_tokens(usage) and carrier[4] != usage:
                carrier[4] = usage  # a later line restates the whole response
            return False
        row: list[object] = [self.lines, line.timestamp or "", msg.model or "", message_id, usage]
        self.rows.append(row)
        if message_id:
            self.seen.add(message_id)
            self.carriers[message_id] = row
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
                    one: _UsageLine | None = _decoder.decode(raw)
                except msgspec.ValidationError:
                    one = salvaged(_UsageLine, raw)
                except (msgspec.DecodeError, UnicodeDecodeError):
                    one = None
                if one is None:
                    self.lines += 1  # corrupt: counted as a line, read as nothing
                else:
                    self.read(one)
            return
        for line in decoded:
            self.read(line)


def usage_view(path: str, file_session: str) -> UsageView:
    """``path`` read whole through the usage view. ``file_session``: the session the
    file is named after (``HistoryParser``: a main transcript's session)."""
    reader = _Reader()
    with open(regular_fd(path), "rb", buffering=0) as fh:
        # One buffer for the whole file, read into again and again: a fresh block for
        # every read cost a page fault per 4 KB, and in two forked workers side by side
        # that was ~0.1 s of a first ``usage``'s 500 MB (ADR 0043).
        size = os.fstat(fh.fileno()).st_size
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
    agent = reader.agent_id
    session = reader.session_id if agent else file_session or reader.session_id
    rows: list[tuple[int, str, str, str, Usage]] = [tuple(r) for r in reader.rows]  # type: ignore[misc]
    return UsageView(
        rows=rows,
        facts=TranscriptFacts(
            session_id=session,
            agent_id=agent,
            parent_session_id=reader.session_id if agent else "",
            cwd=reader.cwd or reader.any_cwd,
            cli_version=reader.version,
            title=reader.title,
        ),
        first=reader.first,
        last=reader.last,
    )
