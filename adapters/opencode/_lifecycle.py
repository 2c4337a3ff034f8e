"""Arming OpenCode per run: the spool plugin, named in OpenCode's config environment.

OpenCode has no shell hooks, and reads extra configuration from the environment:
``OPENCODE_CONFIG_CONTENT`` is a JSON config merged over the user's own (its ``plugin``
list is added to theirs, docs/providers/opencode.md §3.1). ``setup`` writes the plugin
into the run dir, with the run baked in (it reads no configuration), and hands back the
environment that names it. Nothing goes on the command line: ``Spawn.args`` is empty.

A run started with ``--port`` also serves OpenCode's API; ``setup`` gives each run a
server password (``OPENCODE_SERVER_PASSWORD``), kept in the run dir for the reader, so
that server answers only to this user's agentspool (ADR 0030). The port itself is the
wrapper's to choose: OpenCode hangs at start when its port is taken, so a port picked
here, before the spawn, could turn a race into a hung agent.
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.common.templates import spool_script
from agentspool.adapters.opencode._server import PASSWORD_FILE
from agentspool.core.seam import Spawn
from agentspool.spool.errors import SettingsError
from agentspool.spool.files import write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

TEMPLATE = "opencode-plugin.js"
PLUGIN_FILE = "agentspool-opencode.js"
CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
PASSWORD_ENV = "OPENCODE_SERVER_PASSWORD"  # noqa: S105 - a name, not a secret


def plugin_source(runtime_dir: str | None = None, run_id: str | None = None) -> str:
    """The plugin, installed (``ARMED`` null) or armed for one run."""
    return spool_script(TEMPLATE, runtime_dir, run_id)


def config_content(plugin_path: str, current: str | None) -> str:
    """``OPENCODE_CONFIG_CONTENT`` naming the plugin, merged into the value the spawn
    would otherwise pass on (``current``): its keys kept, the plugin added to its list."""
    config: dict[str, object] = {}
    if current:
        try:
            found = msgspec.json.decode(current)
        except msgspec.DecodeError as exc:
            raise SettingsError(CONFIG_ENV, f"not JSON: {exc}") from None
        if not isinstance(found, dict):
            raise SettingsError(CONFIG_ENV, "not a JSON object")
        config = found
    plugins = config.get("plugin")
    listed = [p for p in plugins if isinstance(p, str)] if isinstance(plugins, list) else []
    url = "file://" + plugin_path
    config["plugin"] = [*listed, url] if url not in listed else listed
    return msgspec.json.encode(config).decode()


def setup(run_id: str, runtime_dir: str) -> Spawn:
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    path = os.path.join(run_dir, PLUGIN_FILE)
    write_private_file(path, plugin_source(runtime_dir, run_id).encode())
    import secrets  # here: every command that loads the adapters paid 2 ms for it

    secret = os.environ.get(PASSWORD_ENV) or secrets.token_urlsafe(24)
    write_private_file(os.path.join(run_dir, PASSWORD_FILE), secret.encode() + b"\n")
    env = {
        CONFIG_ENV: config_content(path, os.environ.get(CONFIG_ENV)),
        PASSWORD_ENV: secret,
        # Not for the plugin (its run is baked in): `agentspool lifecycle` run by the
        # agent finds its run here, and an installed plugin leaves this run to this one.
        RUNTIME_DIR_ENV: runtime_dir,
        RUN_ID_ENV: run_id,
    }
    return Spawn(args=[], env=env, settings_path=path, run_dir=run_dir)
