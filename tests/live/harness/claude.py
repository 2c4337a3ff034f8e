"""Run the real ``claude`` binary (2.1.328) hermetically against a scripted server.

Everything a run touches lives under one private root directory::

    <root>/home/            HOME (+ XDG_* dirs, TMPDIR) — never the real home
    <root>/home/.claude.json   pre-seeded so the TUI skips onboarding/trust/API-key screens
    <root>/work/            the session's cwd (trusted in .claude.json)
    <root>/hooks/           logging-hook output (when the logging hooks are used)

Typical use::

    from harness import anthropic_server as api, claude

    with api.AnthropicServer([api.text("Hello!")]) as srv:
        h = claude.make_home(tmp_path)
        settings = claude.write_logging_hooks(h)          # optional, for debugging
        r = claude.run_print("hi", home=h, server_url=srv.url,
                             extra_args=["--settings", settings])
        assert "Hello!" in r.stdout

        tui = claude.start_tui(h, srv.url, extra_args=[...])
        try:
            tui.wait_ready()
            tui.submit("do it")
            tui.pane.wait_for("Do you want to proceed?")
        finally:
            tui.close()

Every runner takes ``extra_args`` (appended to the command line, e.g. the
``["--settings", path]`` that ``agentspool.setup()`` returns) and ``extra_env``
(merged last into the environment).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import hooklog, tmux
from harness.hooklog import read_hook_log

LIVE_DIR = Path(__file__).resolve().parent.parent
# `make compat` points these at another release, installed into its own prefix.
CLAUDE_BIN = Path(
    os.environ.get("AGENTSPOOL_CLAUDE_BIN") or LIVE_DIR / "node_modules" / ".bin" / "claude"
)
CLAUDE_VERSION = os.environ.get("AGENTSPOOL_CLAUDE_VERSION") or "2.1.328"
FAKE_API_KEY = "sk-ant-api03-agentspool-fake-key-0000000000000000000000000000-AAAAAAAA"

#: Every hook event the logging hooks register (tool events get matcher "*").
HOOK_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
]
TOOL_EVENTS = {
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
}

#: Text shown in the TUI's footer once the input box is ready (manual mode).
READY_MARKERS = ("? for shortcuts", "shift+tab to cycle")


def available() -> bool:
    return CLAUDE_BIN.exists() and os.access(CLAUDE_BIN, os.X_OK)


# ------------------------------------------------------------------ home ---


@dataclass
class ClaudeHome:
    root: Path
    home: Path
    cwd: Path
    api_key: str = FAKE_API_KEY

    @property
    def claude_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def sessions_dir(self) -> Path:
        return self.claude_dir / "sessions"

    @property
    def tmpdir(self) -> Path:
        return self.home / "tmp"

    @property
    def hook_dir(self) -> Path:
        return self.root / "hooks"

    @property
    def hook_log(self) -> Path:
        return self.hook_dir / "hooks.jsonl"

    @property
    def project_dir(self) -> Path:
        """``~/.claude/projects/<slug>`` for ``cwd``."""
        return self.claude_dir / "projects" / slug(str(self.cwd))

    def transcripts(self) -> list[Path]:
        """Main transcripts (``<session-id>.jsonl``) in the project dir, oldest first."""
        if not self.project_dir.is_dir():
            return []
        files = [p for p in self.project_dir.glob("*.jsonl")]
        return sorted(files, key=lambda p: p.stat().st_mtime_ns)

    def transcript(self, session_id: str) -> Path:
        return self.project_dir / f"{session_id}.jsonl"

    def subagent_files(self, session_id: str) -> list[Path]:
        d = self.project_dir / session_id / "subagents"
        return sorted(d.glob("*")) if d.is_dir() else []

    def session_files(self) -> dict[int, dict[str, Any]]:
        """``~/.claude/sessions/<pid>.json`` contents, by pid (unreadable files skipped)."""
        out: dict[int, dict[str, Any]] = {}
        if not self.sessions_dir.is_dir():
            return out
        for p in self.sessions_dir.glob("*.json"):
            if not p.stem.isdigit():
                continue
            try:
                out[int(p.stem)] = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
        return out

    def session_file(self, pid: int) -> Path:
        return self.sessions_dir / f"{pid}.json"

    def read_session_file(self, pid: int) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self.session_file(pid).read_text())
            return data
        except (OSError, ValueError):
            return None

    def hooks(self) -> list[dict[str, Any]]:
        return read_hook_log(self.hook_log)


def slug(path: str) -> str:
    """Claude Code's project-dir name: every non-alphanumeric char becomes ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def make_home(
    root: str | os.PathLike[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    api_key: str = FAKE_API_KEY,
    claude_json: Mapping[str, Any] | None = None,
    user_settings: Mapping[str, Any] | None = None,
) -> ClaudeHome:
    """Create a private HOME under ``root`` seeded to skip every first-run screen.

    ``cwd`` defaults to ``<root>/work`` (created). ``claude_json`` entries are merged
    into ``~/.claude.json``; ``user_settings`` (if given) is written to
    ``~/.claude/settings.json``.
    """
    root = Path(root).resolve()
    home = root / "home"
    work = Path(cwd).resolve() if cwd is not None else root / "work"
    for d in (
        home,
        home / ".claude",
        home / ".config",
        home / ".cache",
        home / ".local" / "share",
        home / ".local" / "state",
        home / "tmp",
        work,
        root / "hooks",
    ):
        d.mkdir(parents=True, exist_ok=True)
    h = ClaudeHome(root=root, home=home, cwd=work, api_key=api_key)
    project = {
        "allowedTools": [],
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
        "projectOnboardingSeenCount": 1,
        "hasClaudeMdExternalIncludesApproved": False,
        "hasClaudeMdExternalIncludesWarningShown": False,
    }
    cfg: dict[str, Any] = {
        "numStartups": 5,
        "installMethod": "npm-local",
        "autoUpdates": False,
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": CLAUDE_VERSION,
        "lastReleaseNotesSeen": CLAUDE_VERSION,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "hasSeenTasksHint": True,
        "hasAvailableSubscription": False,
        "bypassPermissionsModeAccepted": True,
        "hasAcknowledgedCostThreshold": True,
        "shiftEnterKeyBindingInstalled": True,
        "officialMarketplaceAutoInstallAttempted": True,
        "tipsHistory": {},
        "projects": {str(work): project},
    }
    # merge projects rather than overwrite them
    extra = dict(claude_json or {})
    if "projects" in extra:
        for k, v in extra.pop("projects").items():
            cfg["projects"].setdefault(k, {}).update(v)
    cfg.update(extra)
    (home / ".claude.json").write_text(json.dumps(cfg, indent=2))
    if user_settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(user_settings, indent=2))
    return h


def build_env(
    home: ClaudeHome,
    server_url: str,
    extra_env: Mapping[str, str | None] | None = None,
) -> dict[str, str]:
    """A clean environment (nothing inherited but PATH/LANG) for one claude run."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
        "HOME": str(home.home),
        "USER": os.environ.get("USER", "root"),
        "SHELL": "/bin/bash",
        "XDG_CONFIG_HOME": str(home.home / ".config"),
        "XDG_CACHE_HOME": str(home.home / ".cache"),
        "XDG_DATA_HOME": str(home.home / ".local" / "share"),
        "XDG_STATE_HOME": str(home.home / ".local" / "state"),
        "TMPDIR": str(home.tmpdir),
        "ANTHROPIC_BASE_URL": server_url,
        "ANTHROPIC_API_KEY": home.api_key,
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
        "DISABLE_INSTALLATION_CHECKS": "1",
        # a random "How is Claude doing?" survey would cover the screen mid-test
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    for k, v in (extra_env or {}).items():
        if v is None:
            env.pop(k, None)  # None removes a harness default
        else:
            env[k] = v
    return env


def command(extra_args: Sequence[str] = ()) -> list[str]:
    return [str(CLAUDE_BIN), *extra_args]


# ---------------------------------------------------------- print mode ---


def run_print(
    prompt: str,
    *,
    home: ClaudeHome,
    server_url: str,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    timeout: float = 90.0,
    permission_mode: str | None = "default",
) -> subprocess.CompletedProcess[str]:
    """``claude -p <prompt> [--permission-mode …] <extra_args>``; returns the result."""
    args = ["-p", prompt]
    if permission_mode:
        args += ["--permission-mode", permission_mode]
    return subprocess.run(
        command([*args, *extra_args]),
        cwd=home.cwd,
        env=build_env(home, server_url, extra_env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# ------------------------------------------------------------------ TUI ---


class ClaudeTui:
    """An interactive claude in a private tmux server."""

    def __init__(self, home: ClaudeHome, pane: tmux.Pane) -> None:
        self.home = home
        self.pane = pane
        self._pid: int | None = None

    # screen helpers
    def screen(self) -> str:
        return self.pane.screen()

    def wait_for(self, needle: str, timeout: float = 30.0) -> str:
        return self.pane.wait_for(needle, timeout)

    def wait_ready(self, timeout: float = 45.0) -> str:
        """Wait until the input box is shown and accepting input."""
        return self.pane.wait_until(lambda s: any(m in s for m in READY_MARKERS), timeout)

    def submit(self, text: str) -> None:
        """Type ``text`` and press Enter (as two tmux calls, so Enter is not pasted)."""
        self.pane.send_text(text)
        # Ink debounces paste-like input; give the text its own frame before Enter.
        self.pane.wait_until(lambda s: text[-20:] in s, timeout=10)
        self.pane.send_keys("Enter")

    def press(self, *keys: str) -> None:
        self.pane.send_keys(*keys)

    def press_until(
        self,
        keys: Sequence[str],
        done: Callable[[str], bool],
        *,
        still: Callable[[str], bool],
        retry_after: float = 3.0,
        timeout: float = 20.0,
    ) -> str:
        """Press ``keys`` until ``done(screen)``; re-press only while ``still(screen)``.

        A key that reaches a dialog right after another key can be dropped (observed:
        ``Enter`` ~0.1 s after ``Down`` was ignored in 2 of 4 tries). ``still`` must
        say "the same dialog is still waiting" (e.g. its question text is on screen),
        so a retry can never answer the *next* dialog.
        """
        deadline = time.monotonic() + timeout
        while True:
            self.pane.send_keys(*keys)
            again = min(deadline, time.monotonic() + retry_after)
            while time.monotonic() < again:
                screen = self.pane.screen()
                if done(screen):
                    return screen
                time.sleep(0.05)
            screen = self.pane.screen()
            if done(screen):
                return screen
            if time.monotonic() >= deadline or not still(screen):
                raise tmux.TmuxTimeoutError(f"keys {keys} had no effect:\n{screen}")

    # process helpers
    def pid(self, timeout: float = 30.0) -> int:
        """The claude process id (== the name of ``~/.claude/sessions/<pid>.json``)."""
        if self._pid is not None:
            return self._pid
        deadline = time.monotonic() + timeout
        pane_pid = self.pane.pane_pid()
        while time.monotonic() < deadline:
            files = self.home.session_files()
            for pid in files:
                if pid == pane_pid or _is_descendant(pid, pane_pid):
                    self._pid = pid
                    return pid
            time.sleep(0.1)
        raise TimeoutError("no ~/.claude/sessions/<pid>.json for this pane")

    def session(self) -> dict[str, Any] | None:
        return self.home.read_session_file(self.pid())

    def wait_session(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> dict[str, Any]:
        """Wait until the session file satisfies ``predicate``; return it."""
        pid = self.pid(timeout)
        deadline = time.monotonic() + timeout
        last: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            last = self.home.read_session_file(pid)
            if last is not None and predicate(last):
                return last
            time.sleep(0.05)
        raise TimeoutError(f"session file condition not met; last={last}")

    def wait_status(self, status: str, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait_session(lambda d: d.get("status") == status, timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Kill the tmux server (claude gets SIGHUP: SessionEnd ``reason: other``) and
        make sure the claude process is gone (SIGKILL after ``timeout``)."""
        pids: set[int] = set()
        if self._pid is not None:
            pids.add(self._pid)
        try:
            pane_pid = self.pane.pane_pid()
            pids.add(pane_pid)
            pids.update(p for p in self.home.session_files() if _is_descendant(p, pane_pid))
        except (ValueError, OSError, subprocess.SubprocessError):
            pass
        self.pane.kill()
        deadline = time.monotonic() + timeout
        while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        for p in pids:
            if pid_alive(p):
                kill_pid(p)


def start_tui(
    home: ClaudeHome,
    server_url: str,
    *,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str | None] | None = None,
    permission_mode: str | None = "default",
    width: int = 160,
    height: int = 50,
    server: tmux.Pane | None = None,
) -> ClaudeTui:
    """Start ``claude [--permission-mode …] <extra_args>`` in a detached tmux server
    (``server``: in a new window of that pane's server)."""
    args: list[str] = []
    if permission_mode:
        args += ["--permission-mode", permission_mode]
    pane = tmux.start(
        command([*args, *extra_args]),
        cwd=str(home.cwd),
        env=build_env(home, server_url, extra_env),
        width=width,
        height=height,
        server=server,
    )
    return ClaudeTui(home, pane)


def _is_descendant(pid: int, ancestor: int) -> bool:
    for _ in range(16):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if ppid == ancestor:
            return True
        if ppid <= 1:
            return False
        pid = ppid
    return False


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie counts as dead
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_pid(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


# -------------------------------------------------------- logging hooks ---


def logging_hooks_settings(
    log_dir: str | os.PathLike[str],
    *,
    events: Sequence[str] = HOOK_EVENTS,
    python: str | None = None,
) -> dict[str, Any]:
    """Settings dict whose command hooks log every event's stdin to ``log_dir``.

    Each hook appends one JSON line to ``<log_dir>/hooks.jsonl`` (``hooklog``).
    """
    hooks: dict[str, Any] = {}
    for ev in events:
        entry: dict[str, Any] = {
            "hooks": [{"type": "command", "command": hooklog.command(ev, Path(log_dir), python)}]
        }
        if ev in TOOL_EVENTS:
            entry["matcher"] = "*"
        hooks[ev] = [entry]
    return {"hooks": hooks}


def write_logging_hooks(home: ClaudeHome, path: str | os.PathLike[str] | None = None) -> str:
    """Write the logging-hook settings JSON (into ``<root>/hooks/``); return its path.

    Pass ``["--settings", path]`` as ``extra_args``.
    """
    settings = logging_hooks_settings(home.hook_dir)
    p = Path(path) if path else home.hook_dir / "logging-hooks.settings.json"
    p.write_text(json.dumps(settings, indent=2))
    return str(p)


def _q(s: str) -> str:
    import shlex

    return shlex.quote(s)


def wait_hook(
    home: ClaudeHome,
    event: str,
    *,
    count: int = 1,
    where: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Wait until ``count`` logged hooks of ``event`` (matching ``where``) exist."""
    deadline = time.monotonic() + timeout
    hits: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        hits = [r for r in home.hooks() if r.get("event") == event and (where is None or where(r))]
        if len(hits) >= count:
            return hits
        time.sleep(0.05)
    seen = [r.get("event") for r in home.hooks()]
    raise TimeoutError(f"{count} x {event} not logged after {timeout}s; seen: {seen}")


def wait_file(
    path: str | os.PathLike[str],
    predicate: Callable[[str], bool] | None = None,
    timeout: float = 30.0,
) -> str:
    """Wait until ``path`` exists (and its text satisfies ``predicate``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            text = Path(path).read_text()
        except OSError:
            text = None
        if text is not None and (predicate is None or predicate(text)):
            return text
        time.sleep(0.05)
    raise TimeoutError(f"{path} not ready after {timeout}s")


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
