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
import socket
import sqlite3
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import homes, tmux

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


# Shared by every CLI's harness (``homes``); named here as each CLI's module names them.
submit = tmux.submit
kill_pane = homes.kill_pane


def available() -> bool:
    return OPENCODE_BIN.exists()


@dataclass
class OpenCodeHome(homes.CliHome):
    @property
    def config_dir(self) -> Path:
        return self.home / ".config" / "opencode"

    @property
    def data_dir(self) -> Path:
        return self.home / ".local" / "share" / "opencode"

    @property
    def database(self) -> Path:
        return self.data_dir / "opencode.db"


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
    homes.git_init(home)
    return home


def build_env(home: OpenCodeHome, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing from the caller's but PATH."""
    CACHE.mkdir(mode=0o700, exist_ok=True)
    env = homes.private_env(home.home, tmp=home.root / "tmp")
    env.update(
        {
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
            # The plugin package OpenCode installs into its config dir: fetched once a session.
            "npm_config_cache": str(CACHE / "npm"),
            "BUN_INSTALL_CACHE_DIR": str(CACHE / "bun"),
        }
    )
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


def is_busy(screen: str) -> bool:
    return any(marker in screen for marker in BUSY_MARKERS)


def pid(pane: tmux.Pane) -> int:
    """The opencode process: tmux runs the one command as the pane's process."""
    return pane.pane_pid()


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
