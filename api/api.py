"""The public library functions, each a thin call through the provider's adapter.

One convention for every argument: ``None`` means "the default" — the default runtime
dir (``default_runtime_dir()``), the transcript located from the run's own evidence
(``locate_transcript``). A transcript-only read is ``live=False``; an empty string never
carries a second meaning here (it does on the adapter seam, ``agentspool.core.seam``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentspool.adapters import registry
from agentspool.core.seam import Adapter, Chat, InstallReport, InstallScope, Spawn, Trust
from agentspool.errors import UnsupportedError
from agentspool.spool.layout import DEFAULT_MIN_IDLE, default_runtime_dir

if TYPE_CHECKING:
    from agentspool.spool.sweep import SweepReport

__all__ = [
    "DEFAULT_MIN_IDLE",
    "install",
    "locate_transcript",
    "providers",
    "read_chat",
    "setup",
    "spool_sig",
    "sweep_spools",
    "uninstall",
    "untrust",
]


def providers() -> list[str]:
    """The names of every registered provider adapter (built-in and installed)."""
    return registry.names()


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
    adapter = registry.load(provider)
    if trust != "bypass" and not adapter.capabilities.hook_trust:
        raise UnsupportedError(provider, f"has no hook trust gate: trust={trust!r}")
    return adapter.setup(run_id, _runtime(runtime_dir), trust=trust, config_home=config_home)


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
    changes: poll it, and call ``read_chat`` again only when it moved."""
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
    evidence has named one that exists yet."""
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
    ``ended=True``: the run has terminated — the state is ``ended``, read transcript-only.
    Raises ``TranscriptGoneError`` when a named transcript no longer exists.
    """
    from agentspool.core.reader import read_run

    runtime = _runtime(runtime_dir)
    if transcript_path is None:
        transcript_path = registry.load(provider).locate_transcript(run_id, runtime)
    return read_run(
        registry.load(provider),
        run_id,
        runtime if live else "",
        transcript_path,
        ended=ended,
    )
