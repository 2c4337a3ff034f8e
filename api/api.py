"""The public library functions, each a thin call through the provider's adapter.

The services behind the rest of the public API live in modules of their own beside
this one (``polling``, ``spawn``, ``declarations``, ``tidying``, ``usage_totals``, ``history``,
``sessions``, ``follow``, ``registered``); ``agentspool`` re-exports them all.

One convention for every argument: ``None`` means "the default" — the default runtime
dir (``default_runtime_dir()``), the transcript located from the run's own evidence
(``locate_transcript``). A transcript-only read is ``live=False``; an empty string never
carries a second meaning here (it does on the adapter seam, ``agentspool.core.seam``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from agentspool.adapters import registry
from agentspool.core.reducer import Step
from agentspool.core.replay import Transition
from agentspool.core.seam import (
    Adapter,
    Chat,
    Installer,
    InstallReport,
    InstallScope,
    Spawn,
    Trust,
)
from agentspool.registered import providers
from agentspool.spool.errors import (
    TranscriptGoneError,
    UnsupportedError,
)
from agentspool.spool.layout import (
    DEFAULT_MIN_IDLE,
    default_runtime_dir,
    open_run_dir_to_read,
    run_dir,
)

if TYPE_CHECKING:
    from agentspool.spool.sweep import SweepReport

__all__ = [
    "DEFAULT_MIN_IDLE",
    "Explanation",
    "Replay",
    "Transition",
    "install",
    "locate_transcript",
    "providers",
    "read_chat",
    "replay",
    "run_provider",
    "setup",
    "spool_sig",
    "sweep_spools",
    "uninstall",
    "untrust",
]


RECENT_SESSIONS = 3600.0
"""``list_runs`` shows sessions no hook armed whose transcript changed this recently."""


def run_provider(run_id: str, runtime_dir: str | None = None) -> str:
    """The provider of the run ``run_id`` (its run dir's ``provider`` file, else its
    name). Raises ``RunIdError`` for an id that is not one, ``RunNotFoundError`` when the
    runtime dir holds no such run, ``UnsupportedError`` when no registered adapter reads
    it."""
    from agentspool.core import runs
    from agentspool.spool.errors import RunNotFoundError
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
    spawn = adapter.setup(run_id, _runtime(runtime_dir), trust=trust, config_home=config_home)
    write_provider(spawn.run_dir, provider)  # so `ls` knows whose run this is
    return spawn


def untrust(provider: str, config_home: str | None = None) -> bool:
    """Remove the hook trust ``setup(trust="config")`` recorded; False if there was none."""
    gate = registry.load(provider).trust_gate
    return gate.untrust(config_home) if gate is not None else False


def _installable(provider: str, scope: InstallScope) -> Installer:
    adapter = registry.load(provider)
    scopes = adapter.capabilities.install_scopes
    if scope not in scopes or adapter.installer is None:
        where = f"only for: {', '.join(scopes)}" if scopes else "not at all"
        raise UnsupportedError(provider, f"cannot install hooks at {scope} scope ({where})")
    return adapter.installer


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
    if transcript_path is None and (ended or life.ended is not None or not live):
        transcript_path = adapter.locate_transcript(run_id, runtime)
        if not transcript_path and life.ended is not None:
            transcript_path = life.ended.transcript_path  # its spool may be swept since
    # Otherwise ``None``: the adapter locates it within the read (one look at the spool).
    return read_run(
        adapter, run_id, runtime if live else "", transcript_path, ended=ended, lifecycle=life
    )


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
    from agentspool.spool.errors import RunNotFoundError
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
    from agentspool.spool.errors import RunNotFoundError
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
