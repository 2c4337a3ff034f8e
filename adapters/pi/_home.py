"""Where Pi keeps its settings and sessions on this machine: standard library only, so
that the registry can ask it before it loads the adapter (``registry.history_here``,
ADR 0062)."""

from __future__ import annotations

import os

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def agent_dir() -> str:
    """Where Pi keeps its settings and sessions."""
    return os.environ.get(AGENT_DIR_ENV) or os.path.join(os.path.expanduser("~"), ".pi", "agent")
