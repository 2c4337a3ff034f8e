"""Arming Claude Code once for every run: our hooks in its own ``settings.json``.

User scope: ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``.
Project scope: ``<project>/.claude/settings.json``. Claude Code merges the hooks of
every settings layer, so ours run beside the user's. The groups are the per-run
template's (same events, same matchers, same timeout), with the installed command.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from agentspool.adapters.claude_code._home import config_dir
from agentspool.adapters.claude_code._lifecycle import TEMPLATE
from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.core.seam import InstalledFile, InstalledHook, InstallReport, InstallScope

PROVIDER = "claude-code"
SETTINGS = "settings.json"


def settings_path(scope: InstallScope, directory: str | None) -> str:
    if scope == "user":
        return os.path.join(os.path.abspath(directory or config_dir()), SETTINGS)
    return os.path.join(os.path.abspath(directory or os.getcwd()), ".claude", SETTINGS)


def groups() -> dict[str, dict[str, Any]]:
    """One hook group per event, as the per-run template has it, installed commands."""
    template = msgspec.json.decode(template_text(TEMPLATE))
    filled = fill_hooks(template, lambda event: hook_command("claude_code", event, installed=True))
    return {event: entries[0] for event, entries in filled["hooks"].items()}


def _edit(
    path: str, change: install.Edit, scope: InstallScope, directory: str | None
) -> InstalledFile:
    # A cloned project's .claude may be a committed symlink: nothing is written through it.
    root = os.path.abspath(directory or os.getcwd()) if scope == "project" else None
    return install.edit_file(path, change, ours=install.text_holds_ours, root=root)


def install_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = settings_path(scope, directory)
    wanted = groups()
    done = _edit(
        path, lambda text, _backup: install.add_groups(text, path, wanted), scope, directory
    )
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def uninstall_hooks(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = settings_path(scope, directory)
    done = _edit(
        path, lambda text, backup: install.remove_groups(text, path, backup), scope, directory
    )
    return InstallReport(provider=PROVIDER, scope=scope, files=[done])


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our hooks in the user's settings (``agentspool doctor``)."""
    return install.installed_commands(
        settings_path("user", directory),
        lambda event: hook_command("claude_code", event, installed=True),
    )
