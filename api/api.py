"""The public library functions, each a thin call through the provider's adapter.

One convention for every argument: ``None`` means "the default" — the default runtime
dir (``default_runtime_dir()``), the transcript located from the run's own evidence
(``locate_transcript``). A transcript-only read is ``live=False``; an empty string never
carries a second meaning here (it does on the adapter seam, ``agentspool.core.seam``).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from agentspool.adapters import registry
from agentspool.core.reducer import Step
from agentspool.core.replay import Transition
from agentspool.core.runs import RunSummary
from agentspool.core.seam import (
    Adapter,
    Chat,
    InstallReport,
    InstallScope,
    Session,
    Spawn,
    TaskState,
    Trust,
)
from agentspool.errors import (
    AgentspoolError,
    DeclarationError,
    TranscriptGoneError,
    UnsupportedError,
)
from agentspool.spool.layout import (
    DEFAULT_MIN_IDLE,
    default_runtime_dir,
    open_run_dir_to_read,
    run_dir,
)
from agentspool.spool.write import LEDGER_FILE, RUN_ID_ENV, RUNTIME_DIR_ENV

if TYPE_CHECKING:
    from agentspool.core.history import IndexReport
    from agentspool.core.store import SearchHit, SessionStore, StoredSession, UsageRecord
    from agentspool.core.usage import SessionInfo, UsageGrouping, UsageReport
    from agentspool.spool.sweep import SweepReport

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_MIN_IDLE",
    "Declaration",
    "Explanation",
    "Replay",
    "RunPoll",
    "TidyReport",
    "TidyRun",
    "Transition",
    "declare",
    "default_store_path",
    "index_history",
    "install",
    "list_runs",
    "locate_transcript",
    "open_history",
    "poll_runs",
    "providers",
    "read_chat",
    "replay",
    "run",
    "run_key",
    "run_provider",
    "search_history",
    "setup",
    "spool_sig",
    "sweep_spools",
    "tidy",
    "uninstall",
    "untrust",
    "usage",
]


def providers() -> list[str]:
    """The names of every registered provider adapter (built-in and installed)."""
    return registry.names()


RECENT_SESSIONS = 3600.0
"""``list_runs`` shows sessions no hook armed whose transcript changed this recently."""


def list_runs(
    runtime_dir: str | None = None,
    *,
    include_ended: bool = False,
    sessions: bool = True,
    warnings: list[str] | None = None,
) -> list[RunSummary]:
    """Every run that is live (``include_ended``: ended ones too), one ``RunSummary``
    each, most urgent first: waiting on the operator (longest first), then working,
    then idle, then ended.

    Runs are the runtime dir's (armed by a wrapper or by installed hooks) and, with
    ``sessions``, the sessions the CLIs' own files show that no run covers (their
    ``run_id`` is ``""``): a live one is listed whenever its process is known to run; one
    whose process is not known (only its transcript changed in the last
    ``RECENT_SESSIONS`` seconds) only with ``include_ended``.

    One run that cannot be read (its run dir not private, its transcript a directory
    or a FIFO: ``unreadable_run``) is left out and described in ``warnings`` (one line
    each), never fails the list. A runtime dir that is not private still raises.
    """
    import time

    from agentspool.core import runs
    from agentspool.core.reader import read_session

    runtime = _runtime(runtime_dir)
    found = []
    covered: set[str] = set()
    for ref in runs.run_dirs(runtime, registry.names()):
        if not ref.provider:
            continue  # a dir no registered adapter can read
        try:
            chat = _read_run(ref.provider, ref.run_id, runtime)
        except UNREADABLE_RUN as exc:
            if warnings is not None:
                warnings.append(unreadable_run(ref.provider, ref.run_id, exc))
            continue
        covered |= {chat.transcript_id, chat.transcript_path} - {""}
        if chat.state != "ended" or include_ended:
            found.append(runs.summarize(ref.provider, ref.run_id, chat))
    since = time.time() - RECENT_SESSIONS
    for provider in registry.names() if sessions else ():
        adapter = registry.load(provider)
        if not adapter.capabilities.discovers_sessions:
            continue
        for session in adapter.sessions(since):
            if session.session_id in covered or session.transcript_path in covered:
                continue
            try:
                chat = read_session(adapter, session)
            except TranscriptGoneError:
                continue  # deleted between the listing and the read
            except UNREADABLE_RUN as exc:
                if warnings is not None:
                    warnings.append(unreadable_run(provider, session.session_id, exc))
                continue
            if (chat.state != "ended" and chat.process == "alive") or include_ended:
                found.append(runs.summarize(provider, "", chat))
    return runs.by_urgency(found)


UNREADABLE_RUN = (AgentspoolError, OSError)
"""What reading one run may raise that is that run's alone (a run dir not private, a
transcript that is a directory or a FIFO): the listing goes on without it."""


def unreadable_run(provider: str, run_id: str, exc: BaseException) -> str:
    """The one warning line for a run left out of a listing."""
    return f"{provider} run {run_id}: left out: {exc}"


def _read_run(provider: str, run_id: str, runtime: str) -> Chat:
    try:
        return read_chat(provider, run_id, runtime)
    except TranscriptGoneError:
        return read_chat(provider, run_id, runtime, "", ended=True)


class RunPoll(msgspec.Struct, kw_only=True):
    """What ``poll_runs`` saw: pass it back as ``previous`` to the next poll."""

    sigs: dict[str, str] = {}
    """Every run's key → its signature (stat only) when it was last taken."""
    runs: dict[str, RunSummary] = {}
    """Every run's key → its summary, ended ones and unlisted sessions included."""
    listed: list[str] = []
    """The keys ``list_runs`` would list (with its ``include_ended``), most urgent first."""
    changed: list[str] = []
    """The keys whose signature moved since ``previous``: new, re-read, or gone."""
    sessions: dict[str, Session] = {}
    """Sessions no run covers, by key: re-signed without listing the CLIs' files again."""
    quiet: list[str] = []
    """Sessions whose process is not known to run (listed only with ``include_ended``)."""
    stamps: dict[str, str] = {}
    """Every run's key → the stat of its event spool, which every hook appends to (what a
    poll with ``full=False`` compares)."""
    listing: str = ""
    """The runtime dir's own stat when its run dirs were listed."""
    warnings: dict[str, str] = {}
    """Every run left out because it cannot be read → its warning line
    (``unreadable_run``); the others are listed all the same."""


def run_key(summary: RunSummary) -> str:
    """The key ``poll_runs`` files a run under: ``provider:run_id`` for a run, and
    ``provider:session:<session id>`` for a session no hook armed."""
    if summary.run_id:
        return f"{summary.provider}:{summary.run_id}"
    return f"{summary.provider}:session:{summary.session_id}"


def poll_runs(
    previous: RunPoll | None = None,
    runtime_dir: str | None = None,
    *,
    include_ended: bool = False,
    sessions: bool = True,
    discover: bool = True,
    full: bool = True,
) -> RunPoll:
    """``list_runs`` for a watcher: every run's signature is taken (``spool_sig``; for a
    session no hook armed, the stat of its transcript and process), and only runs whose
    signature moved since ``previous`` are read again. Runs nothing wrote to cost a stat.

    ``discover=False`` re-signs the sessions ``previous`` knew without listing the CLIs'
    files again (that listing globs every transcript: a watcher does it less often).

    ``full=False`` is the cheaper poll a watcher makes between full ones (one ``stat`` per
    run): only the runs whose event spool a hook appended to since ``previous`` are
    signed and read; everything else — transcripts, status files, processes, the
    ledger's declarations, sessions — keeps what ``previous`` saw. A run dir created or
    removed meanwhile makes it a full poll.
    """
    from agentspool.spool.signature import listing_stamp

    before = previous or RunPoll()
    runtime = _runtime(runtime_dir)
    if not full and previous is not None and listing_stamp(runtime) == before.listing:
        return _poll_hooked(before, runtime, include_ended=include_ended)
    return _poll_all(
        before, runtime, include_ended=include_ended, sessions=sessions, discover=discover
    )


def _poll_all(
    before: RunPoll, runtime: str, *, include_ended: bool, sessions: bool, discover: bool
) -> RunPoll:
    import time

    from agentspool.core import runs
    from agentspool.core.reader import read_session
    from agentspool.spool.signature import listing_stamp, paths_sig, spool_stamps

    names = registry.names()
    runtime_stamp = listing_stamp(runtime)  # before the listing: a run dir made after moves it
    # A run's provider is read once; again when discovering (a run dir set up again).
    known = {} if discover else {s.run_id: s.provider for s in before.runs.values() if s.run_id}
    refs = [ref for ref in runs.run_dirs(runtime, names, known) if ref.provider]
    stamps = spool_stamps(runtime, [ref.run_id for ref in refs])
    sigs: dict[str, str] = {}
    found: dict[str, RunSummary] = {}
    changed: list[str] = []
    warnings: dict[str, str] = {}
    for ref in refs:
        key = f"{ref.provider}:{ref.run_id}"
        try:
            sigs[key], found[key], read = _resign(before, key, ref.provider, ref.run_id, runtime)
        except UNREADABLE_RUN as exc:
            warnings[key] = unreadable_run(ref.provider, ref.run_id, exc)
            continue
        if read:
            changed.append(key)
    covered = {c for s in found.values() for c in (s.session_id, s.transcript_path)} - {""}
    unarmed: dict[str, Session] = {}
    quiet: list[str] = []  # sessions whose process is not known to run
    if sessions:
        if discover:
            since = time.time() - RECENT_SESSIONS
            listing = [
                (provider, session)
                for provider in names
                if registry.load(provider).capabilities.discovers_sessions
                for session in registry.load(provider).sessions(since)
            ]
        else:
            listing = [(key.partition(":")[0], s) for key, s in before.sessions.items()]
        for provider, session in listing:
            if session.session_id in covered or session.transcript_path in covered:
                continue
            key = f"{provider}:session:{session.session_id}"
            # /proc/<pid>/exe: a killed agent left unreaped keeps /proc/<pid> but not it
            proc = (f"/proc/{session.pid}", f"/proc/{session.pid}/exe") if session.pid else ()
            watched = (session.transcript_path, *session.watched, *proc)
            sig = f"{session.process}+{paths_sig(watched)}"
            summary = before.runs.get(key)
            if summary is None or before.sigs.get(key) != sig:
                try:
                    chat = read_session(registry.load(provider), session)
                except TranscriptGoneError:
                    continue  # deleted between the listing and the read
                except UNREADABLE_RUN as exc:
                    warnings[key] = unreadable_run(provider, session.session_id, exc)
                    continue
                summary = runs.summarize(provider, "", chat)
                changed.append(key)
                if chat.process != "alive":
                    quiet.append(key)
            elif key in before.quiet:
                quiet.append(key)
            sigs[key] = sig
            unarmed[key] = session
            found[key] = summary
    changed += [key for key in before.sigs if key not in sigs]
    return _finish(
        found,
        include_ended=include_ended,
        sigs=sigs,
        changed=changed,
        sessions=unarmed,
        quiet=quiet,
        stamps={f"{ref.provider}:{ref.run_id}": stamps.get(ref.run_id, "") for ref in refs},
        listing=runtime_stamp,
        warnings=warnings,
    )


def _poll_hooked(before: RunPoll, runtime: str, *, include_ended: bool) -> RunPoll:
    """The runs of ``before`` a hook appended to since, signed and read again."""
    from agentspool.spool.signature import spool_stamps

    armed = {key: s for key, s in before.runs.items() if s.run_id}
    now = spool_stamps(runtime, [s.run_id for s in armed.values()])
    moved = [key for key, s in armed.items() if now.get(s.run_id, "") != before.stamps.get(key)]
    if not moved:
        return msgspec.structs.replace(before, changed=[])
    found = dict(before.runs)
    sigs = dict(before.sigs)
    stamps = dict(before.stamps)
    changed: list[str] = []
    warnings = dict(before.warnings)
    for key in moved:
        run = armed[key]
        stamps[key] = now.get(run.run_id, "")
        try:
            sigs[key], found[key], read = _resign(before, key, run.provider, run.run_id, runtime)
        except UNREADABLE_RUN as exc:
            warnings[key] = unreadable_run(run.provider, run.run_id, exc)
            del found[key]
            sigs.pop(key, None)
            changed.append(key)
            continue
        warnings.pop(key, None)
        if read:
            changed.append(key)
    if not changed:
        return msgspec.structs.replace(before, sigs=sigs, stamps=stamps, changed=[])
    return _finish(
        found,
        include_ended=include_ended,
        sigs=sigs,
        changed=changed,
        sessions=before.sessions,
        quiet=before.quiet,
        stamps=stamps,
        listing=before.listing,
        warnings=warnings,
    )


def _resign(
    before: RunPoll, key: str, provider: str, run_id: str, runtime: str
) -> tuple[str, RunSummary, bool]:
    """One run's signature now, and its summary: read again if the signature moved since
    ``before`` (then ``True``), else the one ``before`` had."""
    from agentspool.core import runs

    sig = spool_sig(provider, run_id, runtime)
    summary = before.runs.get(key)
    if summary is not None and before.sigs.get(key) == sig:
        return sig, summary, False
    return sig, runs.summarize(provider, run_id, _read_run(provider, run_id, runtime)), True


def _finish(
    found: dict[str, RunSummary],
    *,
    include_ended: bool,
    sigs: dict[str, str],
    changed: list[str],
    sessions: dict[str, Session],
    quiet: list[str],
    stamps: dict[str, str],
    listing: str,
    warnings: dict[str, str],
) -> RunPoll:
    from agentspool.core import runs

    hidden = {k for k, s in found.items() if s.state == "ended"} | set(quiet)
    shown = [s for k, s in found.items() if include_ended or k not in hidden]
    return RunPoll(
        sigs=sigs,
        runs=found,
        listed=[run_key(s) for s in runs.by_urgency(shown)],
        changed=changed,
        sessions=sessions,
        quiet=quiet,
        stamps=stamps,
        listing=listing,
        warnings=warnings,
    )


def run_provider(run_id: str, runtime_dir: str | None = None) -> str:
    """The provider of the run ``run_id`` (its run dir's ``provider`` file, else its
    name). Raises ``RunIdError`` for an id that is not one, ``RunNotFoundError`` when the
    runtime dir holds no such run, ``UnsupportedError`` when no registered adapter reads
    it."""
    from agentspool.core import runs
    from agentspool.errors import RunNotFoundError
    from agentspool.spool.layout import check_run_id

    check_run_id(run_id)
    runtime = _runtime(runtime_dir)
    if not os.path.isdir(run_dir(runtime, run_id)):
        raise RunNotFoundError(run_id, f"the runtime dir {runtime}")
    provider = runs.provider_of(runtime, run_id, registry.names())
    if not provider:
        raise UnsupportedError(run_id, "no registered adapter reads this run")
    return provider


def _runtime(runtime_dir: str | None) -> str:
    return runtime_dir if runtime_dir else default_runtime_dir()


def setup(
    provider: str,
    run_id: str,
    runtime_dir: str | None = None,
    *,
    trust: Trust = "bypass",
    config_home: str | None = None,
) -> Spawn:
    """Arm hooks for one run; spawn the agent with ``Spawn.args`` appended and
    ``Spawn.env`` in its environment.

    ``trust``: for a CLI that runs hooks only once trusted (``Capabilities.hook_trust``),
    ``"bypass"`` adds its bypass flag, ``"config"`` records the trust in its config under
    ``config_home`` (README, "the hook trust gate"); other CLIs refuse ``"config"``
    (``UnsupportedError``).
    """
    from agentspool.core.runs import write_provider

    adapter = registry.load(provider)
    if trust != "bypass" and not adapter.capabilities.hook_trust:
        raise UnsupportedError(provider, f"has no hook trust gate: trust={trust!r}")
    spawn = adapter.setup(run_id, _runtime(runtime_dir), trust=trust, config_home=config_home)
    write_provider(spawn.run_dir, provider)  # so `ls` knows whose run this is
    return spawn


def untrust(provider: str, config_home: str | None = None) -> bool:
    """Remove the hook trust ``setup(trust="config")`` recorded; False if there was none."""
    return registry.load(provider).untrust(config_home)


def _installable(provider: str, scope: InstallScope) -> Adapter:
    adapter = registry.load(provider)
    scopes = adapter.capabilities.install_scopes
    if scope not in scopes:
        where = f"only for: {', '.join(scopes)}" if scopes else "not at all"
        raise UnsupportedError(provider, f"cannot install hooks at {scope} scope ({where})")
    return adapter


def install(
    provider: str, scope: InstallScope = "user", *, directory: str | None = None
) -> InstallReport:
    """Arm our hooks once in the CLI's own settings, so every run of it is observed.

    ``scope="user"``: the user's settings under ``directory`` (default: the CLI's config
    dir, e.g. ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``; ``$CODEX_HOME`` or ``~/.codex``).
    ``scope="project"``: the project at ``directory`` (default: the cwd). Merges into the
    file, never overwrites; a second install changes nothing; the file as it was is kept
    beside it (``InstalledFile.backup``). A scope the provider cannot install at raises
    ``UnsupportedError``; a file it cannot parse, ``SettingsError`` (nothing written).
    """
    return _installable(provider, scope).install(scope, directory=directory)


def uninstall(
    provider: str, scope: InstallScope = "user", *, directory: str | None = None
) -> InstallReport:
    """Remove exactly what ``install`` added (found by our hook command); a file it
    created and that holds nothing else is removed again."""
    return _installable(provider, scope).uninstall(scope, directory=directory)


def spool_sig(provider: str, run_id: str, runtime_dir: str | None = None) -> str:
    """A cheap digest (stat only, no reads) that changes whenever the run's live evidence
    changes: poll it, and call ``read_chat`` again only when it moved.

    Like every read, raises ``RuntimeDirError`` for a runtime dir or run dir that is a
    symlink, another user's, or writable by group or others (ADR 0013).
    """
    return registry.load(provider).spool_sig(run_id, _runtime(runtime_dir))


def sweep_spools(
    runtime_dir: str | None = None,
    keep: Iterable[str] = (),
    *,
    dry_run: bool = False,
    min_idle: float = DEFAULT_MIN_IDLE,
    archive: str | None = None,
) -> SweepReport:
    """Remove the spools of runs outside ``keep`` (never one written within ``min_idle``
    seconds); with ``archive``, move each removed run's evidence there first."""
    from agentspool.spool.sweep import sweep_spools as sweep

    return sweep(_runtime(runtime_dir), keep, dry_run=dry_run, min_idle=min_idle, archive=archive)


def locate_transcript(provider: str, run_id: str, runtime_dir: str | None = None) -> str:
    """The run's current transcript (after ``/clear`` the new one); ``""`` while no
    evidence has named one that exists yet. Raises ``RuntimeDirError`` for a dir that is
    not private (ADR 0013)."""
    return registry.load(provider).locate_transcript(run_id, _runtime(runtime_dir))


def read_chat(
    provider: str,
    run_id: str,
    runtime_dir: str | None = None,
    transcript_path: str | None = None,
    *,
    live: bool = True,
    ended: bool = False,
) -> Chat:
    """The run's composed state and conversation.

    ``transcript_path=None`` locates it (``""``: not known yet — live signals still
    count). ``live=False`` reads the transcript alone, no hook spool or status file.
    ``ended=True``: the run has terminated — the state is ``ended``, read transcript-only
    (a run whose ledger records its end, e.g. one ``run`` spawned, reads so by itself).
    The task state is the run's last declaration (``agentspool lifecycle``).
    Raises ``TranscriptGoneError`` when a named transcript no longer exists, and
    ``RuntimeDirError`` when the run's spool or ledger would come from a runtime dir or
    run dir that is a symlink, another user's, or writable by group or others (ADR 0013:
    evidence only from the user's own files; nothing is created or repaired, a missing
    dir is no evidence).
    """
    return _read(
        registry.load(provider), run_id, runtime_dir, transcript_path, live=live, ended=ended
    )


def _read(
    adapter: Adapter,
    run_id: str,
    runtime_dir: str | None,
    transcript_path: str | None,
    *,
    live: bool,
    ended: bool,
) -> Chat:
    from agentspool.core import ledger
    from agentspool.core.reader import read_run

    runtime = _runtime(runtime_dir)
    life = ledger.lifecycle(run_dir(runtime, run_id))
    if transcript_path is None:
        transcript_path = adapter.locate_transcript(run_id, runtime)
        if not transcript_path and life.ended is not None:
            transcript_path = life.ended.transcript_path  # its spool may be swept since
    return read_run(
        adapter, run_id, runtime if live else "", transcript_path, ended=ended, lifecycle=life
    )


def run(
    provider: str,
    cli_args: Sequence[str] = (),
    *,
    run_id: str | None = None,
    runtime_dir: str | None = None,
    keep: bool = False,
    executable: str | None = None,
    trust: Trust = "bypass",
) -> int:
    """The spawn wrapper: arm a run, run the agent CLI in it, return the CLI's status.

    Executes ``executable`` (default: the adapter's command on ``PATH``) with the run's
    ``Spawn.args`` and then ``cli_args``, ``Spawn.env`` added to this environment. Signals
    sent to this process (TERM, HUP, USR1, USR2; INT and QUIT too unless a terminal
    already delivers them to the agent, which shares its foreground process group) are
    forwarded. When the CLI exits, the run's ledger records the end (``RunEnded``: the
    status, ``128 + N`` for signal N, and the transcript), so the run reads ``ended``
    from then on; then its spool is swept — only the ledger stays — unless ``keep``.
    """
    import secrets
    import shutil
    import signal
    import subprocess
    import time

    from agentspool.core import ledger
    from agentspool.core.events import RunEnded
    from agentspool.spool.layout import PROVIDER_FILE
    from agentspool.spool.write import LEDGER_FILE

    adapter = registry.load(provider)
    command = executable or adapter.executable
    found = shutil.which(command) if command else None
    if found is None:
        raise UnsupportedError(provider, f"cannot be run: {command or 'no command'!r} not found")
    run_id = run_id or f"{provider}-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    runtime = _runtime(runtime_dir)
    spawn = setup(provider, run_id, runtime, trust=trust)
    argv = [found, *spawn.args, *cli_args]
    children: list[subprocess.Popen[bytes]] = []
    terminal = {signal.SIGINT, signal.SIGQUIT}

    def forward(signum: int, _frame: object) -> None:
        if children and (signum not in terminal or not _in_terminal_foreground()):
            children[0].send_signal(signum)

    # Handlers (not SIG_IGN) from before the spawn: a signal in between is not lost, and
    # the agent starts with default dispositions (exec resets handlers, not SIG_IGN).
    previous = {
        s: signal.signal(s, forward)
        for s in [signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, *terminal]
    }
    try:
        children.append(subprocess.Popen(argv, env={**os.environ, **spawn.env}))
        code = children[0].wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    status = 128 - code if code < 0 else code
    directory = run_dir(runtime, run_id)
    transcript = adapter.locate_transcript(run_id, runtime)
    ledger.append(
        directory,
        RunEnded(exit_status=status, transcript_path=transcript, at=time.time(), source="core:run"),
    )
    if not keep:
        _sweep_evidence(directory, keep={LEDGER_FILE, PROVIDER_FILE})
    return status


def _in_terminal_foreground() -> bool:
    """Whether this process group is a terminal's foreground group: then the terminal
    delivers Ctrl-C / Ctrl-\\ to the agent (same group) itself, and forwarding would
    deliver each twice (twice Ctrl-C quits Claude Code)."""
    for fd in (0, 1, 2):
        try:
            return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


def _sweep_evidence(directory: str, *, keep: set[str]) -> None:
    """Remove a finished run's evidence files (spool, rendered settings, fault log);
    an ended run is read transcript-only, and its ledger says the rest."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name not in keep and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)


class Declaration(msgspec.Struct, frozen=True, kw_only=True):
    """What ``declare`` did: the run's task state after it, and whether it changed."""

    run_id: str
    task_state: TaskState
    task_reason: str = ""
    changed: bool


def declare(
    task_state: TaskState,
    reason: str = "",
    *,
    run_id: str | None = None,
    runtime_dir: str | None = None,
    force: bool = False,
    worktree: str | None = None,
) -> Declaration:
    """Declare the run's task state (``agentspool lifecycle``): ``active``, ``blocked``
    (needs a ``reason``) or ``done``. Never inferred: process exit never means done.

    The run comes from the environment a wrapped agent has (``AGENTSPOOL_RUN_ID``,
    ``AGENTSPOOL_RUNTIME_DIR``, set by ``setup``/``run``) unless ``run_id`` names it;
    without either, from the process ancestry: the agent started by hand whose installed
    hooks made a run for it. A subagent cannot declare for its parent's run: refused
    when the run's hook evidence shows the open ``agentspool lifecycle`` call is a
    subagent's (ADR 0019). An
    exact repeat of the current declaration writes nothing (``changed=False``). ``done``
    is refused while ``worktree`` (default: the current directory) is a git worktree with
    uncommitted changes, unless ``force``.
    """
    import time

    from agentspool.core import ledger, runs
    from agentspool.core.events import TaskStateDeclared

    run_id = run_id or os.environ.get(RUN_ID_ENV, "")
    runtime = runtime_dir or os.environ.get(RUNTIME_DIR_ENV) or default_runtime_dir()
    if not run_id:
        run_id = _run_of_this_agent(runtime)
    directory = run_dir(runtime, run_id)
    if not os.path.isdir(directory):
        raise DeclarationError(run_id, f"no such run in {runtime}")
    provider = runs.provider_of(runtime, run_id, registry.names())
    caller = getattr(registry.load(provider), "lifecycle_caller", None) if provider else None
    subagent = caller(run_id, runtime, os.getpid(), os.environ) if caller is not None else None
    if subagent:
        raise DeclarationError(
            run_id,
            f"a subagent ({subagent}) cannot declare its parent's task state; "
            "only the run's main agent declares (report back to it instead)",
        )
    reason = reason.strip()
    if task_state == "blocked" and not reason:
        raise DeclarationError(run_id, "blocked needs a reason (--reason TEXT)")
    if task_state != "blocked":
        reason = ""  # a reason belongs to blocked; leaving blocked drops it
    now = ledger.lifecycle(directory)
    if now.declared is not None and (now.task_state, now.task_reason) == (task_state, reason):
        return Declaration(run_id=run_id, task_state=task_state, task_reason=reason, changed=False)
    if task_state == "done" and not force:
        dirty = _uncommitted_changes(worktree or os.getcwd())
        if dirty:
            raise DeclarationError(
                run_id, f"not done: uncommitted changes in {dirty} (commit them, or --force)"
            )
    try:
        ledger.append(
            directory,
            TaskStateDeclared(
                task_state=task_state, reason=reason, at=time.time(), source="cli:lifecycle"
            ),
        )
    except OSError as exc:
        # Seen: Codex's read-only sandbox ("Read-only file system"); its workspace-write
        # sandbox writes only the workspace and /tmp.
        raise DeclarationError(
            run_id,
            f"cannot write {os.path.join(directory, LEDGER_FILE)}: {exc.strerror} "
            "(a sandboxed agent must be let write the runtime dir)",
        ) from None
    return Declaration(run_id=run_id, task_state=task_state, task_reason=reason, changed=True)


def _run_of_this_agent(runtime: str) -> str:
    """The run of the agent this command runs under, when no wrapper named it: the
    nearest ancestor process whose installed-hook run (``<provider>-<pid>-<start
    ticks>``) is in ``runtime`` (an agent started by hand, ``agentspool install``); else
    the run an adapter finds from its CLI's own variables in this environment
    (``own_run``: a sandbox can hide the agent process from its commands)."""
    from agentspool.core import runs

    found = runs.agent_runs(runtime, registry.names(), os.getpid())
    if not found:
        for provider in registry.names():
            own_run = getattr(registry.load(provider), "own_run", None)
            if own_run is not None:
                found += own_run(runtime, os.environ)
    if len(found) == 1:
        return found[0]
    if found:
        raise DeclarationError(
            "", f"several runs of this agent ({', '.join(found)}): pass --run-id"
        )
    raise DeclarationError(
        "",
        f"no run: ${RUN_ID_ENV} is not set and no process above this one has a run in "
        f"{runtime} (run this from inside an agent armed by agentspool, or pass --run-id)",
    )


def _uncommitted_changes(path: str) -> str:
    """The top of the git worktree holding ``path`` if it has uncommitted changes
    (untracked files included), else ``""`` (clean, or not a worktree, or no git)."""
    import subprocess

    try:
        top = subprocess.run(
            ["git", "-C", path, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if top.returncode != 0:
            return ""
        status = subprocess.run(
            ["git", "-C", path, "status", "--porcelain"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return top.stdout.strip() if status.returncode == 0 and status.stdout.strip() else ""


class Explanation(msgspec.Struct, kw_only=True):
    """The evidence behind a run's state (``agentspool explain``)."""

    provider: str
    run_id: str
    chat: Chat
    """The composed state, read afresh (its ``messages`` left out)."""
    steps: list[Step]
    """Every canonical event the read folded, in fold order, with the state after it or
    why it changed nothing (stale, or nothing to act on)."""


def explain(
    provider: str | None,
    run_id: str,
    runtime_dir: str | None = None,
    transcript_path: str | None = None,
    *,
    live: bool = True,
    ended: bool = False,
) -> Explanation:
    """``read_chat``, made by a fresh adapter with every fold traced: which hook records,
    transcript records and status-file readings decided the state, when, and which were
    judged stale and why. Costs a full read (nothing cached is reused).

    ``provider=None``: the provider the run dir names. Raises ``RunNotFoundError`` when
    the runtime dir holds no such run and no ``transcript_path`` is given: a run nothing
    recorded has no state to explain."""
    from agentspool.core import reducer

    if provider is None or transcript_path is None:
        provider = _run_provider(run_id, runtime_dir, provider)
    fresh = type(registry.load(provider))()
    steps: list[Step] = []
    token = reducer.TRACE.set(steps)
    try:
        chat = _read(fresh, run_id, runtime_dir, transcript_path, live=live, ended=ended)
    finally:
        reducer.TRACE.reset(token)
    chat.messages = []
    return Explanation(provider=provider, run_id=run_id, chat=chat, steps=steps)


def _run_provider(run_id: str, runtime_dir: str | None, provider: str | None) -> str:
    """The provider of the run dir ``run_id`` names (``provider``: it must be that one);
    ``RunNotFoundError`` when there is none."""
    from agentspool.core import runs
    from agentspool.errors import RunNotFoundError
    from agentspool.spool.layout import check_run_id

    check_run_id(run_id)
    where = _runtime(runtime_dir)
    found = [ref for ref in runs.run_dirs(where, registry.names()) if ref.run_id == run_id]
    if not found:
        raise RunNotFoundError(run_id, f"the runtime dir {where}")
    named = found[0].provider
    if provider is not None:
        registry.load(provider)  # an unknown name: UnknownProviderError
        if named and named != provider:
            raise RunNotFoundError(run_id, f"the runtime dir {where} as a {provider} run")
        return provider
    if not named:
        raise UnsupportedError(run_id, "no registered adapter reads this run")
    return named


TidyVerdict = Literal["remove", "keep", "busy"]


class TidyRun(msgspec.Struct, frozen=True, kw_only=True):
    """One run as ``tidy`` judged it."""

    run_id: str
    provider: str
    verdict: TidyVerdict
    """``remove`` (with ``dry_run``: would remove), ``keep``, or ``busy``: judged
    removable, but written to while tidy took it, so left alone."""
    why: str


class TidyReport(msgspec.Struct, kw_only=True):
    """What ``tidy`` did (or, with ``dry_run``, would do)."""

    dry_run: bool
    removed: list[str]
    """The runs removed (``dry_run``: that would be)."""
    archived: list[str]
    """The removed runs whose evidence and ledger went to the archive."""
    runs: list[TidyRun]
    """Every run tidy looked at, in name order, with why it is removed or kept."""


def tidy(
    runtime_dir: str | None = None, *, dry_run: bool = True, archive: str | None = None
) -> TidyReport:
    """Remove the runs that are finished: the latest declaration is ``done`` and the run
    ended — its ledger records the end (``RunEnded``), or its agent process is gone.

    Never a run whose latest declaration is ``active`` or ``blocked``, never one never
    declared (process exit never means done), never one whose agent process still runs,
    never one whose ledger holds records this version cannot read. ``dry_run`` (the
    default) only reports. The removal is the sweep's (ADR 0015): each run is judged under
    the sweep lock, then taken only if nothing was written to it since; with ``archive``
    its spool, ledger and provider file are moved there first (ADR 0018).
    """
    from agentspool.core import runs
    from agentspool.spool.sweep import sweep_spools as sweep

    runtime = _runtime(runtime_dir)
    names = registry.names()
    providers = {ref.run_id: ref.provider for ref in runs.run_dirs(runtime, names)}
    fresh: dict[str, Adapter] = {}
    judged: dict[str, TidyRun] = {}

    def select(run_id: str, path: str) -> bool:
        provider = providers.get(run_id, "")
        try:
            why, removable = _tidy_judgement(provider, run_id, runtime, path, fresh)
        except (AgentspoolError, OSError) as exc:
            # One unreadable run (another user's, opened up, damaged) is kept and named;
            # it must not stop the others from being judged.
            why, removable = f"cannot be read: {exc}", False
        judged[run_id] = TidyRun(
            run_id=run_id, provider=provider, verdict="remove" if removable else "keep", why=why
        )
        return removable

    report = sweep(runtime, (), min_idle=0.0, dry_run=dry_run, archive=archive, select=select)
    for run_id in report.busy:
        before = judged.get(run_id)
        judged[run_id] = TidyRun(
            run_id=run_id,
            provider=providers.get(run_id, ""),
            verdict="busy",
            why="written to while tidy took it; left alone"
            + (f" (it was: {before.why})" if before else ""),
        )
    return TidyReport(
        dry_run=dry_run,
        removed=report.removed,
        archived=report.archived,
        runs=[judged[run_id] for run_id in sorted(judged)],
    )


def _tidy_judgement(
    provider: str, run_id: str, runtime: str, path: str, fresh: dict[str, Adapter]
) -> tuple[str, bool]:
    """(why, whether the run is finished and may go)."""
    from agentspool.core import ledger

    life = ledger.lifecycle(path)
    if life.undecodable:
        return f"its ledger holds {life.undecodable} records this version cannot read", False
    if life.declared is None:
        return "its task state was never declared (process exit never means done)", False
    if life.task_state != "done":
        reason = f": {life.task_reason}" if life.task_reason else ""
        return f"its latest declaration is {life.task_state}{reason}", False
    if not provider:
        return "done, but no registered adapter reads it (its agent process is unknown)", False
    adapter = fresh.get(provider)
    if adapter is None:
        # A fresh adapter: tidy must not fill (or read stale) the shared read caches.
        adapter = fresh[provider] = type(registry.load(provider))()
    transcript = adapter.locate_transcript(run_id, runtime)
    try:
        chat = adapter.read_chat(run_id, runtime, transcript)
    except TranscriptGoneError:
        chat = adapter.read_chat(run_id, runtime, "")
    if chat.process == "alive":
        return f"done, but its agent process {chat.pid} still runs", False
    if life.ended is not None:
        status = life.ended.exit_status
        return "done, and the run ended" + (
            f" (exit status {status})" if status is not None else ""
        ), True
    if chat.process == "gone":
        return f"done, and its agent process {chat.pid} is gone", True
    return "done, but nothing shows its agent process ended", False


class Replay(msgspec.Struct, kw_only=True):
    """A run's history (``agentspool replay``)."""

    provider: str
    run_id: str
    run_dir: str
    """Where the evidence was read: the run dir, or its copy in the archive."""
    archived: bool
    events: int
    """Canonical events folded: the traced read's plus the ledger's."""
    transitions: list[Transition]
    transcript_gone: str = ""
    """The transcript the evidence names, if it no longer exists (then the spool and the
    ledger alone were replayed)."""


def replay(run_id: str, runtime_dir: str | None = None, *, archive: str | None = None) -> Replay:
    """Replay a run's evidence through the one reducer: every transition (a step after
    which the chat state, activity or task state changed) with its time and source.

    The evidence is the run's spool, transcript and status file, read by a fresh adapter
    with every fold traced (as ``explain`` does), and its ledger; with ``archive``, the
    latest copy of the run a sweep or ``tidy`` archived there. Writes nothing: what a
    read says is recomputed from evidence, never stored, so a replay cannot roll a newer
    state back (ADR 0018). Raises ``RunNotFoundError`` if there is no such run.
    """
    import time

    from agentspool.core import ledger, reducer, runs
    from agentspool.core.replay import transitions
    from agentspool.errors import RunNotFoundError
    from agentspool.spool.layout import check_run_id

    check_run_id(run_id)
    names = registry.names()
    if archive is not None:
        history = os.path.join(archive, run_id)
        copies = runs.run_dirs(history, names)
        if not copies:
            raise RunNotFoundError(run_id, f"the archive {archive}")
        latest = max(copies, key=lambda ref: _archive_order(ref.run_id))
        where, name = history, latest.run_id
        provider = latest.provider or runs.provider_named(run_id, names)
    else:
        where, name = _runtime(runtime_dir), run_id
        found = [ref for ref in runs.run_dirs(where, names) if ref.run_id == run_id]
        if not found:
            # Not listed (only real dirs are) need not mean missing: a symlinked or
            # foreign run dir is refused in its own words.
            fd = open_run_dir_to_read(where, run_id)
            if fd is not None:
                os.close(fd)
            raise RunNotFoundError(run_id, f"the runtime dir {where}")
        provider = found[0].provider
    if not provider:
        raise UnsupportedError(run_id, "no registered adapter reads this run")
    directory = run_dir(where, name)
    events = ledger.read(directory)
    life = ledger.fold(events)
    adapter = type(registry.load(provider))()
    transcript = adapter.locate_transcript(name, where)
    if not transcript and life.ended is not None:
        transcript = life.ended.transcript_path  # its spool may be swept since
    gone_transcript = ""
    steps: list[Step] = []
    token = reducer.TRACE.set(steps)
    try:
        try:
            chat = adapter.read_chat(name, where, transcript)
        except TranscriptGoneError:
            gone_transcript, steps[:] = transcript, []
            chat = adapter.read_chat(name, where, "")
    finally:
        reducer.TRACE.reset(token)
    gone = f"the agent process {chat.pid} is gone" if chat.process == "gone" else ""
    return Replay(
        provider=provider,
        run_id=run_id,
        run_dir=directory,
        archived=archive is not None,
        events=len(steps) + len(events),
        transitions=transitions(steps, events, gone=gone, gone_at=time.time()),
        transcript_gone=gone_transcript,
    )


def _archive_order(stamp: str) -> tuple[int, ...]:
    """``<seconds>[.<n>]`` in the order the sweeps made them."""
    return tuple(int(part) if part.isdigit() else -1 for part in stamp.split("."))


def usage(
    *,
    by: UsageGrouping = "day",
    since: dt.date | None = None,
    until: dt.date | None = None,
    providers: Sequence[str] | None = None,
    timezone: str | None = None,
    prices: str | None = None,
    store: str | None = None,
    index: bool = True,
) -> UsageReport:
    """Token totals — input, output, cache reads and cache writes kept apart — and their
    cost, per day, session, model or project (``by``), over every session of the history
    store (ADR 0025; ``agentspool.core.usage`` states every rule): sessions whose file
    is gone still count.

    ``since``/``until``: keep the days within them, both inclusive. Days are counted in
    ``timezone`` (an IANA name; ``None``: the machine's local time). ``providers``: only
    these (``None``: every registered one). ``prices``: a price table file of the shipped
    table's shape (``None``: the shipped table). A model without a price is shown with
    ``cost_usd=None``, never 0, and every cost says how many tokens it leaves out.
    ``store``: the history store (``None``: ``default_store_path()``); ``index``: bring
    it up to date first (``index_history(store, wait=False, usage_first=True)``: only
    what usage reads of files never read before, ADR 0043; if another indexer is at
    work, what is indexed already), else read what is indexed. A report is kept in the
    store until the store changes (except with ``prices``).

    Raises ``SettingsError`` for a price file that is not a table,
    ``UnknownProviderError`` for a provider not registered,
    ``zoneinfo.ZoneInfoNotFoundError`` for a zone that does not exist, and
    ``StoreError`` for a store that cannot be read.
    """
    from agentspool.core.pricing import load_prices
    from agentspool.core.usage import usage_report

    table = load_prices(prices)
    zone = None
    if timezone is not None:
        import zoneinfo

        zone = zoneinfo.ZoneInfo(timezone)
    names = list(providers) if providers is not None else registry.names()
    for name in names:
        registry.load(name)  # an unknown name fails before anything is read
    if index:
        index_history(store, wait=False, usage_first=True)
    import msgspec

    from agentspool.core.usage import UsageReport

    # The report is a function of the store's contents and these arguments: kept in the
    # store, it stands until the store changes (ADR 0043). A price file given may change
    # under the same name, so that report is not kept.
    key = None
    if prices is None:
        key = msgspec.json.encode(
            [
                "usage",
                _version(),
                by,
                str(since),
                str(until),
                sorted(names),
                timezone,
                os.environ.get("TZ"),
            ]
        ).decode()
    with open_history(store) as opened:
        kept = opened.remembered(key) if key else None
        if kept is not None:
            return msgspec.json.decode(kept, type=UsageReport)
        report = usage_report(
            _stored_usage(opened, names, since),
            prices=table,
            by=by,
            since=since,
            until=until,
            tz=zone,
        )
        if key:
            opened.remember(key, msgspec.json.encode(report))
        return report


def _version() -> list[int]:
    """The code that makes the report, as its files stand (an upgrade or an edit of a
    counting rule must not find a report an older one kept)."""
    from agentspool.core import pricing, usage

    shipped = os.path.join(os.path.dirname(pricing.__file__), pricing.PRICES_FILE)
    files = [usage.__file__, pricing.__file__, __file__, shipped]
    return [n for path in files for st in [os.stat(path)] for n in (st.st_mtime_ns, st.st_size)]


def _unique_response_ids(provider: str) -> bool:
    """Whether the provider's response ids are unique across sessions (its capability;
    ``False`` for a provider no longer registered: the safe reading)."""
    try:
        return registry.load(provider).capabilities.unique_response_ids
    except AgentspoolError:
        return False


def _stored_usage(
    store: SessionStore, providers: Sequence[str], since: dt.date | None
) -> Iterator[tuple[SessionInfo, list[UsageRecord]]]:
    """Usage's one input: every session of ``providers`` in the store, with its records
    that carry usage (the store's usage index; no conversation is read).

    A usage session is the CLI's session id: every file that carries it counts in it —
    a Claude Code subagent's own file carries its parent's (so its usage counts in its
    parent session), a Codex sub-agent's rollout its own thread's (its own session).
    Its path and project are its main file's (the one that is no subagent's).

    ``since``: a session whose last record is two days before it holds no record on or
    after it in any time zone, so its records are not read."""
    from agentspool.core.usage import SessionInfo

    cutoff = None
    if since is not None:
        start = dt.datetime.combine(since - dt.timedelta(days=2), dt.time(), dt.UTC)
        cutoff = start.timestamp()
    groups: dict[tuple[str, str], list[StoredSession]] = {}
    wanted = set(providers)
    for stored in store.sessions():
        if stored.provider in wanted:
            key = stored.session_id or stored.key  # no id named: the file alone
            groups.setdefault((stored.provider, key), []).append(stored)
    chosen = {
        key: sorted(members, key=lambda s: (s.agent_id != "", s.path))
        for key, members in groups.items()
        if cutoff is None or max(s.updated for s in members) >= cutoff
    }
    records: dict[int, list[UsageRecord]] = {}
    ids = [s.id for members in chosen.values() for s in members]
    for record in store.usage_records(ids):
        records.setdefault(record.session, []).append(record)
    unique = {provider: _unique_response_ids(provider) for provider in wanted}
    for (provider, _), members in chosen.items():
        main = members[0]
        started = [s.started for s in members if s.started]
        info = SessionInfo(
            provider=provider,
            session_id=main.session_id,
            project=main.cwd or next((s.cwd for s in members if s.cwd), ""),
            path=main.path,
            started=min(started, default=0.0),
            updated=max(s.updated for s in members),
            unique_ids=unique[provider],
            # A main file naming a parent session is a copy of it (a Codex fork); a
            # subagent's file names the session that spawned it, and is no copy.
            copied_from="" if main.agent_id else main.parent_session_id,
        )
        yield info, [r for s in members for r in records.get(s.id, ())]


# -- the history (issue 14, ADR 0022) ------------------------------------------------------

DATA_DIR_ENV = "AGENTSPOOL_DATA_DIR"
HISTORY_FILE = "history.sqlite"


def default_store_path() -> str:
    """The history store: ``$AGENTSPOOL_DATA_DIR/history.sqlite``, else in the user's
    data dir (``platformdirs``: ``~/.local/share/agentspool`` on Linux)."""
    base = os.environ.get(DATA_DIR_ENV, "")
    if not base:
        import platformdirs  # only the history commands pay for it (ADR 0023)

        base = platformdirs.user_data_dir("agentspool", appauthor=False)
    return os.path.join(base, HISTORY_FILE)


def open_history(store: str | None = None) -> SessionStore:
    """The history store (``None``: ``default_store_path()``), created private (dir 0700,
    file 0600) if it is not there. What ``usage`` and ``show`` read: ``sessions``,
    ``find_sessions``, ``records``, ``usage_records``, ``search`` (``core/store.py``).
    Close it (a context manager) when done."""
    from agentspool.core.store import SessionStore

    path = store or default_store_path()
    loose = ""
    if path != ":memory:":
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if store is None:
            loose = _privatise_data_dir(directory)
    opened = SessionStore(path)
    if loose:
        opened.tightened = ", ".join(filter(None, [opened.tightened, loose]))
    return opened


def _privatise_data_dir(directory: str) -> str:
    """Tighten agentspool's own data dir (``default_store_path``'s) that group or others
    could enter; a dir the user named with ``--store`` is theirs to set. ``""`` when it
    was already private."""
    import stat

    st = os.stat(directory, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or not st.st_mode & 0o077:
        return ""
    os.chmod(directory, 0o700)  # a real dir of ours (lstat above): no symlink to follow
    return f"its dir mode {stat.S_IMODE(st.st_mode):o}"


def index_history(
    store: str | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    forget_gone: bool = False,
    wait: bool = True,
    usage_first: bool = False,
) -> IndexReport:
    """Index every transcript every registered provider finds on this machine into the
    history store, incrementally (``core/history.py``): a file costs what it gained
    since the last run. ``progress(bytes done, bytes to read)`` after each block.
    ``forget_gone``: remove the sessions whose file is gone (kept by default).
    ``wait=False``: return at once (``busy``) if another indexer holds the store.
    ``usage_first``: store only what ``usage`` reads of files never read before, parsed
    on every core; their records and search rows wait for the next run without it
    (ADR 0043), which ``search`` and ``show`` make before they read."""
    from agentspool.core import history

    adapters = [registry.load(name) for name in registry.names()]
    with open_history(store) as opened:
        return history.index_history(
            opened,
            adapters,
            progress=progress,
            forget_gone=forget_gone,
            wait=wait,
            usage_first=usage_first,
        )


def search_history(
    text: str,
    *,
    store: str | None = None,
    limit: int = 20,
    provider: str | None = None,
    marks: tuple[str, str] = ("«", "»"),
) -> list[SearchHit]:
    """Records of the history whose text holds every word of ``text`` (``word*``: a
    prefix), best first; each with its session, time and a snippet whose matched words
    are between ``marks``. Searches what is indexed (call ``index_history`` first)."""
    with open_history(store) as opened:
        return opened.search(text, limit=limit, provider=provider, marks=marks)
