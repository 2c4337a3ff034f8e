"""Arming OpenCode once for every run: the spool plugin in OpenCode's own plugin folder.

OpenCode loads every file in ``<config dir>/plugins/`` at start (user scope:
``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``; project scope:
``<project>/.opencode``; docs/providers/opencode.md §3.2). Installing is adding one file
of ours there, ``agentspool-opencode.js`` — the plugin with no run baked in, which names
the run after the OpenCode process (ADR 0031; ``common.install.ScriptInstaller``).
"""

from __future__ import annotations

import os

from agentspool.adapters.common.install import ScriptInstaller
from agentspool.adapters.opencode._lifecycle import PLUGIN_FILE, plugin_source
from agentspool.core.seam import InstallScope

MARK = "agentspool's OpenCode plugin"
"""Every version of the plugin says this in its first line: how ours is told apart."""


def config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "opencode")


INSTALLER = ScriptInstaller(
    "opencode",
    mark=MARK,
    what="agentspool's plugin",
    file_name=PLUGIN_FILE,
    folder="plugins",
    user_dir=config_dir,
    project_dir=".opencode",
    source=plugin_source,
)


def plugin_path(scope: InstallScope, directory: str | None) -> str:
    return INSTALLER.path(scope, directory)
