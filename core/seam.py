"""The adapter contract: everything a provider implements and everything a reader gets.

Read this module to know the whole seam. A provider adapter is an object with the
required core of ``Adapter`` and, for each thing it can do beyond reading a run, a typed
part: an attribute that is either an object with that part's members or ``None``. The
presence of a part is the capability, so callers ask ``adapter.installer is not None``,
never ``getattr``; and because every part is declared here, mypy checks an adapter
against all of it wherever it meets the ``Adapter`` type (the registry's table, an
outside package's ``type[Adapter]`` line). ``Capabilities`` says the same in data, for
printing and for the conformance suite, which checks the two agree.

The parts:

- ``installer`` (``Installer``): arms our hooks once in the CLI's own settings;
  ``capabilities.install_scopes`` lists where.
- ``trust_gate`` (``TrustGate``): the CLI runs hooks only once trusted
  (``capabilities.hook_trust``); ``setup(trust="config")`` records the trust and
  ``untrust`` takes it out. Without it ``setup`` refuses ``trust="config"``.
- ``discovery`` (``SessionDiscovery``): finds the CLI's sessions from its own files, no
  hooks armed (``capabilities.discovers_sessions``), and reads one, with its subagents.
- ``session_files`` (``SessionFiles``): says whether a file is a transcript this CLI
  wrote (``agentspool show <path>``, ADR 0027).
- ``history`` (``TranscriptHistory``): lists every transcript file and resumes a parse
  from a byte offset (``capabilities.resumes_transcripts``, ADR 0022).
- ``lifecycle`` (``LifecycleCaller``): who runs ``agentspool lifecycle`` inside a run
  (ADR 0019), so a subagent cannot declare its parent's task state.
- ``hand_started`` (``HandStartedRuns``): names the hand-started run of the agent whose
  command this is, from the CLI's own variables, when the process ancestry cannot.
- ``live_state`` (``LiveState``): lets go of what the adapter keeps per run, once core
  reads the run as ended.

``read_chat(run_id, runtime_dir, transcript_path) -> Chat``, the four rules every
adapter keeps (ADR 0005):

1. ``transcript_path == ""``: the transcript is not located yet. Live signals are still
   consulted (a dialog can be open before any transcript exists); otherwise the result
   is an idle, empty chat, never an error. ``transcript_path=None``: the one the run's
   own evidence locates, as ``locate_transcript`` would, within the same read (one look
   at the spool for both).
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

Capabilities, not names: tests and core branch on parts and ``Adapter.capabilities``.

Reading one session whole (``SessionDiscovery.read_session_with_subagents``, ADR 0027)
is ``read_session`` whose ``messages`` also hold every subagent's records, from where
the CLI keeps each subagent's conversation (a file of its own, or a session of its own)
— the session's own records first, then each subagent's, every subagent's group opened
by a ``subagent`` link record whose ``parent_id`` is the spawning tool call (the one the
session's own stream holds, else one the adapter adds from the CLI's files), ``seq``
1…n over the whole, ``usage`` summed. ``(agent_id, id)`` is unique in it. It is for a
reading of the whole session at once: a subagent's records come after the session's
own, so the ``seq`` of a subagent's record moves as the session's own transcript grows.
The history index stores a session so when its adapter has no ``history`` part (it
re-reads the whole session anyway, and a subagent kept as a session has no file to
list).

Resumable transcript parsing (the ``history`` part; ADR 0022): the adapter lists every
transcript file its CLI keeps on this machine (``transcript_files``) and parses one
from a byte offset with a state it handed out before (``resume_transcript``), so the
history index (``core/history.py``) pays for what a file gained, not for the file. An
adapter without it is indexed through ``discovery.sessions(0.0)`` and ``read_session``,
re-read whole whenever its file changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal, Protocol

import msgspec

from agentspool.core.chat import (
    Activity,
    Chat,
    ChatState,
    DialogOption,
    DialogQuestion,
    Drift,
    Evidence,
    Message,
    MessageKind,
    PackedUsage,
    PendingApproval,
    PendingDialog,
    ProcessState,
    Role,
    SourceDrift,
    TaskState,
    Usage,
    Visibility,
)
from agentspool.spool.errors import TranscriptGoneError

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
    "HandStartedRuns",
    "InstallReport",
    "InstallScope",
    "InstalledFile",
    "InstalledHook",
    "Installer",
    "KeptUsage",
    "LifecycleCaller",
    "LiveState",
    "Message",
    "MessageKind",
    "PackedUsage",
    "PendingApproval",
    "PendingDialog",
    "ProcessState",
    "ResumedParse",
    "Role",
    "Session",
    "SessionDiscovery",
    "SessionFiles",
    "SourceDrift",
    "Spawn",
    "TaskState",
    "TranscriptFacts",
    "TranscriptFile",
    "TranscriptGoneError",
    "TranscriptHistory",
    "Trust",
    "TrustGate",
    "Usage",
    "UsageView",
    "Visibility",
]

Trust = Literal["bypass", "config"]
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
    action: Literal["created", "updated", "removed", "unchanged", "absent"]
    """``absent``: there is no such file, so nothing of ours was there to take out."""
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
        return any(f.action not in ("unchanged", "absent") for f in self.files)


class Adapter(Protocol):
    """A provider adapter: the required core, and one attribute per optional part
    (``None``: the adapter has no such part). Implementations are classes; the
    spool-backed ones share ``agentspool.adapters.common.spooled.SpoolBackedAdapter``."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    executable: ClassVar[str]
    """The agent CLI's command name as found on ``PATH`` (``agentspool run`` spawns it);
    ``""`` for an adapter whose agent is not a command."""

    def read_chat(self, run_id: str, runtime_dir: str, transcript_path: str | None) -> Chat:
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

        ``trust``/``config_home`` matter only with a ``trust_gate``; an adapter without
        one refuses ``trust="config"`` (``UnsupportedError``).
        """
        ...

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        """Cheap stat-only digest that changes whenever the run's live evidence changes."""
        ...

    @property
    def installer(self) -> Installer | None: ...
    @property
    def trust_gate(self) -> TrustGate | None: ...
    @property
    def discovery(self) -> SessionDiscovery | None: ...
    @property
    def session_files(self) -> SessionFiles | None: ...
    @property
    def history(self) -> TranscriptHistory | None: ...
    @property
    def lifecycle(self) -> LifecycleCaller | None: ...
    @property
    def hand_started(self) -> HandStartedRuns | None: ...
    @property
    def live_state(self) -> LiveState | None: ...


class Installer(Protocol):
    """Arms our hooks once, in the CLI's own settings, for every run."""

    def install(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        """Arm them at a scope listed in ``capabilities.install_scopes``. ``directory``:
        the CLI's config dir for ``user`` (default: where the CLI looks), the project dir
        for ``project`` (default: the cwd). Merges, never overwrites; installing again
        changes nothing."""
        ...

    def uninstall(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        """Remove exactly what ``install`` added (found by our hook command)."""
        ...

    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]:
        """The hooks ``install`` put in the user's settings (under ``directory``, default
        where the CLI looks), as they are there now (``agentspool doctor``)."""
        ...


class TrustGate(Protocol):
    """The trust ``setup(trust="config")`` records in the CLI's config."""

    def untrust(self, config_home: str | None = None) -> bool:
        """Remove the trust ``setup(trust="config")`` recorded; False if there was none."""
        ...


class SessionDiscovery(Protocol):
    """Sessions from the CLI's own files, for runs no hook spool covers."""

    def sessions(self, since: float) -> list[Session]:
        """Every session whose process is alive, and those whose transcript changed at or
        after ``since`` (epoch seconds)."""
        ...

    def read_session(self, session: Session) -> Chat:
        """A session's state from what the CLI itself keeps (transcript, native status).
        Raises ``TranscriptGoneError`` as ``read_chat`` does."""
        ...

    def read_session_with_subagents(self, session: Session) -> Chat:
        """``read_session`` with every subagent's records (module docstring)."""
        ...


class SessionFiles(Protocol):
    def session_at(self, path: str) -> Session | None:
        """Whether the file at ``path`` is a transcript this CLI wrote, and which session
        it holds (``None``: not this CLI's)."""
        ...


class LifecycleCaller(Protocol):
    def lifecycle_caller(
        self, run_id: str, runtime_dir: str, pid: int, environ: Mapping[str, str]
    ) -> str | None:
        """Who runs ``agentspool lifecycle`` as process ``pid`` with ``environ`` in the
        run: the subagent's id, ``""`` for the main agent, ``None`` when its evidence
        cannot tell (ADR 0019)."""
        ...


class HandStartedRuns(Protocol):
    def own_run(self, runtime_dir: str, environ: Mapping[str, str]) -> list[str]:
        """The hand-started run of the agent whose command has ``environ``, from the
        CLI's own variables (a sandbox can hide the agent process from its commands)."""
        ...


class LiveState(Protocol):
    def release_run(self, run_id: str, runtime_dir: str | None = None) -> None:
        """Let go of what the adapter keeps for the run (in ``runtime_dir``, or in all)."""
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


class KeptUsage(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """A record that carries usage, as ``usage`` reads it: a usage view's row
    (``UsageView.rows``), what a usage-first index keeps of it (a JSON array of these),
    and what a session's usage is read back as (``SessionStore.usage_by_session``)."""

    seq: int
    timestamp: str
    model: str
    message_id: str
    usage: Usage


class UsageView(msgspec.Struct, kw_only=True, gc=False):
    """What ``usage`` reads of one transcript file, read from its first byte
    (``TranscriptHistory.usage_view``; ADR 0043): what a usage-first index stores of a
    file until its records are written."""

    rows: list[KeptUsage]
    """Each record that carries usage, in file order, with the usage a full parse's record
    carries (a ``PackedUsage``: the store keeps it in half the bytes); ``seq`` grows with
    the place in the file and is unique within it (the full parse's, or where the view
    reads no records the line's number or its byte offset)."""
    facts: TranscriptFacts
    """The session's facts; a view may leave the CLI's ``title`` out: the store takes it
    with the records (ADR 0063)."""
    first: str
    """The first and the last record's timestamp, in file order (the session's span:
    ADR 0057)."""
    last: str
    title: str = ""
    """The first prompt's title (``prompt_title``); ``""`` where the view reads no prompt."""
    count: int = 0
    """Records of the file's parse; 0 where the view makes no records."""


class TranscriptHistory(Protocol):
    """The ``history`` part (``capabilities.resumes_transcripts``; ADR 0022)."""

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

    def usage_view(self, path: str) -> UsageView:
        """What ``usage`` reads of ``path``, from its first byte, through the narrowest
        reading of the format that gives every response's usage as the full parse
        counts it, and the session's facts and span (ADR 0043). ``full_usage_view`` of
        a fresh ``resume_transcript`` where the format allows nothing narrower."""
        ...
