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

import os

from agentspool.adapters.gemini_cli import _install
from agentspool.core.seam import Spawn
from agentspool.spool.errors import UnsupportedError
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV


def setup(run_id: str, runtime_dir: str, settings_dir: str | None = None) -> Spawn:
    """The run's env for the spawn (pass ``Spawn.env`` in the agent's environment).

    Refuses (``UnsupportedError``) while the hooks are not installed as ``install`` writes
    them now in the settings under ``settings_dir`` (default: the CLI's own, from
    ``GEMINI_CLI_HOME``): the run would go unobserved."""
    path = _install.settings_path(settings_dir)
    missing = _install.missing(settings_dir)
    if missing:
        raise UnsupportedError(
            _install.PROVIDER,
            f"is armed by the hooks installed in {path}, and {', '.join(missing)} "
            "is not there: run `agentspool install gemini-cli` once",
        )
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=[], env=env, settings_path=os.path.abspath(path), run_dir=run_dir)
