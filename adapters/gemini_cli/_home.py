"""Where Gemini CLI keeps its settings and chats on this machine: standard library
only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os


def gemini_dir() -> str:
    """Where Gemini CLI keeps its settings and chats: ``<GEMINI_CLI_HOME or ~>/.gemini``."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini")
