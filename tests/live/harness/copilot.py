"""Run the real GitHub Copilot CLI 1.0.102 against the scripted chat-completions server.

Every run gets a private root holding ``home/`` (HOME, ``COPILOT_HOME=home/.copilot`` and
every XDG dir inside it), ``work/`` (the session cwd, a fresh git repo, trusted in
``config.json`` so no folder-trust dialog opens) and ``tmp/``. The model is the scripted
server, reached in Copilot's own "bring your own key" mode (``COPILOT_PROVIDER_*``) with
``COPILOT_OFFLINE=true``: no GitHub login, no network. The machine's real home is never
read or written.

API::

    home = make_home(server.base_url, root)            # -> CopilotHome
    pane = start_tui(home, extra_args=["--plugin-dir", d])   # tmux.Pane at its prompt
    submit(pane, "prompt")                              # type, wait for the echo, Enter
    run_print(home, "prompt", extra_args=[...])         # copilot -p, CompletedProcess
    write_logging_plugin(home, log)                     # a plugin dir whose hooks log
    home.transcript(session_id), home.open_sessions()   # what Copilot keeps
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import homes, hooklog, tmux

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
COPILOT_BIN = Path(
    os.environ.get("AGENTSPOOL_COPILOT_BIN") or LIVE_DIR / "node_modules" / ".bin" / "copilot"
)
COPILOT_VERSION = os.environ.get("AGENTSPOOL_COPILOT_VERSION") or "1.0.102"

# The footer of the prompt, once the TUI takes input.
READY_MARKER = "/ commands"
PERMISSION_MARKER = "Do you want to run this command?"
# The question form's footer (ask_user): its options and how to answer.
QUESTION_MARKER = "Information requested"
BUSY_MARKER = "esc esc"

# Every hook event Copilot 1.0.102 runs (camelCase: the names its payloads follow).
HOOK_EVENTS = (
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "permissionRequest",
    "notification",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "errorOccurred",
)

# Shared by every CLI's harness (``homes``); named here as each CLI's module names them.
submit = tmux.submit
kill_pane = homes.kill_pane


def available() -> bool:
    return COPILOT_BIN.exists()


@dataclass
class CopilotHome(homes.CliHome):
    @property
    def copilot_dir(self) -> Path:
        return self.home / ".copilot"

    def session_dirs(self) -> list[Path]:
        base = self.copilot_dir / "session-state"
        return sorted(base.iterdir(), key=lambda p: p.stat().st_mtime) if base.is_dir() else []

    def transcript(self, session_id: str) -> Path:
        return self.copilot_dir / "session-state" / session_id / "events.jsonl"

    def transcripts(self) -> list[Path]:
        return [d / "events.jsonl" for d in self.session_dirs() if (d / "events.jsonl").exists()]

    def open_sessions(self) -> dict[str, Any]:
        path = self.copilot_dir / "open-sessions-state.json"
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}


def make_home(base_url: str, root: str | Path | None = None) -> CopilotHome:
    assert base_url.startswith("http://127.0.0.1:"), base_url
    r = Path(root) if root else Path(tempfile.mkdtemp(prefix="agentspool-copilot-"))
    home = CopilotHome(root=r, home=r / "home", cwd=r / "work", base_url=base_url)
    for d in (home.copilot_dir, home.cwd, r / "tmp", home.home / ".cache"):
        d.mkdir(parents=True, exist_ok=True)
    # Trusted up front: the folder-trust dialog would otherwise open at the first start.
    config = {"trustedFolders": [str(home.cwd)], "banner": "never"}
    (home.copilot_dir / "config.json").write_text(json.dumps(config, indent=2))
    homes.git_init(home)
    return home


def build_env(home: CopilotHome, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing from the caller's but PATH."""
    env = homes.private_env(home.home, tmp=home.root / "tmp")
    env.update(
        {
            "COPILOT_HOME": str(home.copilot_dir),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": home.base_url,
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "mock-key",
            "COPILOT_MODEL": "mock-model",
        }
    )
    env.update(extra_env or {})
    return env


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(COPILOT_BIN), *extra_args]


def write_logging_plugin(home: CopilotHome, log: Path, *, python: str = "") -> Path:
    """A plugin dir (pass ``--plugin-dir``) whose hooks append one line per event to
    ``log`` (named ``hooks.jsonl``), through the one recorder (``hooklog``)."""
    plugin = home.root / "logging-plugin"
    plugin.mkdir(exist_ok=True)
    hooks = {
        event: [
            {
                "type": "command",
                "bash": hooklog.command(event, log.parent, python or None),
                "timeoutSec": 10,
            }
        ]
        for event in HOOK_EVENTS
    }
    (plugin / "plugin.json").write_text(
        json.dumps({"name": "hook-logger", "version": "0.0.1", "hooks": "hooks.json"})
    )
    (plugin / "hooks.json").write_text(json.dumps({"version": 1, "hooks": hooks}, indent=2))
    return plugin


def start_tui(
    home: CopilotHome,
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


def run_print(
    home: CopilotHome,
    prompt: str,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(["-p", prompt, *extra_args]),
        cwd=home.cwd,
        env=build_env(home, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def pid(pane: tmux.Pane) -> int:
    """The loader process tmux runs (the native copilot, which runs the hooks, is its child)."""
    return pane.pane_pid()


def wait_exited(pane: tmux.Pane, timeout: float = 30.0) -> None:
    """Until the loader process the pane runs is gone."""
    tmux.wait_exited(pane, timeout)
