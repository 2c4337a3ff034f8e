"""A private home for a CLI run (HOME, XDG dirs, TMPDIR inside it; a git work dir beside
it) and the clean environment that points there: nothing inherited but PATH and USER."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from . import tmux

DIRS = (".config", ".cache", ".local/share", ".local/state", "tmp")


def make_dirs(home: Path, *more: Path) -> None:
    for path in (*(home / d for d in DIRS), *more):
        path.mkdir(parents=True, exist_ok=True)


def git_work_dir(path: Path) -> None:
    """``path`` as a fresh git repository with one commit (the CLIs show the branch)."""
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)


def private_env(
    home: Path,
    cli: Mapping[str, str],
    extra_env: Mapping[str, str | None] | None = None,
    *,
    path_first: str = "",
) -> dict[str, str]:
    """The CLI's variables ``cli`` over a private base; ``extra_env`` value None unsets."""
    path = os.environ.get("PATH", "/usr/bin:/bin")
    env = {
        "PATH": f"{path_first}:{path}" if path_first else path,
        "USER": os.environ.get("USER", "tester"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(home / "tmp"),
        **cli,
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",  # else a warning about 24-bit colour takes a line
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    for key, value in (extra_env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def submit_to(
    pane: tmux.Pane,
    text: str,
    composer_text: Callable[[str], str | None],
    *,
    timeout: float = 15.0,
) -> None:
    """Type ``text``, wait until the input box (``composer_text`` reads it off the screen)
    shows it, then Enter — again while it stays: an Enter can be taken by a completion
    menu, or dropped while the box is redrawn."""
    pane.send_text(text)
    pane.wait_until(lambda s: text in (composer_text(s) or ""), timeout=timeout)
    time.sleep(0.3)
    deadline = time.monotonic() + timeout
    while True:
        pane.send_keys("Enter")
        try:
            pane.wait_until(lambda s: text not in (composer_text(s) or ""), timeout=3.0)
            return
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise


def kill_panes(panes: list[tmux.Pane]) -> None:
    for pane in panes:
        pane.kill_tree()
    panes.clear()
