"""Run the real ``gemini`` (Gemini CLI 0.61.0) against the scripted Gemini server, hermetically.

Every run gets a private temp root holding ``home/`` (HOME), ``gemini-home/``
(GEMINI_CLI_HOME: its ``.gemini/`` holds settings.json, the chat files, projects.json),
``work/`` (the session cwd) and ``hooks/`` (logging-hook output). The machine's real
home is never read or written: HOME, GEMINI_CLI_HOME, XDG_* and TMPDIR all point inside
the root, and the only address configured anywhere is 127.0.0.1
(``GOOGLE_GEMINI_BASE_URL``).

The user settings select API-key auth (with ``GEMINI_API_KEY`` alone 0.61.0 picks another
auth type and a headless run fails), turn folder trust off (an untrusted folder
downgrades approvals), and keep the CLI from updating itself.

API::

    home = make_home(root, server.base_url, settings={...})    # -> GeminiHome
    env = build_env(home, extra_env)
    proc = run_print(home, "prompt", extra_args=[...])          # CompletedProcess
    pane = start_tui(home, extra_args=[...], extra_env={...})   # tmux.Pane, at its prompt
    submit(pane, "prompt"); answer(pane, ["Enter"], APPROVAL_MARKER); wait_exited(pane)
    home.chat_files()                                           # session-*.jsonl, oldest first
    logging_hooks(log_dir)                                      # a settings "hooks" object
    home.cleanup()
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import hooklog, tmux

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
GEMINI_BIN = Path(
    os.environ.get("AGENTSPOOL_GEMINI_BIN") or LIVE_DIR / "node_modules" / ".bin" / "gemini"
)
GEMINI_VERSION = os.environ.get("AGENTSPOOL_GEMINI_VERSION") or "0.61.0"
FAKE_API_KEY = "scripted-gemini-key"

HOOK_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "PreCompress",
)
TOOL_EVENTS = frozenset({"BeforeTool", "AfterTool"})

BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
}

# Screen text (0.61.0, 160 columns).
READY_MARKER = "Type your message"
BUSY_MARKER = "esc to cancel"
APPROVAL_MARKER = "Allow execution of"
QUIT_MARKER = "Agent powering down"
FOOTER_MARKER = "workspace (/directory)"


@dataclass
class GeminiHome:
    root: Path
    home: Path
    gemini_home: Path
    cwd: Path
    hook_log_dir: Path
    base_url: str
    panes: list[tmux.Pane] = field(default_factory=list)

    @property
    def gemini_dir(self) -> Path:
        return self.gemini_home / ".gemini"

    @property
    def settings_path(self) -> Path:
        return self.gemini_dir / "settings.json"

    def chat_files(self) -> list[Path]:
        """Every main session file (``tmp/<project>/chats/session-*.jsonl``), oldest first."""
        found = self.gemini_dir.glob("tmp/*/chats/session-*.jsonl")
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns if p.exists() else 0, p.name))

    def subagent_files(self) -> list[Path]:
        """Every subagent's own chat file (``tmp/<project>/chats/<parent session id>/
        <session id>.jsonl``)."""
        return sorted(self.gemini_dir.glob("tmp/*/chats/*/*.jsonl"))

    def write_settings(self, settings: Mapping[str, Any]) -> None:
        self.settings_path.write_text(json.dumps(settings, indent=2) + "\n")

    def read_settings(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.settings_path.read_text())
        return data

    def cleanup(self, *, keep: bool = False) -> None:
        """Kill every tmux server started for this home, then delete the root."""
        for pane in self.panes:
            pane.kill_tree()
        self.panes.clear()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def make_home(
    root: Path, base_url: str, *, settings: Mapping[str, Any] | None = None
) -> GeminiHome:
    root = Path(root)
    home = GeminiHome(
        root=root,
        home=root / "home",
        gemini_home=root / "gemini-home",
        cwd=root / "work",
        hook_log_dir=root / "hooks",
        base_url=base_url,
    )
    for path in (home.home, home.gemini_dir, home.cwd, home.hook_log_dir, home.home / "tmp"):
        path.mkdir(parents=True, exist_ok=True)
    for sub in (".config", ".cache", ".local/share", ".local/state"):
        (home.home / sub).mkdir(parents=True, exist_ok=True)
    home.write_settings({**BASE_SETTINGS, **(settings or {})})
    return home


def build_env(
    home: GeminiHome, extra_env: Mapping[str, str | None] | None = None
) -> dict[str, str]:
    """A clean environment: nothing inherited but PATH (node must be found) and USER."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "USER": os.environ.get("USER", "tester"),
        "HOME": str(home.home),
        "GEMINI_CLI_HOME": str(home.gemini_home),
        "XDG_CONFIG_HOME": str(home.home / ".config"),
        "XDG_CACHE_HOME": str(home.home / ".cache"),
        "XDG_DATA_HOME": str(home.home / ".local" / "share"),
        "XDG_STATE_HOME": str(home.home / ".local" / "state"),
        "TMPDIR": str(home.home / "tmp"),
        "GEMINI_API_KEY": FAKE_API_KEY,
        "GOOGLE_GEMINI_BASE_URL": home.base_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "NO_BROWSER": "1",
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


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(GEMINI_BIN), *extra_args]


def run_print(
    home: GeminiHome,
    prompt: str,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(["-p", prompt, *extra_args]),
        cwd=home.cwd,
        env=build_env(home, extra_env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_tui(
    home: GeminiHome,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    width: int = 160,
    height: int = 50,
    wait_ready: bool = True,
) -> tmux.Pane:
    pane = tmux.start(
        command(extra_args),
        cwd=str(home.cwd),
        env=build_env(home, extra_env),
        width=width,
        height=height,
    )
    home.panes.append(pane)
    if wait_ready:
        wait_tui_ready(pane)
    return pane


def wait_tui_ready(pane: tmux.Pane, timeout: float = 90.0) -> str:
    """The composer is drawn and takes keys: a probe ``x`` shows up in it, then goes."""
    pane.wait_for(READY_MARKER, timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        pane.send_text("x")
        try:
            pane.wait_until(lambda s: composer_text(s) == "x", timeout=2.0)
            break
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise
    while composer_text(pane.screen()) == "x":
        pane.send_keys("BSpace")
        with contextlib.suppress(tmux.TmuxTimeoutError):
            pane.wait_until(lambda s: composer_text(s) == "", timeout=2.0)
        if time.monotonic() > deadline:
            raise tmux.TmuxTimeoutError("the probe key never left the composer")
    return pane.screen()


def composer_text(screen: str) -> str | None:
    """What is typed in the composer: ``""`` while it shows its placeholder, ``None`` while
    it is not drawn (a dialog, or the CLI has exited). The composer is the ``>`` line
    just above the footer (``workspace (/directory)``) — ``*`` in YOLO mode (``--yolo``);
    prompts already sent are echoed further up with the same ``>``."""
    lines = screen.splitlines()
    footer = max((i for i, line in enumerate(lines) if FOOTER_MARKER in line), default=-1)
    for line in reversed(lines[max(footer - 4, 0) : max(footer, 0)]):
        stripped = line.strip()
        if stripped.startswith((">", "*")):
            text = stripped[1:].strip()
            return "" if text.startswith(READY_MARKER) else text
    return None


def is_idle_screen(screen: str) -> bool:
    """The composer waits for a prompt: its placeholder is drawn, nothing runs, no dialog."""
    return (
        composer_text(screen) == ""
        and BUSY_MARKER not in screen
        and APPROVAL_MARKER not in screen
        and "Executing Hook" not in screen
    )


def submit(pane: tmux.Pane, text: str, *, timeout: float = 15.0) -> None:
    """Type ``text``, wait until the composer shows it, then press Enter, again while the
    composer still holds the text (a slash command's completion menu can take an Enter;
    the composer goes away with ``/quit``)."""
    pane.send_text(text)
    pane.wait_until(lambda s: composer_text(s) == text, timeout=timeout)
    time.sleep(0.3)
    deadline = time.monotonic() + timeout
    while True:
        pane.send_keys("Enter")
        try:
            pane.wait_until(lambda s: composer_text(s) != text, timeout=3.0)
            return
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise


def answer(pane: tmux.Pane, keys: Sequence[str], marker: str, timeout: float = 20.0) -> None:
    """Press ``keys`` on the dialog showing ``marker``, again while it stays: a key that
    lands while a dialog is still being drawn can be dropped (as in Claude Code's TUI)."""
    deadline = time.monotonic() + timeout
    while True:
        pane.send_keys(*keys)
        try:
            pane.wait_until(lambda s: marker not in s, timeout=4.0)
            return
        except tmux.TmuxTimeoutError:
            if time.monotonic() > deadline:
                raise


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_exited(pane: tmux.Pane, timeout: float = 60.0) -> None:
    """Wait until the CLI's processes are gone: the pane's own process (the launcher) and
    every process under it. (tmux does not always mark the pane dead at once: 0.61.0 was
    seen leaving "Pane is dead" undrawn after its processes had exited.)"""
    pid = pane.pane_pid()
    deadline = time.monotonic() + timeout
    while _alive(pid) or any(_alive(p) for p in tmux.descendants(pid)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"gemini still running {timeout}s after /quit")
        time.sleep(0.1)


def gemini_pids(pane: tmux.Pane) -> list[int]:
    """The node processes under the pane: the launcher, then the CLI it restarted itself as."""
    out = []
    for pid in tmux.descendants(pane.pane_pid()):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if os.path.basename(exe) == "node":
            out.append(pid)
    return sorted(out)


# --------------------------------------------------------------------------- hooks


def logging_hooks(log_dir: Path, events: Iterable[str] = HOOK_EVENTS) -> dict[str, Any]:
    """A settings ``hooks`` object: every event appends its stdin to log_dir/hooks.jsonl
    (model payloads reduced to their keys)."""
    hooks: dict[str, Any] = {}
    for event in events:
        command = hooklog.command(event, Path(log_dir))
        group: dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": 10000}]
        }
        if event in TOOL_EVENTS:
            group = {"matcher": "*", **group}
        hooks[event] = [group]
    return hooks


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    with contextlib.suppress(FileNotFoundError):
        for line in Path(path).read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def clean_screen(screen: str) -> str:
    return "\n".join(line.rstrip() for line in screen.splitlines() if line.strip())
