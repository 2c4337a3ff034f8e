"""Where OpenCode keeps its sessions (one SQLite database) on this machine: standard
library only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os


def database() -> str:
    """The database OpenCode uses in this environment (docs/providers/opencode.md §2):
    ``$OPENCODE_DB`` (absolute, or relative to the data dir), else
    ``$XDG_DATA_HOME/opencode/opencode.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    data = os.path.join(base, "opencode")
    named = os.environ.get("OPENCODE_DB", "")
    if named == ":memory:":
        return ""
    return os.path.join(data, named) if named else os.path.join(data, "opencode.db")
