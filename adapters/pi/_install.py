"""Arming Pi once for every run: agentspool's extension in Pi's own extensions folder.

Pi loads every ``*.js`` / ``*.ts`` file in ``<agent dir>/extensions/`` at start (user
scope: ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``; project scope:
``<project>/.pi/extensions/``; docs/providers/pi.md §4). Installing is adding one file of
ours there, ``agentspool-pi.js`` — the extension with no run baked in, which names the run
after the Pi process (``common.install.ScriptInstaller``; docs/adr/0051-pi-extension.md).
"""

from __future__ import annotations

from agentspool.adapters.common.install import ScriptInstaller
from agentspool.adapters.pi._home import agent_dir
from agentspool.adapters.pi._lifecycle import EXTENSION_FILE, extension_source

MARK = "agentspool's Pi extension"
"""Every version of the extension says this in its first line: how ours is told apart."""


INSTALLER = ScriptInstaller(
    "pi",
    mark=MARK,
    what="agentspool's extension",
    file_name=EXTENSION_FILE,
    folder="extensions",
    user_dir=agent_dir,
    project_dir=".pi",
    source=extension_source,
)
