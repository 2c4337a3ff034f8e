"""Where Qwen Code keeps its settings, chats and status files on this machine: standard
library only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os


def qwen_dir() -> str:
    """Where Qwen Code keeps its settings, chats and status files."""
    return os.environ.get("QWEN_HOME") or os.path.join(os.path.expanduser("~"), ".qwen")
