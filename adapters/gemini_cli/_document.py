"""Gemini CLI's older chat file (``chats/session-*.json``) → canonical messages and events.

Grammar: docs/providers/gemini-cli.md §7. Before the JSONL log (§4), the CLI kept a
session as **one JSON document** — ``{sessionId, projectHash, startTime, lastUpdated,
messages: [...], summary?}`` — and wrote it whole again on every change. Its messages
are the record shapes the log's lines hold (``user`` | ``gemini`` | ``info`` | ``error``
| ``warning``; a ``gemini`` record with ``thoughts``, ``tokens``, ``model`` and, once its
calls completed, ``toolCalls``), so each is folded by ``ChatParser``'s own record rules;
what differs is how the file changes:

* a new version of the document is read whole (``DocumentFollower``: whenever the file's
  stat moved) and fed to the **same** parser: a record whose bytes are those already
  folded is skipped, a changed one (a ``gemini`` record that gained its ``toolCalls``)
  is folded again — as a re-appended line is — so what it adds comes last and no
  ``seq`` moves; a record the document no longer holds is ``inactive``;
* a cancel is not followed by a re-sync (nothing re-records the history);
* ``summary``, the CLI's one-line summary of the session, is a ``summary`` record
  (``is_meta``) after the messages of the version that first held it; a new summary
  replaces its text.

A record without an ``id`` (hand-written fixtures) is named by its place, ``#<n>``, and
carries no usage dedup key. The whole document is one record for ``corrupt``: a version
that is not a JSON object with a ``messages`` list counts 1 (and the parse keeps what
the last readable version said); a message that does not fit the record view counts 1
more each.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import msgspec

from agentspool.adapters.common.jsonl import DECODE_ERRORS
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.gemini_cli._chat import ChatParser
from agentspool.adapters.gemini_cli._records import MESSAGE_TYPES, Record, first_tool_call_keys
from agentspool.core import events as ev
from agentspool.core.seam import Message
from agentspool.spool.errors import TranscriptGoneError

SUMMARY_ID = "$summary"
"""The id of the record a document's ``summary`` becomes (no CLI id starts with ``$``)."""
HEAD = 1 << 16
"""Bytes read to name a listed document's session (``listed_session_id``)."""


class _Document(msgspec.Struct, gc=False):
    sessionId: str | None = None  # noqa: N815 - the CLI's own keys
    startTime: str | None = None  # noqa: N815
    kind: str | None = None
    summary: str | None = None
    messages: list[msgspec.Raw] | None = None


class _Identity(msgspec.Struct, gc=False):
    sessionId: str | None = None  # noqa: N815
    messages: list[msgspec.Raw] | None = None


_decode_document = msgspec.json.Decoder(_Document).decode
_decode_identity = msgspec.json.Decoder(_Identity).decode
_decode_record = msgspec.json.Decoder(Record).decode
# The CLI writes ``sessionId`` as the document's first member (``JSON.stringify`` of its
# conversation record): the id is then read from the file's head, not the whole file.
_FIRST_MEMBER = re.compile(rb'\A\s*\{\s*"sessionId"\s*:\s*("(?:[^"\\]|\\.)*")')


def is_document(path: str) -> bool:
    return path.endswith(".json")


def session_id_in(data: bytes | memoryview) -> str:
    """The session id a whole document names; ``""`` if it is not a chat document (not a
    JSON object with a string ``sessionId`` and a ``messages`` list)."""
    try:
        identity = _decode_identity(data)
    except DECODE_ERRORS:
        return ""
    if identity.messages is None or not identity.sessionId:
        return ""
    return identity.sessionId


def document_session_id(path: str) -> str:
    """The session id of the document at ``path``, read whole (``session_at``)."""
    try:
        with open(path, "rb") as fh:
            return session_id_in(fh.read())
    except OSError:
        return ""


def _first_member_session_id(head: bytes | memoryview) -> str:
    """The session id when the document's first member is ``sessionId``, as the CLI
    writes it (``""`` otherwise)."""
    first = _FIRST_MEMBER.match(head)
    if first is None:
        return ""
    try:
        return msgspec.json.decode(first.group(1), type=str)
    except DECODE_ERRORS:
        return ""


def listed_session_id(path: str) -> str:
    """The session id of a document found where the CLI keeps its chats (``sessions``):
    from the file's head when ``sessionId`` is its first member, else from the whole
    file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
            return _first_member_session_id(head) or session_id_in(head + fh.read())
    except OSError:
        return ""


class DocumentParser(ChatParser):
    """Parse state for one older chat file: ``feed`` each version of the document whole."""

    resyncs_after_cancel = False

    def __init__(self, *, lifecycle: bool = True) -> None:
        super().__init__(lifecycle=lifecycle)
        self._folded: dict[str, int] = {}
        """Record id → the hash of the bytes of its version last folded."""
        self._summary = ""

    def feed(self, block: memoryview) -> None:
        """One version of the document, whole."""
        try:
            document = _decode_document(block)
        except DECODE_ERRORS:
            document = None
        if document is None or document.messages is None:
            self.corrupt = 1  # torn, or not a chat document: the last version read stands
            return
        self.corrupt = 0
        if "document" not in self.drift.checked:
            self._check("document", block)
        if not self.session_id and document.sessionId:
            self._opened(document)
        held: dict[str, None] = {}
        for index, raw in enumerate(document.messages):
            record_id = self._fold(index, raw)
            if record_id:
                held[record_id] = None
        if document.summary:
            held[SUMMARY_ID] = None
        gone = [record_id for record_id in self._current if record_id not in held]
        back = [record_id for record_id in held if record_id not in self._current]
        self._current = held
        self._restate(gone + back)
        if document.summary and document.summary != self._summary:
            self._summary = document.summary
            self._summarized(document.summary)

    def _opened(self, document: _Document) -> None:
        self.session_id = document.sessionId or ""
        if document.kind == "subagent":
            self.agent_id = self.session_id
        self.events.append(
            ev.SessionStarted(
                at=epoch_seconds(document.startTime or ""),
                source="transcript:document",
                epoch=self.session_id,
            )
        )

    def _fold(self, index: int, raw: msgspec.Raw) -> str:
        """Fold one message of the document unless this version of it was folded;
        its record id (``""`` for a message that could not be read)."""
        try:
            record = _decode_record(raw)
        except DECODE_ERRORS:
            self.corrupt += 1
            return ""
        if not record.id:
            record.id = f"#{index + 1}"
            self._positional.add(record.id)
        version = hash(bytes(raw))
        known = self._folded.get(record.id)
        if known == version:
            return record.id
        self._folded[record.id] = version
        if record.type not in MESSAGE_TYPES:
            if known is None:
                self.drift.unknown_type(record.type or "?")
            return record.id
        if known is None:
            self._check(record.type, raw)
            if record.toolCalls and "toolCall" not in self.drift.checked:
                self._check("toolCall", raw, first_tool_call_keys)
        self._current[record.id] = None
        self._record(record, checkpoint=False)
        return record.id

    def _summarized(self, summary: str) -> None:
        record = Record(id=SUMMARY_ID, type="summary")
        self._derived.setdefault(SUMMARY_ID, [])
        self._add(
            record,
            Message(id=SUMMARY_ID, kind="summary", role="system", text=summary, is_meta=True),
        )


class DocumentFollower:
    """Follows one older chat file: ``read`` hands on the whole document whenever the
    file's stat (inode, size, mtime) moved since the last call, as one block. The same
    parser reads every version (seq stays); ``reset`` only when the file now holds
    another session (replaced by another conversation's document)."""

    def __init__(self, path: str, run_id: str = "") -> None:
        self.path = path
        self._run_id = run_id
        self._seen: tuple[int, int, int] | None = None
        self._session = ""

    def read(self, on_lines: Callable[[memoryview], None], reset: Callable[[], None]) -> None:
        try:
            fh = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except (FileNotFoundError, NotADirectoryError):
            raise TranscriptGoneError(self._run_id, self.path) from None
        with fh:
            st = os.fstat(fh.fileno())
            stat = (st.st_ino, st.st_size, st.st_mtime_ns)
            if stat == self._seen:
                return
            data = fh.readall()
        replaced = self._seen is not None and stat[0] != self._seen[0]
        self._seen = stat
        if replaced or not self._session:
            session = _first_member_session_id(data[:HEAD]) or session_id_in(data)
            if replaced and session and self._session and session != self._session:
                reset()
            self._session = session or self._session
        on_lines(memoryview(data))
