"""Where Copilot CLI keeps its config and sessions on this machine: standard library
only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os

HOME_ENV = "COPILOT_HOME"


def copilot_home(environ: dict[str, str] | None = None) -> str:
    """Where Copilot keeps its config and sessions: ``$COPILOT_HOME``, else ``~/.copilot``."""
    env = os.environ if environ is None else environ
    return env.get(HOME_ENV) or os.path.join(os.path.expanduser("~"), ".copilot")
