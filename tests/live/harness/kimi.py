"""Run the real ``kimi`` (Kimi Code 2.1.0) against the scripted chat-completions server.

Every run gets a private temp root holding ``home/`` (HOME; ``home/.kimi-code`` is
KIMI_CODE_HOME: config.toml, session_index.jsonl, sessions/), ``work/`` (the session cwd,
a git repository) and ``hooks/`` (logging-hook output). Node 22 from
``tests/live/node22`` comes first on PATH (2.1.0 needs Node >= 22.19). The only address
configured is 127.0.0.1 (``KIMI_MODEL_BASE_URL``).

API::

    home = make_home(root, server.base_url, config="...toml...")  # -> KimiHome
    pane = start_tui(home, extra_env={...})                        # tmux.Pane, trusted, ready
    submit(pane, "prompt"); answer(pane, ["Enter"], APPROVAL_MARKER)
    home.wire_files(); home.state_files()
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import tmux
from .gemini import _HOOK_SCRIPT, answer, read_hook_log, read_jsonl, wait_exited
from .homes import git_work_dir, kill_panes, make_dirs, private_env, submit_to
from .qwen import QUESTION as _QWEN_QUESTION

__all__ = ["QUESTION", "answer", "read_hook_log", "read_jsonl", "wait_exited"]

LIVE_DIR = Path(__file__).resolve().parent.parent
KIMI_BIN = Path(
    os.environ.get("AGENTSPOOL_KIMI_BIN") or LIVE_DIR / "node_modules" / ".bin" / "kimi"
)
KIMI_VERSION = os.environ.get("AGENTSPOOL_KIMI_VERSION") or "2.1.0"
NODE22_BIN = LIVE_DIR / "node22" / "node_modules" / ".bin"
FAKE_API_KEY = "scripted-kimi-key"
MODEL = "mock-model"
SHELL_TOOL = "Bash"
QUESTION_TOOL = "AskUserQuestion"

HOOK_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "TurnStarted",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionResult",
    "Stop",
    "StopFailure",
    "Interrupt",
    "Notification",
)

# Screen text (2.1.0, 160 columns).
TRUST_MARKER = "Trust this folder"
APPROVAL_MARKER = "Approve once"
QUESTION_MARKER = "Which color"
# The same form as Qwen Code's, in the key AskUserQuestion takes (it refuses unknown keys).
QUESTION = {
    "questions": [
        {**{k: v for k, v in q.items() if k != "multiSelect"}, "multi_select": False}
        for q in _QWEN_QUESTION["questions"]
    ]
}


@dataclass
class KimiHome:
    root: Path
    home: Path
    cwd: Path
    hook_log_dir: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def kimi_dir(self) -> Path:
        return self.home / ".kimi-code"

    @property
    def config_path(self) -> Path:
        return self.kimi_dir / "config.toml"

    def wire_files(self) -> list[Path]:
        """Every main agent's wire, oldest first."""
        found = self.kimi_dir.glob("sessions/*/*/agents/main/wire.jsonl")
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns if p.exists() else 0, str(p)))

    def cleanup(self) -> None:
        kill_panes(self.panes)


def logging_hooks_toml(log_dir: Path, events: Iterable[str] = HOOK_EVENTS) -> str:
    """``[[hooks]]`` blocks: every event appends its stdin to log_dir/hooks.jsonl."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    script = log_dir / "loghook.py"
    script.write_text(_HOOK_SCRIPT)
    blocks = []
    for event in events:
        argv = (sys.executable, "-I", "-S", str(script), event, str(log_dir / "hooks.jsonl"))
        blocks.append(
            f"[[hooks]]\nevent = {json.dumps(event)}\n"
            f"command = {json.dumps(shlex.join(argv))}\ntimeout = 10\n"
        )
    return "\n".join(blocks)


def make_home(root: Path, base_url: str, *, config: str = "") -> KimiHome:
    root = Path(root)
    home = KimiHome(root, root / "home", root / "work", root / "hooks", base_url)
    make_dirs(home.home, home.kimi_dir, home.hook_log_dir)
    git_work_dir(home.cwd)
    if config:
        home.config_path.write_text(config)
    return home


def build_env(home: KimiHome, extra_env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """A clean environment, Node 22 first on PATH."""
    cli = {
        "KIMI_CODE_HOME": str(home.kimi_dir),
        "KIMI_MODEL_NAME": MODEL,
        "KIMI_MODEL_API_KEY": FAKE_API_KEY,
        "KIMI_MODEL_PROVIDER_TYPE": "openai",
        "KIMI_MODEL_BASE_URL": home.base_url,
        "KIMI_CODE_NO_AUTO_UPDATE": "1",
    }
    return private_env(home.home, cli, extra_env, path_first=str(NODE22_BIN))


def start_tui(
    home: KimiHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    width: int = 160,
    height: int = 50,
) -> tmux.Pane:
    """The TUI, past its first-launch "Trust this folder?" (Enter trusts)."""
    pane = tmux.start(
        [str(KIMI_BIN), *extra_args],
        cwd=str(home.cwd),
        env=build_env(home, extra_env),
        width=width,
        height=height,
    )
    home.panes.append(pane)
    screen = pane.wait_until(lambda s: TRUST_MARKER in s or is_ready(s), timeout=90)
    if TRUST_MARKER in screen:
        answer(pane, ["Enter"], TRUST_MARKER)
    pane.wait_until(is_ready, timeout=90)
    return pane


def is_ready(screen: str) -> bool:
    return composer_text(screen) == ""


def composer_text(screen: str) -> str | None:
    """What is typed in the input box (``""`` when empty; ``None`` when none is drawn)."""
    for line in reversed(screen.splitlines()):
        stripped = line.strip().strip("│┃").strip()
        if stripped.startswith(("> ", "❯")) or stripped == ">":
            return stripped.lstrip(">❯").strip()
    return None


def submit(pane: tmux.Pane, text: str, *, timeout: float = 15.0) -> None:
    submit_to(pane, text, composer_text, timeout=timeout)


def request_kinds(body: Any) -> str:
    """The tools a request offers, for telling Kimi's own side requests apart."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return ",".join(sorted(str((t.get("function") or {}).get("name")) for t in tools or []))
