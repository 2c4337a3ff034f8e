"""Arming OpenCode once for every run: the spool plugin in OpenCode's own plugin folder.

OpenCode loads every file in ``<config dir>/plugins/`` at start (user scope:
``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``; project scope:
``<project>/.opencode``; docs/providers/opencode.md §3.2). Installing is adding one file
of ours there, ``agentspool-opencode.js`` — the plugin with no run baked in, which names
the run after the OpenCode process (ADR 0031). No file of the user's is edited, so
there is nothing to merge and nothing to back up; uninstalling removes that file again.
A file of that name that is not ours is never overwritten or removed.
"""

from __future__ import annotations

import os
from typing import Literal

from agentspool.adapters.common import install
from agentspool.adapters.opencode._lifecycle import PLUGIN_FILE, plugin_source
from agentspool.core.seam import InstalledFile, InstalledHook, InstallReport, InstallScope
from agentspool.spool.errors import SettingsError
from agentspool.spool.files import write_private_file

PROVIDER = "opencode"
MARK = "agentspool's OpenCode plugin"
"""Every version of the plugin says this in its first line: how ours is told apart."""


def config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "opencode")


def plugin_path(scope: InstallScope, directory: str | None) -> str:
    if scope == "user":
        root = os.path.abspath(directory or config_dir())
    else:
        root = os.path.join(os.path.abspath(directory or os.getcwd()), ".opencode")
    return os.path.join(root, "plugins", PLUGIN_FILE)


def _current(path: str) -> str | None:
    """The file's text; ``None`` when there is none. Refuses one that is not ours."""
    data, _ = install.read_file(path)  # no symlink, no FIFO: refused in one line
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    if MARK not in text.split("\n", 1)[0]:
        raise SettingsError(path, "exists and is not agentspool's plugin; left as it is")
    return text


def _checked_path(scope: InstallScope, directory: str | None) -> str:
    path = plugin_path(scope, directory)
    if scope == "project":  # a committed .opencode symlink must not take the plugin elsewhere
        install.refuse_symlinks(path, os.path.abspath(directory or os.getcwd()))
    return path


def install_plugin(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = _checked_path(scope, directory)
    wanted = plugin_source()
    current = _current(path)
    action: Literal["created", "updated", "unchanged"]
    if current == wanted:
        action = "unchanged"
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_private_file(path, wanted.encode(), mode=0o644)
        action = "created" if current is None else "updated"
    return InstallReport(
        provider=PROVIDER, scope=scope, files=[InstalledFile(path=path, action=action)]
    )


def uninstall_plugin(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = _checked_path(scope, directory)
    action: Literal["removed", "unchanged"] = "unchanged"
    if _current(path) is not None:
        os.unlink(path)
        action = "removed"
    return InstallReport(
        provider=PROVIDER, scope=scope, files=[InstalledFile(path=path, action=action)]
    )


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our plugin in the user's plugin folder, if it is there (``agentspool doctor``):
    OpenCode loads it itself, so there is no command to run."""
    path = plugin_path("user", directory)
    current = _current(path)
    if current is None:
        return []
    return [InstalledHook(path=path, event="plugin", current=current == plugin_source())]
