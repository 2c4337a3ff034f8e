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

from agentspool.adapters.common import install
from agentspool.adapters.opencode._lifecycle import PLUGIN_FILE, plugin_source
from agentspool.core.seam import InstalledHook, InstallReport, InstallScope

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
    return install.read_own_file(
        path, lambda text: MARK in text.split("\n", 1)[0], "agentspool's plugin"
    )


def _checked_path(scope: InstallScope, directory: str | None) -> str:
    path = plugin_path(scope, directory)
    if scope == "project":  # a committed .opencode symlink must not take the plugin elsewhere
        install.refuse_symlinks(path, os.path.abspath(directory or os.getcwd()))
    return path


def install_plugin(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = _checked_path(scope, directory)
    return install.write_own_file(PROVIDER, scope, path, plugin_source(), _current(path))


def uninstall_plugin(scope: InstallScope, directory: str | None = None) -> InstallReport:
    path = _checked_path(scope, directory)
    return install.remove_own_file(PROVIDER, scope, path, _current(path))


def installed_hooks(directory: str | None = None) -> list[InstalledHook]:
    """Our plugin in the user's plugin folder, if it is there (``agentspool doctor``):
    OpenCode loads it itself, so there is no command to run."""
    path = plugin_path("user", directory)
    current = _current(path)
    if current is None:
        return []
    return [InstalledHook(path=path, event="plugin", current=current == plugin_source())]
