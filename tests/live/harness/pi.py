"""Run the real Pi 0.73.1 (``@mariozechner/pi-coding-agent``) against the scripted
chat-completions server.

Every run gets a private root holding ``home/`` (HOME, ``PI_CODING_AGENT_DIR=
home/.pi/agent`` and every XDG dir inside it), ``work/`` (the session cwd, a fresh git
repo) and ``tmp/``. The model is the scripted server, named in the agent dir's
``models.json`` as provider ``mock`` (``api: "openai-completions"``); ``PI_OFFLINE=1``
keeps Pi from fetching its fd/ripgrep helpers. The machine's real home is never read or
written.

API::

    home = make_home(server.base_url, root)              # -> PiHome
    pane = start_tui(home, extra_args=["-e", ext])       # tmux.Pane at its prompt
    submit(pane, "prompt")                                # type, wait for the echo, Enter
    run_print(home, "prompt", extra_args=[...])           # pi -p, CompletedProcess
    home.session_files()                                  # what Pi keeps
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import homes, tmux

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
PI_BIN = Path(os.environ.get("AGENTSPOOL_PI_BIN") or LIVE_DIR / "node_modules" / ".bin" / "pi")
PI_VERSION = os.environ.get("AGENTSPOOL_PI_VERSION") or "0.73.1"
MODEL_ARGS = ("--provider", "mock", "--model", "mock-model")

# The footer line under the editor, once the TUI takes input (the model it runs).
READY_MARKER = "mock-model"
# The confirm dialog agentspool's extension opens before a `bash` call.
CONFIRM_MARKER = "Run command?"
ABORTED_MARKER = "Operation aborted"


def available() -> bool:
    return PI_BIN.exists()


@dataclass
class PiHome:
    root: Path
    home: Path
    cwd: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def agent_dir(self) -> Path:
        return self.home / ".pi" / "agent"

    def session_files(self) -> list[Path]:
        """Every session file, oldest first (each name starts with its ISO time)."""
        base = self.agent_dir / "sessions"
        return sorted(base.glob("*/*.jsonl"), key=lambda p: p.name) if base.is_dir() else []

    def cleanup(self, *, keep: bool = False) -> None:
        for pane in self.panes:
            pane.kill_tree()
        self.panes.clear()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def make_home(base_url: str, root: str | Path | None = None) -> PiHome:
    assert base_url.startswith("http://127.0.0.1:"), base_url
    r = Path(root) if root else Path(tempfile.mkdtemp(prefix="agentspool-pi-"))
    home = PiHome(root=r, home=r / "home", cwd=r / "work", base_url=base_url)
    for d in (home.agent_dir, home.cwd, r / "tmp", home.home / ".cache"):
        d.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": "mock-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "name": "Mock Model", "reasoning": False}],
    }
    models = {"providers": {"mock": provider}}
    (home.agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    git = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.home)}
    subprocess.run(["git", "init", "-q", str(home.cwd)], check=True, env=git)
    return home


def build_env(home: PiHome, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing from the caller's but PATH."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home.home),
        "PI_CODING_AGENT_DIR": str(home.agent_dir),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "XDG_CONFIG_HOME": str(home.home / ".config"),
        "XDG_DATA_HOME": str(home.home / ".local" / "share"),
        "XDG_STATE_HOME": str(home.home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home.home / ".cache"),
        "TMPDIR": str(home.root / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra_env or {})
    return env


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(PI_BIN), *MODEL_ARGS, *extra_args]


def start_tui(
    home: PiHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    width: int = 160,
    height: int = 50,
    timeout: float = 60.0,
) -> tmux.Pane:
    """The TUI in a private tmux server, at its prompt."""
    return homes.start_at_prompt(
        command(extra_args),
        cwd=home.cwd,
        env=build_env(home, extra_env),
        ready=READY_MARKER,
        panes=home.panes,
        width=width,
        height=height,
        timeout=timeout,
    )


submit = tmux.submit


def run_print(
    home: PiHome,
    prompt: str,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command([*extra_args, "-p", prompt]),
        cwd=home.cwd,
        env=build_env(home, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def quit_tui(pane: tmux.Pane, timeout: float = 30.0) -> None:
    """``/quit``, and wait until the process is gone."""
    submit(pane, "/quit")
    tmux.wait_exited(pane, timeout)


def kill_pane(pane: tmux.Pane) -> None:
    with contextlib.suppress(Exception):
        pane.kill_tree()
