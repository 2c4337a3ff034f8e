"""Where Kimi Code keeps its config and sessions on this machine: standard library
only, so that the registry can ask it before it loads the adapter
(``registry.history_here``, ADR 0062)."""

from __future__ import annotations

import os

HOME_ENV = "KIMI_CODE_HOME"


def kimi_dir(environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    return env.get(HOME_ENV) or os.path.join(home, ".kimi-code")
