"""The public library functions, each a thin call through the provider's adapter."""

from __future__ import annotations

from collections.abc import Iterable

from agentspool.adapters import registry
from agentspool.adapters.seam import Chat, Spawn, Trust
from agentspool.spool import sweep as _sweep
from agentspool.spool.layout import default_runtime_dir


def setup(
    provider: str,
    run_id: str,
    runtime_dir: str = "",
    *,
    trust: Trust = "bypass",
    config_home: str | None = None,
) -> Spawn:
    """Arm hooks for one run; append ``Spawn.args`` (and ``Spawn.env``) to the agent.

    ``trust``: for a CLI that runs hooks only once trusted (``Capabilities.hook_trust``),
    ``"bypass"`` adds its bypass flag, ``"config"`` records the trust in its config under
    ``config_home`` (README, "the hook trust gate").
    """
    return registry.load(provider).setup(
        run_id, runtime_dir or default_runtime_dir(), trust=trust, config_home=config_home
    )


def untrust(provider: str, config_home: str | None = None) -> bool:
    """Remove the hook trust ``setup(trust="config")`` recorded; False if there was none."""
    return registry.load(provider).untrust(config_home)


def spool_sig(provider: str, run_id: str, runtime_dir: str = "") -> str:
    return registry.load(provider).spool_sig(run_id, runtime_dir or default_runtime_dir())


def sweep_spools(
    runtime_dir: str,
    keep: Iterable[str],
    *,
    dry_run: bool = False,
    min_idle: float = _sweep.DEFAULT_MIN_IDLE,
    archive: str | None = None,
) -> _sweep.SweepReport:
    return _sweep.sweep_spools(
        runtime_dir or default_runtime_dir(),
        keep,
        dry_run=dry_run,
        min_idle=min_idle,
        archive=archive,
    )


def locate_transcript(provider: str, run_id: str, runtime_dir: str = "") -> str:
    return registry.load(provider).locate_transcript(run_id, runtime_dir or default_runtime_dir())


def read_chat(
    provider: str, run_id: str, runtime_dir: str, transcript_path: str, *, ended: bool = False
) -> Chat:
    """The run's composed state; ``ended=True`` for a run core knows has terminated."""
    from agentspool.core.reader import read_run

    return read_run(registry.load(provider), run_id, runtime_dir, transcript_path, ended=ended)
