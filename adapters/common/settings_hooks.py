"""Our hook groups in a CLI's own JSON ``settings.json`` (Gemini CLI, Qwen Code), armed
once by ``agentspool install``: one place for what both do the same way.

The file is edited as text, merged, never overwritten (``common.install``, ADR 0016). Both
CLIs strip ``//`` and ``/* */`` comments before they parse their settings, so a commented
file is read the same way and every comment stays byte for byte; anything else that is
not JSON is refused. The groups are the provider's template (``settings-templates/``) with the
installed hook command.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import msgspec

from agentspool.adapters.common import install
from agentspool.adapters.common.commands import hook_command
from agentspool.adapters.common.templates import fill_hooks, template_text
from agentspool.core.seam import InstalledFile, InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError

SETTINGS = "settings.json"


class SettingsHooks:
    """``provider``'s hook groups (``template``, run by ``agentspool.hooks.<module>``) in
    ``<config dir>/settings.json``; ``config_dir`` names the CLI's own."""

    def __init__(
        self, provider: str, template: str, module: str, config_dir: Callable[[], str]
    ) -> None:
        self.provider, self.template, self.module = provider, template, module
        self.config_dir = config_dir

    def settings_path(self, directory: str | None = None) -> str:
        return os.path.join(os.path.abspath(directory or self.config_dir()), SETTINGS)

    def _template(self) -> dict[str, Any]:
        parsed: dict[str, Any] = msgspec.json.decode(template_text(self.template))
        return parsed

    def events(self) -> list[str]:
        return list(self._template()["hooks"])

    def command(self, event: str) -> str:
        return hook_command(self.module, event, installed=True)

    def groups(self) -> dict[str, dict[str, Any]]:
        """One hook group per event, the template's, with the installed command."""
        filled = fill_hooks(self._template(), self.command)
        return {event: entries[0] for event, entries in filled["hooks"].items()}

    def missing(self, directory: str | None = None) -> list[str]:
        """The events whose hook group of ours is not in the settings file as ``install``
        writes it now (an absent file, or one holding an older command, misses them all)."""
        path = self.settings_path(directory)
        try:
            text = install.read_text(path) or "{}"  # never blocks on a FIFO
            installed = install.our_group_positions(text, path, comments=True)
        except SettingsError:
            installed = {}
        return [
            event
            for event, group in self.groups().items()
            if group not in [found for _, found in installed.get(event, [])]
        ]

    def _edit(self, path: str, change: install.Edit) -> InstalledFile:
        return install.edit_file(
            path, change, ours=lambda text: install.text_holds_ours(text, comments=True)
        )

    def install_hooks(self, scope: InstallScope, directory: str | None = None) -> InstallReport:
        path = self.settings_path(directory)
        wanted = self.groups()
        done = self._edit(
            path, lambda text, _backup: install.add_groups(text, path, wanted, comments=True)
        )
        return InstallReport(provider=self.provider, scope=scope, files=[done])

    def uninstall_hooks(self, scope: InstallScope, directory: str | None = None) -> InstallReport:
        path = self.settings_path(directory)
        done = self._edit(
            path, lambda text, backup: install.remove_groups(text, path, backup, comments=True)
        )
        return InstallReport(provider=self.provider, scope=scope, files=[done])

    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]:
        """Our hooks in the user's settings (``agentspool doctor``)."""
        return install.installed_commands(
            self.settings_path(directory), self.command, comments=True
        )
