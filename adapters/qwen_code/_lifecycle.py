"""Arming a Qwen Code run: a settings layer of its own, named in the agent's environment.

Qwen Code 0.24.4 reads a *system defaults* settings file from the path
``QWEN_CODE_SYSTEM_DEFAULTS_PATH`` names (else ``system-defaults.json`` beside the
system settings, ``/etc/qwen-code/``), below the user's and the project's settings, and
concatenates every layer's hooks. So ``setup`` writes the run's hooks into a file in the
run dir and the spawn names it there: the user's own settings are never edited, and
their hooks still run (docs/adr/0047-qwen-code-arming.md). A defaults file the machine
already has is kept: its settings are copied into the run's file, our hooks added.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.adapters.qwen_code._install import PROVIDER, TEMPLATE
from agentspool.core.seam import Spawn
from agentspool.spool.errors import SettingsError
from agentspool.spool.files import open_regular, write_private_file
from agentspool.spool.layout import default_runtime_dir, ensure_run_dir
from agentspool.spool.write import RUN_ID_ENV, RUNTIME_DIR_ENV

DEFAULTS_ENV = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
SETTINGS_ENV = "QWEN_CODE_SYSTEM_SETTINGS_PATH"
SETTINGS_FILE = "qwen-code.system-defaults.json"


def machine_defaults_path(environ: dict[str, str] | None = None) -> str:
    """The defaults file the CLI would read without us (0.24.4's own rule)."""
    env = os.environ if environ is None else environ
    if env.get(DEFAULTS_ENV):
        return env[DEFAULTS_ENV]
    system = env.get(SETTINGS_ENV) or "/etc/qwen-code/settings.json"
    return os.path.join(os.path.dirname(system), "system-defaults.json")


def _machine_defaults(path: str) -> dict[str, Any]:
    try:
        with open_regular(path) as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        found = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise SettingsError(
            path, "is not strict JSON (comments?): cannot add a run's hooks"
        ) from None
    if not isinstance(found, dict):
        raise SettingsError(path, "is not a JSON object")
    return found


def setup(run_id: str, runtime_dir: str) -> Spawn:
    """Render the run's settings layer into the run dir; the spawn passes ``Spawn.env``."""
    defaults_path = machine_defaults_path()
    settings = _machine_defaults(defaults_path)
    runtime_dir = runtime_dir or default_runtime_dir()
    run_dir = ensure_run_dir(runtime_dir, run_id)
    template = msgspec.json.decode(template_text(TEMPLATE))
    ours = fill_hooks(template, lambda event: hook_command("qwen_code", event, runtime_dir, run_id))
    hooks = dict(settings.get("hooks") or {}) if isinstance(settings.get("hooks"), dict) else {}
    for event, groups in ours["hooks"].items():
        kept = hooks.get(event)
        hooks[event] = [*(kept if isinstance(kept, list) else []), *groups]
    settings = {**settings, "hooks": hooks}
    path = os.path.join(run_dir, SETTINGS_FILE)
    write_private_file(path, msgspec.json.format(msgspec.json.encode(settings), indent=2) + b"\n")
    # The run is in the hook commands; the agent's own commands (``agentspool
    # lifecycle``) find it in the environment, and installed hooks leave it to these.
    env = {DEFAULTS_ENV: path, RUNTIME_DIR_ENV: runtime_dir, RUN_ID_ENV: run_id}
    return Spawn(args=[], env=env, settings_path=path, run_dir=run_dir)


__all__ = ["PROVIDER", "setup"]
