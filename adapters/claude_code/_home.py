"""Where Claude Code keeps its settings and transcripts on this machine: standard
library only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os


def config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
