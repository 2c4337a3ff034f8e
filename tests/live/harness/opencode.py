"""Run the real ``opencode`` 1.18.33 against the scripted chat-completions server, hermetically.

Every run gets a private root holding ``home/`` (HOME and every XDG dir inside it),
``work/`` (the session cwd, a fresh git repo) and ``tmp/``. OpenCode's config
(``home/.config/opencode/opencode.json``) names one provider, ``mock``, built on
``@ai-sdk/openai-compatible`` with its ``baseURL`` at the scripted server on 127.0.0.1,
and asks before every ``bash`` and ``edit`` (1.18.33 allows ``bash`` without asking by
default). The machine's real home is never read or written.

At its first TUI start in a home, OpenCode installs ``@opencode-ai/plugin`` into its config
dir from the npm registry, in the background (``OPENCODE.md``); the package caches are
shared by every home of a test session (``CACHE``), so the download happens once.

API::

    home = make_home(server.base_url, root)            # -> OpenCodeHome
    env = build_env(home, extra_env)
    pane = start_tui(home, extra_args=[...], extra_env={...})   # tmux.Pane, ready for a prompt
    submit(pane, "prompt")                              # type, wait for the echo, Enter
    rows(home.database, "SELECT ...")                   # read-only query of OpenCode's store
    free_port()                                         # a port for --port
    home.cleanup()
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import tmux

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
OPENCODE_BIN = Path(
    os.environ.get("AGENTSPOOL_OPENCODE_BIN") or LIVE_DIR / "node_modules" / ".bin" / "opencode"
)
OPENCODE_VERSION = os.environ.get("AGENTSPOOL_OPENCODE_VERSION") or "1.18.33"
CACHE = Path(tempfile.gettempdir()) / f"agentspool-opencode-cache-{os.getuid()}"

READY_MARKER = "Ask anything"
PERMISSION_MARKER = "Permission required"
PERMISSION_KEYS = "Allow once"
QUESTION_MARKER = "esc dismiss"
# The footer while a turn runs; after one Esc it asks for the second.
BUSY_MARKERS = ("esc interrupt", "esc again to interrupt")
INTERRUPTED_MARKER = "interrupted"


def available() -> bool:
    return OPENCODE_BIN.exists()


@dataclass
class OpenCodeHome:
    root: Path
    home: Path
    cwd: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def config_dir(self) -> Path:
        return self.home / ".config" / "opencode"

    @property
    def data_dir(self) -> Path:
        return self.home / ".local" / "share" / "opencode"

    @property
    def database(self) -> Path:
        return self.data_dir / "opencode.db"

    def cleanup(self, *, keep: bool = False) -> None:
        for pane in self.panes:
            kill_pane(pane)
        self.panes.clear()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def config(base_url: str) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": base_url, "apiKey": "sk-local-test"},
                "models": {"mock-model": {"name": "Mock Model"}},
            }
        },
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"bash": "ask", "edit": "ask"},
    }


def make_home(base_url: str, root: str | Path | None = None) -> OpenCodeHome:
    assert base_url.startswith("http://127.0.0.1:"), base_url
    r = Path(root) if root else Path(tempfile.mkdtemp(prefix="agentspool-opencode-"))
    home = OpenCodeHome(root=r, home=r / "home", cwd=r / "work", base_url=base_url)
    for d in (home.config_dir, home.data_dir, home.cwd, r / "tmp", home.home / ".cache"):
        d.mkdir(parents=True, exist_ok=True)
    (home.config_dir / "opencode.json").write_text(json.dumps(config(base_url), indent=2))
    git = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.home)}
    subprocess.run(["git", "init", "-q", str(home.cwd)], check=True, env=git)
    return home


def build_env(home: OpenCodeHome, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing from the caller's but PATH."""
    CACHE.mkdir(mode=0o700, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home.home),
        "XDG_CONFIG_HOME": str(home.home / ".config"),
        "XDG_DATA_HOME": str(home.home / ".local" / "share"),
        "XDG_STATE_HOME": str(home.home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home.home / ".cache"),
        "TMPDIR": str(home.root / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
        # The plugin package OpenCode installs into its config dir: fetched once a session.
        "npm_config_cache": str(CACHE / "npm"),
        "BUN_INSTALL_CACHE_DIR": str(CACHE / "bun"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra_env or {})
    return env


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(OPENCODE_BIN), *extra_args]


def start_tui(
    home: OpenCodeHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    width: int = 160,
    height: int = 45,
    timeout: float = 120.0,
) -> tmux.Pane:
    """The TUI in a private tmux server, at its prompt (the first start takes ~10-25 s)."""
    pane = tmux.start(
        command(extra_args),
        cwd=str(home.cwd),
        env=build_env(home, extra_env),
        width=width,
        height=height,
    )
    home.panes.append(pane)
    pane.wait_for(READY_MARKER, timeout)
    return pane


def submit(pane: tmux.Pane, text: str, timeout: float = 30.0) -> None:
    """Type ``text``, wait until the input shows it, then Enter (two tmux calls: text and
    Enter in one can be taken as a paste)."""
    pane.send_text(text)
    pane.wait_for(text, timeout)
    time.sleep(0.3)
    pane.send_keys("Enter")


def is_busy(screen: str) -> bool:
    return any(marker in screen for marker in BUSY_MARKERS)


def pid(pane: tmux.Pane) -> int:
    """The opencode process: tmux runs the one command as the pane's process."""
    return pane.pane_pid()


def kill_pane(pane: tmux.Pane) -> None:
    """Kill the tmux server, then the opencode process should it outlive its terminal."""
    with contextlib.suppress(Exception):
        process = pane.pane_pid()
    pane.kill()
    with contextlib.suppress(NameError, ProcessLookupError, PermissionError):
        os.kill(process, 9)


def rows(database: str | Path, query: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """A read-only query of OpenCode's store (oracles and failure dumps)."""
    uri = f"file:{database}?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            return conn.execute(query, args).fetchall()
    except sqlite3.Error:
        return []


def get(port: int, path: str, password: str = "") -> tuple[int, Any]:
    """``GET path`` of OpenCode's server on 127.0.0.1 (user ``opencode``): status and JSON
    body; ``(0, None)`` when it does not answer."""
    import base64
    import http.client

    headers = {}
    if password:
        token = base64.b64encode(f"opencode:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        try:
            return response.status, json.loads(body)
        except ValueError:
            return response.status, body.decode("utf-8", "replace")
    except OSError:
        return 0, None
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
