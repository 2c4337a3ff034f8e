"""Arming Gemini CLI: our hooks in its user ``settings.json``, once.

``$GEMINI_CLI_HOME/.gemini/settings.json``, else ``~/.gemini/settings.json``
(``GEMINI_CLI_HOME`` moves the whole ``.gemini`` dir: settings, auth, chats). Gemini CLI
merges the hooks of every settings layer, so ours run beside the user's. The edit is
``common.settings_hooks``'s (as text, merged, never overwritten, ADR 0016; a file with
``//`` and ``/* */`` comments, which Gemini CLI strips, keeps each byte for byte).

These installed hooks are also how a wrapper's run is observed: Gemini CLI 0.61.0 offers
no per-run settings layer a wrapper could add (docs/adr/0028-gemini-cli-arming.md).
"""

from __future__ import annotations

from agentspool.adapters.common.settings_hooks import SETTINGS, SettingsHooks
from agentspool.adapters.gemini_cli._home import gemini_dir

PROVIDER = "gemini-cli"
TEMPLATE = "gemini-cli.settings.json"
__all__ = ["SETTINGS"]


HOOKS = SettingsHooks(PROVIDER, TEMPLATE, "gemini_cli", gemini_dir)
settings_path = HOOKS.settings_path
events = HOOKS.events
groups = HOOKS.groups
missing = HOOKS.missing
install_hooks = HOOKS.install_hooks
uninstall_hooks = HOOKS.uninstall_hooks
installed_hooks = HOOKS.installed_hooks
