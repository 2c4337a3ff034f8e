"""Arming Copilot CLI once for every run: a hooks file of ours in its hooks folder.

Copilot CLI 1.0.102 loads every ``<COPILOT_HOME>/hooks/*.json`` (default
``~/.copilot/hooks/``) as user hooks, run beside any others. Installing is adding one
file there, ``agentspool.json``, whose commands carry no run (``--installed``: the hook
names the run after the copilot process); no file of the user's is edited, so there is
nothing to merge or back up, and uninstalling removes that file (and the folder, if
install made it: the CLI does not). A file of that name that is not ours is refused.
"""

from __future__ import annotations

import os

import msgspec

from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command, is_installed_hook
from agentspool.adapters.copilot._home import copilot_home
from agentspool.adapters.copilot._lifecycle import hooks_document
from agentspool.core.seam import InstalledHook, InstallReport, InstallScope

PROVIDER = "copilot"
HOOKS_FILE = "agentspool.json"


def hooks_path(directory: str | None = None) -> str:
    return os.path.join(os.path.abspath(directory or copilot_home()), "hooks", HOOKS_FILE)


def _installed_command(event: str) -> str:
    return hook_command("copilot", event, installed=True)


def wanted() -> str:
    text = msgspec.json.format(msgspec.json.encode(hooks_document(_installed_command)))
    return text.decode() + "\n"


def _is_ours(text: str) -> bool:
    try:
        document = msgspec.json.decode(text)
        hooks = document["hooks"]
        return all(
            is_installed_hook(entry["bash"]) for entries in hooks.values() for entry in entries
        )
    except (msgspec.DecodeError, KeyError, TypeError, AttributeError):
        return False


def _current(path: str) -> str | None:
    return install.read_own_file(path, _is_ours, "agentspool's hooks file")


def install_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = hooks_path(directory)
    return install.write_own_file(PROVIDER, scope, path, wanted(), _current(path))


def uninstall_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = hooks_path(directory)
    return install.remove_own_file(PROVIDER, scope, path, _current(path), tidy=True)


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our hooks in the user's hooks folder, if the file is there (``agentspool doctor``)."""
    path = hooks_path(directory)
    current = _current(path)
    if current is None:
        return []
    document = msgspec.json.decode(current)
    return [
        InstalledHook(
            path=path,
            event=event,
            command=entries[0]["bash"],
            current=entries[0]["bash"] == _installed_command(event),
        )
        for event, entries in document["hooks"].items()
    ]
