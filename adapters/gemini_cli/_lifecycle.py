"""Arming a Gemini CLI run: the installed hooks, and the run in the agent's environment.

Gemini CLI 0.61.0 has no settings layer a spawn can add for one run: a system settings
file named by ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` is skipped unless root owns it and
every directory above it, and a private ``GEMINI_CLI_HOME`` moves the user's auth,
settings and chat history with it (docs/adr/0028-gemini-cli-arming.md). So ``setup``
arms nothing itself: it requires our hooks installed in the user's settings
(``agentspool install gemini-cli``) and hands the run to the spawn in ``Spawn.env``; the
installed hook records into the run its agent's environment names.
"""

from __future__ import annotations

from agentspool.adapters.common.armed import armed_by_install
from agentspool.adapters.gemini_cli import _install
from agentspool.core.seam import Spawn


def setup(run_id: str, runtime_dir: str, settings_dir: str | None = None) -> Spawn:
    """The run's env for the spawn; refuses while the hooks are not installed in the
    settings under ``settings_dir`` (default: the CLI's own, from ``GEMINI_CLI_HOME``)."""
    path = _install.settings_path(settings_dir)
    return armed_by_install(
        _install.PROVIDER, path, _install.missing(settings_dir), run_id, runtime_dir
    )
