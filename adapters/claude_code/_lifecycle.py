"""Arming Claude Code per run: a ``--settings`` file of hooks, and the spool lifecycle."""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.core.seam import Spawn
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

TEMPLATE = "claude-code.settings.json"
SETTINGS_FILE = "claude-code.settings.json"


def setup(run_id: str, runtime_dir: str) -> Spawn:
    """Render the hook settings into the run dir; the spawn adds ``--settings <file>``.

    ``--settings`` merges with the user's own settings (their hooks still run), so the
    user's files are never edited. Commands carry the absolute interpreter, the run id
    and the event name: the hook reads no configuration.
    """
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    template = msgspec.json.decode(template_text(TEMPLATE))
    settings = fill_hooks(
        template, lambda event: hook_command("claude_code", event, runtime_dir, run_id)
    )
    path = os.path.join(run_dir, SETTINGS_FILE)
    write_private_file(path, msgspec.json.format(msgspec.json.encode(settings), indent=2) + b"\n")
    # The hooks need no environment (the run is in their commands); the agent's own
    # commands do: `agentspool lifecycle` run by the agent finds its run here, and hooks
    # installed in the user's settings leave a wrapped run to these ones.
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=["--settings", path], env=env, settings_path=path, run_dir=run_dir)
