"""Arming a Pi run: agentspool's extension, a copy of the run's own, passed with ``-e``.

Pi 0.73.1 runs no shell hooks; it loads extensions, and ``pi -e <file>`` loads one for
that run only, beside whatever the user's own extension folders hold
(docs/providers/pi.md §2). ``setup`` writes the extension into the run dir with the run
baked in (it reads no configuration) and hands back the flag; nothing of the user's is
touched (docs/adr/0051-pi-extension.md).
"""

from __future__ import annotations

import os

from agentspool.adapters.common.templates import spool_script
from agentspool.core.seam import Spawn
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

TEMPLATE = "pi-extension.js"
EXTENSION_FILE = "agentspool-pi.js"


def extension_source(runtime_dir: str | None = None, run_id: str | None = None) -> str:
    """The extension, installed (``ARMED`` null) or armed for one run."""
    return spool_script(TEMPLATE, runtime_dir, run_id)


def setup(run_id: str, runtime_dir: str) -> Spawn:
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    path = os.path.join(run_dir, EXTENSION_FILE)
    write_private_file(path, extension_source(runtime_dir, run_id).encode())
    # Not for the extension (its run is baked in): `agentspool lifecycle` run by the agent
    # finds its run here, and an installed copy leaves this run to this one.
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=["-e", path], env=env, settings_path=path, run_dir=run_dir)
