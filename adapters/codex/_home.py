"""Where Codex keeps its config and rollouts on this machine: standard library only, so
that the registry can ask it before it loads the adapter (``registry.history_here``,
ADR 0062)."""

from __future__ import annotations

import os


def codex_home(explicit: str | None = None) -> str:
    return explicit or os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
