"""What every CLI's harness does the same way: a private home (HOME, XDG dirs, TMPDIR
inside the run's root; a git work dir beside it), the clean environment that points
there (nothing inherited but PATH and USER), its TUI started at the prompt, a prompt
typed into it, and its processes killed with its terminal.

A CLI's own module (``copilot``, ``opencode``, ``codex``, ``qwen``, …) adds what is its
alone: its config-dir variable and its offline switches, the marker its prompt shows,
how its processes are found.
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

DIRS = (".config", ".cache", ".local/share", ".local/state", "tmp")
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


def make_dirs(home: Path, *more: Path) -> None:
    for path in (*(home / d for d in DIRS), *more):
        path.mkdir(parents=True, exist_ok=True)


def git_work_dir(path: Path) -> None:
    """``path`` as a fresh git repository with one commit (the CLIs show the branch)."""
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)


def git_init(home: CliHome) -> None:
    git = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.home)}
    subprocess.run(["git", "init", "-q", str(home.cwd)], check=True, env=git)


def private_env(
    home: Path,
    cli: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str | None] | None = None,
    *,
    path_first: str = "",
    tmp: Path | None = None,
) -> dict[str, str]:
    """The CLI's variables ``cli`` over a private base: HOME and every XDG dir inside
    ``home``, TMPDIR ``tmp`` (default ``home/tmp``); ``extra_env`` value None unsets."""
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    env = {
        "PATH": f"{path_first}:{path}" if path_first else path,
        "USER": os.environ.get("USER", "tester"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(tmp or home / "tmp"),
        **(cli or {}),
        **LOOPBACK_ONLY,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    for key, value in (extra_env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


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


def kill_pane(pane: tmux.Pane) -> None:
    """Kill the tmux server, then the pane's process should it outlive its terminal."""
    with contextlib.suppress(Exception):
        process = pane.pane_pid()
    pane.kill()
    with contextlib.suppress(NameError, ProcessLookupError, PermissionError):
        os.kill(process, 9)


def kill_panes(panes: list[tmux.Pane]) -> None:
    """Kill each pane's whole process tree (the CLIs that spawn workers of their own)."""
    for pane in panes:
        pane.kill_tree()
    panes.clear()
