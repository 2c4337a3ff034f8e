"""The adapter contract: everything a provider implements and everything a reader gets.

Read this module to know the whole seam. A provider adapter is an object with the
members of ``Adapter``; it is registered by name in ``registry.py`` and thereby enrolled
in the shipped Tier-1 conformance suite (``agentspool.adapters.testing``).

``read_chat(run_id, runtime_dir, transcript_path) -> Chat``, the four rules every
adapter keeps (ADR 0005):

1. ``transcript_path == ""``: the transcript is not located yet. Live signals are still
   consulted (a dialog can be open before any transcript exists); otherwise the result
   is an idle, empty chat, never an error.
2. A non-empty ``transcript_path`` that does not exist raises ``TranscriptGoneError``.
3. ``runtime_dir == ""``: live signals are off and the read is transcript-only. Ended
   runs are read this way, so spool residue never contaminates a terminal state.
4. A pending dialog travels in ``Chat.pending_dialog`` (an open permission prompt in
   ``Chat.pending_approval``), never as a synthetic message, so ``seq`` numbers stay
   stable across re-parses.

``Chat.drift`` counts, per evidence source, the records and fields the adapter's parsers
do not know, with the CLI version the transcript names: never fatal, never silent.

``Chat.state`` is the five-word wire vocabulary (byte-stable once published):

- ``idle``        nothing has happened yet: no turn started
- ``working``     a turn is open: the model generates or a tool runs
- ``needs_input`` the agent waits on the operator: its turn ended, or a permission
                  prompt is open (``pending_approval`` says which tool)
- ``question``    a dialog is open (question form, plan approval); ``pending_dialog``
- ``ended``       the run reached a terminal outcome; set by core, never by an adapter

Capabilities, not names: tests and core branch on ``Adapter.capabilities``.

Optional members (looked up with ``getattr``; an adapter without them loses only that):
``release_run(run_id)`` lets go of what it keeps per run; ``lifecycle_caller(run_id,
runtime_dir, pid, environ) -> str | None`` says who runs ``agentspool lifecycle`` as
process ``pid`` with ``environ`` in the run — the subagent's id, ``""`` for the main
agent, ``None`` when its evidence cannot tell — so a subagent cannot declare its
parent's task state; ``own_run(runtime_dir, environ) -> list[str]`` names the
hand-started run of the agent whose command has ``environ``, from the CLI's own
variables, when the process ancestry cannot (ADR 0019).

Two more optional members serve reading one session whole (``agentspool show``, ADR
0027): ``session_at(path) -> Session | None`` says whether the file at ``path`` is a
transcript this CLI wrote, and which session it holds (``None``: not this CLI's);
``read_session_with_subagents(session) -> Chat`` is ``read_session`` whose ``messages``
also hold every subagent's records, from where the CLI keeps each subagent's
conversation (a file of its own, or a session of its own) — the session's own
records first, then each subagent's, every subagent's group opened by a ``subagent``
link record whose ``parent_id`` is the spawning tool call (the one the session's own
stream holds, else one the adapter adds from the CLI's files), ``seq`` 1…n over the
whole, ``usage`` summed. ``(agent_id, id)`` is unique in it. It is for a reading of the
whole session at once: a subagent's records come after the session's own, so the
``seq`` of a subagent's record moves as the session's own transcript grows. The history
index stores a session so when its adapter does not resume transcripts (it re-reads the
whole session anyway, and a subagent kept as a session has no file to list).

Resumable transcript parsing (``capabilities.resumes_transcripts``; ADR 0022): the
adapter is also a ``TranscriptHistory``. It lists every transcript file its CLI keeps on
this machine (``transcript_files``) and parses one from a byte offset with a state it
handed out before (``resume_transcript``), so the history index (``core/history.py``)
pays for what a file gained, not for the file. An adapter without it is indexed through
``sessions(0.0)`` and ``read_session``, re-read whole whenever its file changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import msgspec

from agentspool.errors import TranscriptGoneError

if TYPE_CHECKING:  # sweeping is rare; its module (shutil, dataclasses) is not read-path cost
    from agentspool.spool.sweep import SweepReport

__all__ = [
    "Activity",
    "Adapter",
    "Capabilities",
    "Chat",
    "ChatState",
    "DialogOption",
    "DialogQuestion",
    "Drift",
    "Evidence",
    "InstallReport",
    "InstallScope",
    "InstalledFile",
    "Message",
    "PendingApproval",
    "PendingDialog",
    "ProcessState",
    "ResumedParse",
    "Session",
    "SourceDrift",
    "Spawn",
    "TaskState",
    "TranscriptFacts",
    "TranscriptFile",
    "TranscriptGoneError",
    "TranscriptHistory",
    "Trust",
    "Usage",
    "Visibility",
]

ChatState = Literal["idle", "working", "needs_input", "question", "ended"]
Activity = Literal["unknown", "working", "needs_input", "idle"]
TaskState = Literal["active", "blocked", "done"]
Visibility = Literal["visible", "inactive", "hidden"]
Trust = Literal["bypass", "config"]
ProcessState = Literal["unknown", "alive", "gone"]
InstallScope = Literal["user", "project"]


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    live_signals: bool
    """Reads a hook spool under ``runtime_dir`` (so ``runtime_dir=""`` changes the read)."""
    native_status: bool = False
    """Also reads a status file the CLI itself keeps (a per-process status file)."""
    attests_supersession: bool = False
    """The provider marks superseded records itself (branch, undo, rewind) → ``inactive``."""
    follows_clear: bool = True
    """``/clear`` starts a new transcript identity that ``locate_transcript`` follows."""
    hook_trust: bool = False
    """The CLI runs hooks only once trusted: ``setup(trust="config")`` records the trust
    in the CLI's config (``untrust`` reverses it); ``trust="bypass"`` uses a flag."""
    install_scopes: tuple[InstallScope, ...] = ()
    """Where ``install`` can arm hooks once for every run of the CLI: in the user's own
    settings (``user``), in a project's (``project``). Empty: not supported."""
    discovers_sessions: bool = False
    """``sessions`` finds the CLI's sessions from its own files (no hooks armed), and
    ``read_session`` reads one from what the CLI itself keeps."""
    resumes_transcripts: bool = False
    """The adapter is a ``TranscriptHistory`` too: it lists every transcript file of its
    CLI and parses one from where an earlier parse stopped (ADR 0022)."""
    unique_response_ids: bool = False
    """Every ``Message.message_id`` is the API's own response id, unique across sessions:
    a response copied into another session's file (a resumed or forked session) is the
    same response whatever time the copy is stamped with (``usage``, ADR 0025)."""


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """A session the CLI's own files show (``Adapter.sessions``): armed or not."""

    session_id: str
    transcript_path: str
    pid: int = 0
    """The agent process, when the CLI's files name it (0: they do not)."""
    process: ProcessState = "unknown"
    cwd: str = ""
    watched: tuple[str, ...] = ()
    """Files besides the transcript whose stat moves when the session's state may have
    (a native status file): a watcher re-reads the session when one does (ADR 0020)."""
    version: int = 0
    """For a transcript kept among others in shared files (a database): a number that
    grows whenever this session's records (its subagents' included) change, where the
    CLI keeps one; 0 when it does not. The history index then re-reads the session only
    when it grew, not whenever the shared files changed."""


class Spawn(msgspec.Struct, frozen=True, kw_only=True):
    """What a spawn wrapper adds to the agent's command line and environment."""

    args: list[str]
    env: dict[str, str] = {}
    settings_path: str = ""
    run_dir: str = ""


class InstalledFile(msgspec.Struct, frozen=True, kw_only=True):
    """One file ``install``/``uninstall`` looked at, and what it did to it."""

    path: str
    action: Literal["created", "updated", "removed", "unchanged"]
    backup: str = ""
    """Where the file as it was before agentspool first added to it is kept ("" if none)."""


class InstalledHook(msgspec.Struct, frozen=True, kw_only=True):
    """One hook ``agentspool install`` put in a CLI's own settings, as found there now
    (``agentspool doctor``)."""

    path: str
    """The settings file (or plugin file) holding it."""
    event: str
    command: str = ""
    """The shell command the CLI runs; ``""`` for a plugin the CLI loads itself."""
    current: bool = True
    """Whether it is what this agentspool would install (else an older or another one's)."""


class InstallReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``install``/``uninstall`` did: every file it looked at, in order."""

    provider: str
    scope: InstallScope
    files: list[InstalledFile]

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)


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
    role: Literal["user", "assistant", "system", "tool"]
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


class Adapter(Protocol):
    """A provider adapter. Implementations are plain classes; nothing to inherit."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    executable: ClassVar[str]
    """The agent CLI's command name as found on ``PATH`` (``agentspool run`` spawns it);
    ``""`` for an adapter whose agent is not a command."""

    def read_chat(self, run_id: str, runtime_dir: str, transcript_path: str) -> Chat:
        """Compose the run's state and conversation (module docstring: the four rules)."""
        ...

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        """The run's current transcript path; ``""`` while not known. Follows ``/clear``."""
        ...

    def setup(
        self,
        run_id: str,
        runtime_dir: str,
        *,
        trust: Trust = "bypass",
        config_home: str | None = None,
    ) -> Spawn:
        """Render per-run hook settings into the run dir; return what to add to the spawn.

        ``trust``/``config_home`` matter only with ``capabilities.hook_trust``; an adapter
        without a trust gate refuses ``trust="config"`` (``UnsupportedError``).
        """
        ...

    def untrust(self, config_home: str | None = None) -> bool:
        """Remove the trust ``setup(trust="config")`` recorded; False if there was none."""
        ...

    def install(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        """Arm our hooks once, in the CLI's own settings, for every run (a scope listed
        in ``capabilities.install_scopes``). ``directory``: the CLI's config dir for
        ``user`` (default: where the CLI looks), the project dir for ``project``
        (default: the cwd). Merges, never overwrites; installing again changes nothing."""
        ...

    def uninstall(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        """Remove exactly what ``install`` added (found by our hook command)."""
        ...

    def sessions(self, since: float) -> list[Session]:
        """Sessions the CLI's own files show: every one whose process is alive, and
        those whose transcript changed at or after ``since`` (epoch seconds). ``[]``
        without ``capabilities.discovers_sessions``."""
        ...

    def read_session(self, session: Session) -> Chat:
        """A session's state from what the CLI itself keeps (transcript, native status),
        for a session no hook spool covers. Raises ``TranscriptGoneError`` as
        ``read_chat`` does."""
        ...

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        """Cheap stat-only digest that changes whenever the run's live evidence changes."""
        ...

    def sweep(self, runtime_dir: str, keep: Iterable[str], *, dry_run: bool = False) -> SweepReport:
        """Remove spools of runs outside ``keep`` (delegates to ``spool.sweep``)."""
        ...


class TranscriptFile(msgspec.Struct, frozen=True, kw_only=True):
    """A transcript file the CLI keeps on this machine (``transcript_files``)."""

    path: str
    whole: bool = False
    """Read only from its start (a compressed file: no byte offset leads into it). Such a
    file is re-read whole whenever it changes; the CLIs write them once, finished."""
    within: tuple[str, ...] = ()
    """Set when ``path`` names a transcript kept among others in shared files (a CLI's
    database), not a file of its own: those files, whose stat stands for the
    transcript's. It is read whole (``read_session``) whenever one of them changed —
    whenever ``version`` grew, when that is known — and gone once no session lists it."""
    version: int = 0
    """``Session.version`` of the session ``path`` names (0: not known)."""


class TranscriptFacts(msgspec.Struct, kw_only=True):
    """What a parse learned about the session a transcript file holds."""

    session_id: str = ""
    """The CLI's session id (a Claude Code subagent's file names its parent's)."""
    agent_id: str = ""
    """Set when the file is a subagent's own conversation."""
    parent_session_id: str = ""
    """The session that spawned the subagent; for a main session (no ``agent_id``), the
    one its transcript says it was copied from (a fork), else ``""``."""
    cwd: str = ""
    cli_version: str = ""
    title: str = ""
    """The session's title as the CLI keeps it (one it generated, or one the user gave);
    ``""`` when it keeps none (the history then titles the session by its first prompt)."""


class ResumedParse(Protocol):
    """One transcript file parsed from a byte offset (``resume_transcript``).

    ``read`` parses about ``limit`` more bytes — whole lines only; a torn last line is
    left for a later parse — and returns the records that are new or changed since the
    last ``read`` (or since the state it resumed from), each with its final ``seq``: a
    record appended bytes change (a usage record that prices an earlier reply) comes
    again with its old ``seq``. At the end of the file it returns ``[]`` and ``offset``
    stops moving. ``state()`` encodes what the parse must remember to go on from
    ``offset`` (opaque bytes, versioned by the adapter).
    """

    fresh: bool
    """The parse started at the file's first byte (no state given, or one this adapter
    cannot resume from): its records are the file's whole parse from seq 1."""
    offset: int
    """Bytes of the file parsed so far (whole lines)."""

    @property
    def count(self) -> int:
        """Records of the file's parse so far: the highest ``seq``."""
        ...

    def read(self, limit: int) -> list[Message]: ...

    def state(self) -> bytes: ...

    def facts(self) -> TranscriptFacts: ...


class TranscriptHistory(Protocol):
    """What an adapter with ``capabilities.resumes_transcripts`` also has (ADR 0022)."""

    def transcript_files(self) -> list[TranscriptFile]:
        """Every transcript file of the CLI on this machine, subagents' files included,
        where the CLI keeps them (its config dir, as the environment names it)."""
        ...

    def resume_transcript(self, path: str, offset: int, state: bytes) -> ResumedParse:
        """Parse ``path`` from ``offset`` with a ``state`` an earlier parse of the same file
        returned at that offset; ``offset=0``/``state=b""`` (or a state this adapter
        version cannot use) starts at the first byte (``fresh``). The caller has checked
        that the bytes before ``offset`` are the ones that were parsed."""
        ...
