"""Qwen Code's own settings: our hooks in its user ``settings.json``, once, for runs
nobody wrapped (``agentspool install qwen-code``).

``$QWEN_HOME/settings.json``, else ``~/.qwen/settings.json`` (``QWEN_HOME`` moves the
whole dir: settings, chats, status files). Qwen Code concatenates the hooks of every
settings layer (0.24.4: each event's ``mergeStrategy`` is ``concat``), so ours run
beside the user's. The edit is ``common.settings_hooks``'s (ADR 0016).
"""

from __future__ import annotations

import os

from agentspool.adapters.common.settings_hooks import SettingsHooks

PROVIDER = "qwen-code"
TEMPLATE = "qwen-code.settings.json"


def qwen_dir() -> str:
    """Where Qwen Code keeps its settings, chats and status files."""
    return os.environ.get("QWEN_HOME") or os.path.join(os.path.expanduser("~"), ".qwen")


HOOKS = SettingsHooks(PROVIDER, TEMPLATE, "qwen_code", qwen_dir)
