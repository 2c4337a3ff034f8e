"""Arming a Copilot CLI run: a plugin of the run's own, passed with ``--plugin-dir``.

Copilot CLI 1.0.102 loads a plugin directory named on its command line for that session
only (``--plugin-dir <dir>``, repeatable): a ``plugin.json`` manifest naming a
``hooks.json`` in the same format as the user's ``~/.copilot/hooks/*.json``, whose hooks
run beside the user's own. ``setup`` writes both into the run dir with the run baked into
each hook command (the hook reads no configuration) and hands back the flag; nothing of
the user's is touched (docs/adr/0045-copilot-cli-arming.md).
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.core.seam import Spawn
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

TEMPLATE = "copilot.hooks.json"
PLUGIN_DIR = "copilot-plugin"
MANIFEST = {
    "name": "agentspool",
    "description": "Records this run's hook events for agentspool",
    "version": "1",
    "hooks": "hooks.json",
}


def hooks_document(command_for: object) -> dict[str, object]:
    """The template with each ``{{hook:<event>}}`` replaced by ``command_for(event)``."""
    template = msgspec.json.decode(template_text(TEMPLATE))
    filled: dict[str, object] = fill_hooks(template, command_for)  # type: ignore[arg-type]
    return filled


def setup(run_id: str, runtime_dir: str) -> Spawn:
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    plugin = os.path.join(run_dir, PLUGIN_DIR)
    os.makedirs(plugin, mode=0o700, exist_ok=True)
    hooks = hooks_document(lambda event: hook_command("copilot", event, runtime_dir, run_id))
    hooks_path = os.path.join(plugin, "hooks.json")
    write_private_file(hooks_path, msgspec.json.format(msgspec.json.encode(hooks)))
    write_private_file(os.path.join(plugin, "plugin.json"), msgspec.json.encode(MANIFEST))
    # Not for the hooks (their run is baked in): `agentspool lifecycle` run by the agent
    # finds its run here, and an installed hook leaves this run to these.
    env = {RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=["--plugin-dir", plugin], env=env, settings_path=hooks_path, run_dir=run_dir)
