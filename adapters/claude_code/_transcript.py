"""Claude Code transcript (``~/.claude/projects/<slug>/<session>.jsonl``) → canonical
messages and canonical events, incrementally.

Grammar: docs/providers/claude-code.md §4 (2.1.328) and §9 (older versions, real
transcripts). One JSONL line per record; one line per content block of an API message
(all sharing ``message.id``). Every line is decoded through one small view that declares
only the fields read here (msgspec skips the rest cheaply), a block of lines in one call
(ADR 0009). A line that is no JSON object is counted (``corrupt``) and skipped; an object
whose fields have other shapes than these views expect is read with the fields that fit
(``_salvaged``); a record type not known here is counted (``unknown``); a torn last line
is left for the next read. ``TranscriptParser.feed`` takes appended lines only, so a
re-read costs what was appended, not the file.

Usage: one count per API response, of its **final** figures. Versions before 2.1.5x
wrote a response's line for each content block as the block finished, each with the
usage as of then (the first line's output is a few tokens, the last line's is the
response's); 2.1.328 repeats the final usage on every line. The response's first record
carries its usage; a later line of it with other figures replaces them — on a copy of
that record, which a history parse hands out again with its ``seq`` (core/seam.py,
``ResumedParse``). A line with usage and no ``message.id`` is counted on its own.

Subagents: a subagent's own file (``<session>/subagents/agent-<id>.jsonl``, 2.0.x's
``agent-<id>.jsonl``) holds only sidechain records and is read as that agent's. 1.0.7x to
1.0.10x wrote them into the main file (``isSidechain: true``, no ``agentId``): each chain
is read as its subagent's group, opened under the Task call whose prompt it begins with
(docs/providers/claude-code.md §9.4, ADR 0032).
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from agentspool.adapters.claude_code._conversation import ConversationRecords
from agentspool.adapters.claude_code._records import (
    BOOKKEEPING,
    CONVERSATION,
    DECODE_ERRORS,
    FILE_RECORDS,
    FOREIGN_TYPES,
    SIDE_RECORDS_KEPT,
    TITLE_RANK,
    Line,
    decode_line,
    decode_lines,
    digest,
    prompt_text,
    salvaged,
    shape_of,
)
from agentspool.adapters.common.drift import object_keys
from agentspool.adapters.common.resume import SavedParse, load_state
from agentspool.adapters.common.stamps import epoch_seconds
from agentspool.adapters.common.subagents import link_record
from agentspool.core import events as ev
from agentspool.core.seam import Message, TranscriptFacts


def _needle(shape: str) -> tuple[bytes, ...]:
    kind, _, subtype = shape.partition(":")
    # The value alone, in whatever spelling the line has; the shape is verified.
    return (b'"%s"' % (subtype or kind).encode(),)


def _members_if(raw: bytes, shape: str) -> dict[str, msgspec.Raw] | None:
    members = object_keys(raw)
    return members if members is not None and shape_of(members) == shape else None


class TranscriptParser(ConversationRecords):
    """Parse state for one transcript identity; ``feed`` appended lines in file order
    (``ParseState.feed``)."""

    def _decode_block(self, block: memoryview) -> list[Line]:
        return decode_lines(block)

    def _read_block(self, block: memoryview, decoded: list[Line]) -> None:
        for line in decoded:
            self._dispatch(line)

    def _read_line(self, raw: bytes) -> None:
        """A line whose fields have other shapes than the view's is read with the fields
        that fit (``salvaged``)."""
        try:
            line = decode_line(raw)
        except msgspec.ValidationError:
            fitted = salvaged(Line, raw)
            if fitted is None:
                self.corrupt += 1  # JSON, but not an object
                return
            line = fitted
        except (msgspec.DecodeError, UnicodeDecodeError):
            self.corrupt += 1
            return
        self._dispatch(line)

    _shape_needle = staticmethod(_needle)
    _shape_members = staticmethod(_members_if)

    def _dispatch(self, line: Line) -> None:
        kind = line.type
        if kind in BOOKKEEPING or kind in FOREIGN_TYPES or line.subtype == "stop_hook_summary":
            return  # one summary per turn in the TUI: nothing read, no say on the identity
        self._agent, self._inline = self.agent_id, False
        if kind in FILE_RECORDS:
            if kind not in self.drift.checked:
                self._first(kind)
            self._file_record(line)
            return
        if (line.is_sidechain is not self.sidechain or not self.session_id) and not self._enter(
            line
        ):
            if self.sidechain is False and kind in CONVERSATION:
                # A subagent's record in the main file (1.0.x): read as that subagent's.
                self._agent, self._inline = self._inline_agent(line), True
            else:
                if kind == "assistant":
                    self._other_side(line)
                return
        shape = kind if line.subtype is None else f"{kind}:{line.subtype}"
        if shape not in self.drift.checked:
            self._first(shape)
        if line.version:
            self.cli_version = line.version
        if kind == "user":
            self._user(line)
        elif kind == "assistant":
            self._assistant(line)
        elif kind == "system":
            self._system(line)
        elif kind == "progress":
            self._progress(line)
        else:
            self.unknown += 1

    def _enter(self, line: Line) -> bool:
        """What every conversation record does first; ``False``: not this file's side.
        Nothing to do once the side and the session are known and the record is of the
        same side, so ``_dispatch`` calls it only otherwise."""
        if self.sidechain is None:
            # A subagent's own file (`<session>/subagents/agent-<id>.jsonl`) holds only
            # sidechain records: it is read as that agent's conversation.
            self.sidechain = line.is_sidechain
            self.agent_id = line.agent_id or "" if line.is_sidechain else ""
            self._agent = self.agent_id
        if line.is_sidechain != self.sidechain:
            return False  # 2.1.328 keeps subagent records out of the main file; older CLIs did
        if not self.session_id and line.session_id:
            self.session_id = line.session_id
            # A first record naming no cwd keeps the one an earlier line named (the
            # history's ``_find_cwd``), whichever block the two were read in.
            self.cwd = line.cwd or self.cwd
            self.events.append(
                ev.SessionStarted(
                    epoch=line.session_id,
                    how="transcript",
                    at=epoch_seconds(line.timestamp),
                    source="transcript:first-record",
                )
            )
        return True

    # -- inline subagents (1.0.x) ----------------------------------------------------
    def _inline_agent(self, line: Line) -> str:
        """The subagent a sidechain record in the main file belongs to: the one its
        parent record belongs to; a record with no parent opens a new one (its prompt is
        a Task call's), named by its ``agentId`` where it has one, else by its uuid."""
        agent = line.agent_id or ""
        if not agent and line.parent_uuid:
            agent = self._side_agents.get(line.parent_uuid, "")
        if not agent:
            agent = line.uuid or f"sidechain-{self._base + len(self.messages) + 1}"
        if agent not in self._inline_agents:
            self._inline_agents[agent] = None
            self._link(agent, line)
        if line.uuid:
            self._side_agents[line.uuid] = agent
            if len(self._side_agents) > SIDE_RECORDS_KEPT:
                del self._side_agents[next(iter(self._side_agents))]
        return agent

    def _link(self, agent: str, line: Line) -> None:
        """The ``subagent`` record that opens an inline subagent's group: under the Task
        call whose prompt is its first prompt (the CLI names the call nowhere else)."""
        prompt = digest(prompt_text(line.message)) if line.type == "user" else ""
        call, description = "", ""
        for tool_use_id, (asked, about) in self._spawns.items():
            if asked and asked == prompt:
                call, description = tool_use_id, about
                break
        if call:
            del self._spawns[call]
        self._agent = agent
        self._add(link_record(agent, call, text=description, timestamp=line.timestamp or ""))

    def _other_side(self, line: Line) -> None:
        """A main-agent response in a subagent's own file: not this conversation, but
        paid for. Its usage is kept on one hidden record per response, so usage counted
        from the records holds it too (ADR 0025)."""
        msg = line.message
        if msg is None or msg.usage is None:
            return
        usage = self._priced(msg.id or "", msg.usage)
        if usage is None:
            return
        self._carry(msg.id or "", self._paid(line, msg, usage, line.agent_id or ""))

    # -- records -----------------------------------------------------------------------
    def _file_record(self, line: Line) -> None:
        """A title the CLI gave the session, or a link it made (a pull request, a
        rendered artifact): about the file, not a link of the conversation chain."""
        rank = TITLE_RANK.get(line.type, 0)
        if rank:
            title = (line.custom_title if rank == 2 else line.ai_title) or ""
            if title and rank >= self._title_rank:
                self.title, self._title_rank = title, rank
            return
        if line.type == "pr-link" and line.pr_url:
            number = f"#{line.pr_number}" if line.pr_number is not None else ""
            text = f"pull request {line.pr_repository or ''}{number}: {line.pr_url}"
        elif line.type == "frame-link" and line.frame_url:
            text = f"{line.title or 'preview'}: {line.frame_url}"
        else:
            return
        self._add(
            Message(
                id=self._uid(line),
                kind="text",
                role="system",
                text=" ".join(text.split()),
                timestamp=line.timestamp or "",
            )
        )


# -- resuming a parse (the history index, ADR 0022) --------------------------------------

RESUME_VERSION = 2
"""Bump when the parse state below, or what the parser makes of a record, changes: a
state of another version makes the file be parsed again from its first byte."""


class ResumeState(SavedParse, msgspec.Struct, gc=False):
    """What ``HistoryParser`` needs to go on from an offset: exactly the parser's fields
    that shape a later record."""

    session_id: str = ""
    sidechain: bool | None = None
    title: str = ""
    title_rank: int = 0
    open_tools: dict[str, str] = {}
    """tool_use_id → tool name of calls with no result yet (a result names its tool)."""
    responses: list[Message] = []
    """The records carrying the latest responses' usage (a later line may change it)."""
    side_agents: dict[str, str] = {}
    inline_agents: list[str] = []
    spawns: dict[str, tuple[str, str]] = {}


class _Cwd(msgspec.Struct, gc=False):
    cwd: str = ""


_decode_state = msgspec.json.Decoder(ResumeState).decode
_decode_cwd = msgspec.json.Decoder(_Cwd).decode


class HistoryParser(TranscriptParser):
    """``TranscriptParser`` for the history index: records are taken out as they are
    parsed (``take``) — with an earlier one again when a later line changes the usage it
    carries — the working directory the records name is noted, and the parse state
    round-trips through ``state``/``resumed``.

    ``file_session``: the session the file is named after (``<session>.jsonl``). The CLI
    names a session's file by its id, while the records of a session continued from
    another (1.0.x ``--continue``) begin with copies that carry the old session's id, and
    a file can hold no record naming one at all (only ``queue-operation`` lines): the
    file's name is the session of a main transcript. A subagent's file names its
    parent's session in its records."""

    _KEPT: ClassVar[tuple[str, ...]] = (
        "session_id",
        "sidechain",
        "title",
        "_title_rank",
        "_side_agents",
    )

    def __init__(self, file_session: str = "") -> None:
        super().__init__()
        self.cwd = ""
        self.file_session = file_session

    def feed(self, block: memoryview) -> None:
        if not self.cwd:
            self._find_cwd(block)
        super().feed(block)

    def _find_cwd(self, block: memoryview) -> None:
        data = bytes(block)
        at = data.find(b'"cwd":')
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            try:
                self.cwd = _decode_cwd(data[start : len(data) if end < 0 else end]).cwd
            except DECODE_ERRORS:
                self.cwd = ""
            if self.cwd or end < 0:
                return
            at = data.find(b'"cwd":', end)

    def facts(self) -> TranscriptFacts:
        # A subagent's file names its parent's session; a main file is named by its own.
        session_id = self.session_id if self.agent_id else self.file_session or self.session_id
        parent = self.session_id if self.agent_id else ""
        return self._facts(session_id, parent, self.title)

    def state(self) -> bytes:
        return self._encoded(
            ResumeState,
            RESUME_VERSION,
            open_tools={k: name for k, (name, _) in self.open_tools.items()},
            responses=list(self._responses.values()),
            inline_agents=list(self._inline_agents),
            spawns=self._spawns,
        )

    @classmethod
    def resumed(cls, state: bytes, file_session: str = "") -> HistoryParser | None:
        """A parser that goes on where ``state`` was taken; ``None`` if it cannot."""
        saved = load_state(state, _decode_state, RESUME_VERSION)
        if saved is None:
            return None
        parser = cls(file_session)
        parser._restore(saved)
        parser.open_tools = {k: (name, {}) for k, name in saved.open_tools.items()}
        parser._responses = {m.message_id: m for m in saved.responses}
        parser._inline_agents = dict.fromkeys(saved.inline_agents)
        parser._spawns = {k: (v[0], v[1]) for k, v in saved.spawns.items()}
        return parser
