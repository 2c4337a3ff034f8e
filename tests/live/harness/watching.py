"""``agentspool watch`` full screen in tmux, started as a person starts it.

The command runs from this checkout's interpreter with a private ``HOME``; the CLIs'
own homes (where ``watch`` discovers sessions no hook armed) are this process's
``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` and ``GEMINI_CLI_HOME`` — private to each test
(``tests/conftest.py``) and to each benchmark run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from harness import tmux


def start_watch(
    runtime_dir: str,
    *,
    home: str,
    args: Sequence[str] = (),
    width: int = 160,
    height: int = 40,
    server: tmux.Pane | None = None,
) -> tmux.Pane:
    """``agentspool watch --runtime-dir <runtime_dir> <args>`` in a new tmux server (or a
    window of ``server``'s), from ``home``."""
    argv = [sys.executable, "-m", "agentspool.cli.main", "watch", "--runtime-dir", runtime_dir]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "CLAUDE_CONFIG_DIR": os.environ["CLAUDE_CONFIG_DIR"],
        "CODEX_HOME": os.environ["CODEX_HOME"],
        "GEMINI_CLI_HOME": os.environ.get("GEMINI_CLI_HOME", home),
    }
    return tmux.start([*argv, *args], cwd=home, env=env, width=width, height=height, server=server)
