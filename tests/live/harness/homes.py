"""What every CLI's harness does the same way: its private environment, its TUI started
at the prompt, a prompt typed into it, and its process killed with its terminal.

A CLI's own module (``copilot``, ``opencode``, ``codex``, …) adds what is its alone: its
config-dir variable and its offline switches, the marker its prompt shows, how its
processes are found.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import tmux

# Never let a stray proxy setting send anything off-box.
LOOPBACK_ONLY = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


@dataclass
class CliHome:
    """One run's private root: ``home`` (HOME), ``cwd`` (the session's work dir, a fresh
    git repo), the scripted server's ``base_url``, and the panes to kill at the end."""

    root: Path
    home: Path
    cwd: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    def cleanup(self, *, keep: bool = False) -> None:
        cleanup(self.panes, self.root, keep=keep)


def cleanup(
    panes: list[tmux.Pane],
    root: Path,
    *,
    keep: bool = False,
    kill: Callable[[tmux.Pane], None] | None = None,
) -> None:
    """Kill every pane started for a home (``kill``: the CLI's own way; default
    ``kill_pane``), then delete its root (unless ``keep``)."""
    for pane in panes:
        (kill or kill_pane)(pane)
    panes.clear()
    if not keep:
        shutil.rmtree(root, ignore_errors=True)


def git_init(home: CliHome) -> None:
    git = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.home)}
    subprocess.run(["git", "init", "-q", str(home.cwd)], check=True, env=git)


def private_env(home: Path, root: Path) -> dict[str, str]:
    """A minimal environment: the caller's ``PATH`` and nothing else of it; ``HOME`` and
    every XDG dir inside ``home``, ``TMPDIR`` under the run's ``root``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(root / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
        **LOOPBACK_ONLY,
    }


def start_at_prompt(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    ready: str,
    panes: list[tmux.Pane],
    width: int,
    height: int,
    timeout: float,
) -> tmux.Pane:
    """The TUI in a private tmux server (kept in ``panes`` for the cleanup), once its
    screen shows ``ready``."""
    pane = tmux.start(argv, cwd=str(cwd), env=env, width=width, height=height)
    panes.append(pane)
    pane.wait_for(ready, timeout)
    return pane


def submit(pane: tmux.Pane, text: str, timeout: float = 30.0) -> None:
    """Type ``text``, wait until the input shows it, then Enter (two tmux calls: text and
    Enter in one can be taken as a paste)."""
    pane.send_text(text)
    pane.wait_for(text, timeout)
    time.sleep(0.3)
    pane.send_keys("Enter")


def kill_pane(pane: tmux.Pane) -> None:
    """Kill the tmux server, then the pane's process should it outlive its terminal."""
    with contextlib.suppress(Exception):
        process = pane.pane_pid()
    pane.kill()
    with contextlib.suppress(NameError, ProcessLookupError, PermissionError):
        os.kill(process, 9)
