"""Qwen Code's own settings: our hooks in its user ``settings.json``, once, for runs
nobody wrapped (``agentspool install qwen-code``).

``$QWEN_HOME/settings.json``, else ``~/.qwen/settings.json`` (``QWEN_HOME`` moves the
whole dir: settings, chats, status files). Qwen Code concatenates the hooks of every
settings layer (0.24.4: each event's ``mergeStrategy`` is ``concat``), so ours run
beside the user's. The edit is ``common.settings_hooks``'s (ADR 0016).
"""

from __future__ import annotations

from agentspool.adapters.common.settings_hooks import SettingsHooks
from agentspool.adapters.qwen_code._home import qwen_dir

PROVIDER = "qwen-code"
TEMPLATE = "qwen-code.settings.json"


HOOKS = SettingsHooks(PROVIDER, TEMPLATE, "qwen_code", qwen_dir)
