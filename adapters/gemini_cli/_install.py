"""Arming Gemini CLI: our hooks in its user ``settings.json``, once.

``$GEMINI_CLI_HOME/.gemini/settings.json``, else ``~/.gemini/settings.json``
(``GEMINI_CLI_HOME`` moves the whole ``.gemini`` dir: settings, auth, chats). Gemini CLI
merges the hooks of every settings layer, so ours run beside the user's. The file is
edited as text, merged, never overwritten (ADR 0016); a settings file holding comments
(the CLI strips them) is refused, as any file that is not strict JSON.

These installed hooks are also how a wrapper's run is observed: Gemini CLI 0.61.0 offers
no per-run settings layer a wrapper could add (docs/adr/0028-gemini-cli-arming.md).
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.core.seam import InstalledFile, InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError

PROVIDER = "gemini-cli"
TEMPLATE = "gemini-cli.settings.json"
SETTINGS = "settings.json"


def gemini_dir() -> str:
    """Where Gemini CLI keeps its settings and chats: ``<GEMINI_CLI_HOME or ~>/.gemini``."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini")


def settings_path(directory: str | None = None) -> str:
    return os.path.join(os.path.abspath(directory or gemini_dir()), SETTINGS)


def events() -> list[str]:
    template = msgspec.json.decode(template_text(TEMPLATE))
    return list(template["hooks"])


def groups() -> dict[str, dict[str, Any]]:
    """One hook group per event, the template's, with the installed command."""
    template = msgspec.json.decode(template_text(TEMPLATE))
    filled = fill_hooks(template, lambda event: hook_command("gemini_cli", event, installed=True))
    return {event: entries[0] for event, entries in filled["hooks"].items()}


def missing(directory: str | None = None) -> list[str]:
    """The events whose hook group of ours is not in the settings file as ``install``
    writes it now (an absent file, or one holding an older command, misses them all)."""
    path = settings_path(directory)
    try:
        text = install.read_text(path) or "{}"  # never blocks on a FIFO
        installed = install.our_group_positions(text, path)
    except SettingsError:
        installed = {}
    return [
        event
        for event, group in groups().items()
        if group not in [found for _, found in installed.get(event, [])]
    ]


def _edit(path: str, change: install.Edit) -> InstalledFile:
    return install.edit_file(path, change, ours=install.text_holds_ours)


def install_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = settings_path(directory)
    wanted = groups()
    done = _edit(path, lambda text, _backup: install.add_groups(text, path, wanted))
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def uninstall_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = settings_path(directory)
    done = _edit(path, lambda text, backup: install.remove_groups(text, path, backup))
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our hooks in the user's settings (``agentspool doctor``)."""
    return install.installed_commands(
        settings_path(directory), lambda event: hook_command("gemini_cli", event, installed=True)
    )
