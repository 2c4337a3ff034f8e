"""``setup`` for a CLI a wrapper cannot arm per run (Gemini CLI, Kimi Code): the hooks
installed once in the user's own settings record the wrapper's run too, which travels in
the agent's environment (``AGENTSPOOL_RUN_ID``; ``hooks/_entry.py``'s ``armed_by_env``).
"""

from __future__ import annotations

import os

from agentspool.core.seam import Spawn
from agentspool.spool.errors import UnsupportedError
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV


def armed_by_install(
    provider: str, settings_path: str, missing: list[str], run_id: str, runtime_dir: str
) -> Spawn:
    """The run's env for the spawn (pass ``Spawn.env`` in the agent's environment).

    Refuses (``UnsupportedError``) while ``missing`` names events whose hooks are not
    installed in ``settings_path`` as ``install`` writes them now: the run would go
    unobserved."""
    if missing:
        raise UnsupportedError(
            provider,
            f"is armed by the hooks installed in {settings_path}, and {', '.join(missing)} "
            f"is not there: run `agentspool install {provider}` once",
        )
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=[], env=env, settings_path=os.path.abspath(settings_path), run_dir=run_dir)
