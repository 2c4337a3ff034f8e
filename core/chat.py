"""What a reader gets: the composed state of a run and its conversation (``Chat``), and
the records, dialogs, usage and evidence it is made of.

The seam (``core/seam.py``) re-exports every name here; this module holds the data so
the contract's own module stays the contract. The shapes are a published schema: new
fields only with defaults, never reordered (ADR 0005).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

__all__ = [
    "Activity",
    "Chat",
    "ChatState",
    "DialogOption",
    "DialogQuestion",
    "Drift",
    "Evidence",
    "Message",
    "MessageKind",
    "PackedUsage",
    "PendingApproval",
    "PendingDialog",
    "ProcessState",
    "SourceDrift",
    "TaskState",
    "Usage",
    "Visibility",
]

ChatState = Literal["idle", "working", "needs_input", "question", "ended"]
Activity = Literal["unknown", "working", "needs_input", "idle"]
TaskState = Literal["active", "blocked", "done"]
Visibility = Literal["visible", "inactive", "hidden"]
ProcessState = Literal["unknown", "alive", "gone"]


class DialogOption(msgspec.Struct, frozen=True, kw_only=True):
    label: str
    description: str = ""


class DialogQuestion(msgspec.Struct, frozen=True, kw_only=True):
    prompt: str
    header: str = ""
    options: list[DialogOption] = []
    multi_select: bool = False


class PendingDialog(msgspec.Struct, frozen=True, kw_only=True):
    """An open dialog the operator must answer (not a permission prompt)."""

    kind: Literal["question", "plan_approval"]
    tool_use_id: str = ""
    prompt: str = ""
    """The first (often only) question's text, or the plan for ``plan_approval``."""
    options: list[DialogOption] = []
    multi_select: bool = False
    questions: list[DialogQuestion] = []
    """Every question of a multi-question form, in order."""


class PendingApproval(msgspec.Struct, frozen=True, kw_only=True):
    """An open permission/approval prompt for one tool call."""

    tool_name: str
    tool_input: dict[str, Any] = {}
    tool_use_id: str = ""
    agent_id: str = ""
    """Set when a subagent asked (the provider's subagent id)."""


class Usage(msgspec.Struct, kw_only=True, gc=False):
    """Token usage, normalized: cached input is folded into ``input_tokens``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """How much of ``input_tokens`` was read from the cache (already included there)."""
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    """How much of ``input_tokens`` was written to the cache (already included there;
    Claude's ``cache_creation_input_tokens``, priced apart from plain input). The input
    neither read from nor written to the cache is ``input_tokens - cached_input_tokens -
    cache_write_tokens``."""

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_input_tokens += other.cached_input_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cache_write_tokens += other.cache_write_tokens


class PackedUsage(Usage, array_like=True, kw_only=True, gc=False):
    """A ``Usage`` encoded as the array of its five figures, in field order, instead of
    an object: what a usage view hands the store (``UsageView.rows``), which keeps a
    file's rows as they encode. The keys were over half of each stored row's bytes, and
    a first ``usage`` writes every row it reads (ADR 0063). Read as a ``Usage``; compared
    with ``==``, it equals only another ``PackedUsage``."""

    @classmethod
    def of(cls, usage: Usage) -> PackedUsage:
        return cls(**msgspec.structs.asdict(usage))


class Evidence(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Which signal decided a state, and when (what ``agentspool explain`` prints)."""

    source: str
    """``<channel>:<signal>``, e.g. ``hook:PermissionRequest``, ``transcript:tool_result``."""
    at: float = 0.0
    """Evidence time, seconds since the epoch (0 when the signal carries none)."""
    detail: str = ""


MessageKind = Literal[
    "text",
    "tool_call",
    "tool_result",
    "thinking",
    "summary",
    "interrupt",
    "error",
    "subagent",
    "compaction",
]
Role = Literal["user", "assistant", "system", "tool"]


class Message(msgspec.Struct, kw_only=True, gc=False):
    """One canonical transcript record, as every adapter emits it.

    ``seq`` is assigned in stream order and is stable across re-parses of a growing
    transcript: a record keeps its ``seq`` however often the file is read again.

    Plain data, never tracked by the cycle collector (``gc=False``, like ``Usage``,
    ``Evidence`` and the events): a long read builds tens of thousands, and tracking
    them made collections a fifth of a cold read (ADR 0009). Never put one in a
    reference cycle: it would not be freed.
    """

    seq: int = 0
    id: str
    """Stable, unique within the transcript identity (provider uuid, call id, …)."""
    kind: MessageKind
    role: Role
    text: str = ""
    timestamp: str = ""
    visibility: Visibility = "visible"
    is_meta: bool = False
    tool_name: str = ""
    tool_use_id: str = ""
    tool_input: dict[str, Any] | None = None
    presentation: str = ""
    """A tool call's presentation class: shell, edit, read, search, web, agent, question,
    plan, todo, mcp, other."""
    is_error: bool = False
    parent_id: str = ""
    """Parent record (provider tree) or, for a subagent's records, the spawning tool call."""
    agent_id: str = ""
    """Set on records that belong to a subagent/sidechain."""
    usage: Usage | None = None
    message_id: str = ""
    """The provider's API message/response id (the usage dedup key)."""
    model: str = ""
    """The model the transcript names for this record (set on records that carry
    ``usage`` at least; what prices it)."""


class SourceDrift(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What one evidence source held that its parser does not know (ADR 0014)."""

    unknown_types: dict[str, int] = {}
    """Record type not known to the parser → how many records of it (e.g.
    ``"event_msg:new_event": 3``; ``<type>:<kind>`` where a type has kinds)."""
    unknown_fields: list[str] = []
    """``<record type>.<field>`` of fields not known to the parser, sorted, each once. Only
    the first record of each type is checked (a field first seen later is not listed)."""
    corrupt: int = 0
    """Records that could not be read at all (not JSON, or a known field of a new type)."""

    def __bool__(self) -> bool:
        return bool(self.unknown_types or self.unknown_fields or self.corrupt)

    def describe(self) -> str:
        """One clause: ``3 records of unknown type (foo x3), 1 unknown field (a.b)``."""
        parts = []
        if self.unknown_types:
            count = sum(self.unknown_types.values())
            kinds = _some(f"{name} x{n}" for name, n in sorted(self.unknown_types.items()))
            parts.append(f"{count} record{'s' * (count != 1)} of unknown type ({kinds})")
        if self.unknown_fields:
            count = len(self.unknown_fields)
            parts.append(
                f"{count} unknown field{'s' * (count != 1)} ({_some(self.unknown_fields)})"
            )
        if self.corrupt:
            parts.append(f"{self.corrupt} unreadable record{'s' * (self.corrupt != 1)}")
        return ", ".join(parts)


def _some(names: Iterable[str], shown: int = 5) -> str:
    """The first few names, printable: they come from the evidence, not from us."""
    names = list(names)
    text = ", ".join(names[:shown]) + (
        f", +{len(names) - shown} more" if len(names) > shown else ""
    )
    return "".join(c if c.isprintable() else "?" for c in text)


class Drift(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Schema drift per evidence source, and the CLI version the transcript names.

    The CLIs ship a release a day: records and fields a parser does not know are never
    fatal, but they are not silent either (``agentspool read`` warns on one line).
    Counted over everything read so far, so it is the same on every re-read of the same
    evidence, however it was read (ADR 0014)."""

    cli_version: str = ""
    """The CLI's version as its transcript states it (``""`` when it states none)."""
    transcript: SourceDrift = msgspec.field(default_factory=SourceDrift)
    spool: SourceDrift = msgspec.field(default_factory=SourceDrift)
    """The hook payloads."""
    native: SourceDrift = msgspec.field(default_factory=SourceDrift)
    """The status file the CLI itself keeps, as of this read."""

    def __bool__(self) -> bool:
        return bool(self.transcript or self.spool or self.native)

    def describe(self) -> str:
        """``transcript: …; spool: …`` for each source with drift (``""`` with none)."""
        return "; ".join(
            f"{name}: {source.describe()}"
            for name, source in (
                ("transcript", self.transcript),
                ("spool", self.spool),
                ("native status", self.native),
            )
            if source
        )


class Chat(msgspec.Struct, kw_only=True):
    state: ChatState = "idle"
    activity: Activity = "unknown"
    task_state: TaskState = "active"
    task_reason: str = ""
    """Why the task is ``blocked`` (a declaration's reason); ``""`` otherwise."""
    pending_dialog: PendingDialog | None = None
    pending_approval: PendingApproval | None = None
    messages: list[Message] = []
    transcript_id: str = ""
    transcript_path: str = ""
    title: str = ""
    """The session's title as the CLI keeps it (one it generated, or one the user gave);
    ``""`` when the transcript names none."""
    usage: Usage = msgspec.field(default_factory=Usage)
    evidence: list[Evidence] = []
    """The signals behind ``state``, most decisive first."""
    drift: Drift = msgspec.field(default_factory=Drift)
    """Records and fields the adapter's parsers do not know, per source (ADR 0014)."""
    cwd: str = ""
    """The agent's working directory, as its evidence names it (``""``: not named)."""
    pid: int = 0
    """The agent process, as its evidence names it (0: not named)."""
    process: ProcessState = "unknown"
    """Whether that process still runs (checked against its start time, so a reused pid
    reads ``gone``). ``gone`` is terminal: core then reads the run as ``ended``."""
    task_declared: bool = False
    """Whether the run's ledger holds a task declaration (``task_state`` is otherwise the
    default, ``active``, that nobody said); set by core, never by an adapter."""
