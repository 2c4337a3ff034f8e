"""Run the real ``qwen`` (Qwen Code 0.24.4) against the scripted chat-completions server.

Every run gets a private temp root holding ``home/`` (HOME; ``home/.qwen`` is QWEN_HOME:
settings.json, the chat files, the per-process status files), ``work/`` (the session cwd,
a git repository) and ``hooks/`` (logging-hook output). Node 22 from
``tests/live/node22`` comes first on PATH (0.24.4 needs Node >= 22). The only address
configured is 127.0.0.1 (``OPENAI_BASE_URL``).

API::

    home = make_home(root, server.base_url, settings={...})  # -> QwenHome
    pane = start_tui(home, extra_env={...})                   # tmux.Pane, at its prompt
    submit(pane, "prompt"); answer(pane, ["Enter"], APPROVAL_MARKER)
    home.chat_files(); home.status_files()
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import tmux
from .gemini import answer, logging_hooks, read_jsonl, wait_exited
from .homes import git_work_dir, kill_panes, make_dirs, private_env, start_at_prompt, submit_to
from .hooklog import read_hook_log

__all__ = ["answer", "logging_hooks", "read_hook_log", "read_jsonl", "wait_exited"]

LIVE_DIR = Path(__file__).resolve().parent.parent
QWEN_BIN = Path(
    os.environ.get("AGENTSPOOL_QWEN_BIN") or LIVE_DIR / "node_modules" / ".bin" / "qwen"
)
QWEN_VERSION = os.environ.get("AGENTSPOOL_QWEN_VERSION") or "0.24.4"
NODE22_BIN = LIVE_DIR / "node22" / "node_modules" / ".bin"
FAKE_API_KEY = "scripted-qwen-key"
MODEL = "mock-model"
SHELL_TOOL = "run_shell_command"
QUESTION_TOOL = "ask_user_question"

HOOK_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
)

BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
    "model": {"name": MODEL},
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}

# Screen text (0.24.4, 160 columns).
READY_MARKER = "Type your message"
BUSY_MARKER = "esc to cancel"
APPROVAL_MARKER = "Yes, allow once"
QUESTION_MARKER = "Which color"
QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
            "multiSelect": False,
        }
    ]
}
"""``ask_user_question``'s arguments the scenarios script (Kimi Code's tool takes them too)."""
SIDE_MARKER = "memory extraction subagent"
SUGGESTION_MARKER = "[SUGGESTION MODE:"


def is_side_query(body: Any) -> bool:
    """Qwen Code's own side requests (0.24.4), no turn of the conversation: the memory pass
    after each turn (its own system prompt) and the next-prompt suggestion (its last
    user message)."""
    if not isinstance(body, dict):
        return False
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = [json.dumps(m.get("content")) for m in messages if m.get("role") == "system"]
    last_user = [json.dumps(m.get("content")) for m in messages if m.get("role") == "user"][-1:]
    return any(SIDE_MARKER in text for text in system) or any(
        SUGGESTION_MARKER in text for text in last_user
    )


@dataclass
class QwenHome:
    root: Path
    home: Path
    cwd: Path
    hook_log_dir: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def qwen_dir(self) -> Path:
        return self.home / ".qwen"

    @property
    def settings_path(self) -> Path:
        return self.qwen_dir / "settings.json"

    def chat_files(self) -> list[Path]:
        """Every chat file (``projects/<slug>/chats/<session id>.jsonl``), oldest first."""
        found = self.qwen_dir.glob("projects/*/chats/*.jsonl")
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns if p.exists() else 0, p.name))

    def status_files(self) -> list[Path]:
        return sorted(self.qwen_dir.glob("sessions/*.json"))

    def write_settings(self, settings: Mapping[str, Any]) -> None:
        self.settings_path.write_text(json.dumps(settings, indent=2) + "\n")

    def cleanup(self) -> None:
        kill_panes(self.panes)


def make_home(root: Path, base_url: str, *, settings: Mapping[str, Any] | None = None) -> QwenHome:
    root = Path(root)
    home = QwenHome(root, root / "home", root / "work", root / "hooks", base_url)
    make_dirs(home.home, home.qwen_dir, home.hook_log_dir)
    git_work_dir(home.cwd)
    home.write_settings({**BASE_SETTINGS, **(settings or {})})
    return home


def build_env(home: QwenHome, extra_env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """A clean environment, Node 22 first on PATH."""
    cli = {
        "QWEN_HOME": str(home.qwen_dir),
        "OPENAI_API_KEY": FAKE_API_KEY,
        "OPENAI_BASE_URL": home.base_url,
        "OPENAI_MODEL": MODEL,
        "NO_BROWSER": "1",
    }
    return private_env(home.home, cli, extra_env, path_first=str(NODE22_BIN))


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(QWEN_BIN), "--approval-mode", "default", *extra_args]


def start_tui(
    home: QwenHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    width: int = 160,
    height: int = 50,
) -> tmux.Pane:
    return start_at_prompt(
        command(extra_args),
        cwd=home.cwd,
        env=build_env(home, extra_env),
        ready=READY_MARKER,
        panes=home.panes,
        width=width,
        height=height,
        timeout=90.0,
    )


def composer_text(screen: str) -> str | None:
    """What is typed in the input box (``""`` while it shows its placeholder; ``None``
    while no input box is drawn: a dialog is open or the CLI has exited). The box is the
    ``>`` line just under a rule (a slash command's completions are ``>`` lines too)."""
    lines = screen.splitlines()
    for above, line in reversed(list(itertools.pairwise(lines))):
        if above.startswith("─") and line.startswith(">"):
            text = line[1:].replace("\u200b", "").strip()
            return "" if text.startswith(READY_MARKER) else text
    return None


def submit(pane: tmux.Pane, text: str, *, timeout: float = 15.0) -> None:
    submit_to(pane, text, composer_text, timeout=timeout)
