"""Shared fixtures: a private runtime dir, and hooks run exactly as an agent CLI runs them.

``tests/`` has no ``__init__.py`` (``--import-mode=importlib``), so shared helpers are
handed out as fixtures rather than imported.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.spool.read import SpoolReader, SpoolRecord


@pytest.fixture(autouse=True)
def _private_cli_homes(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Nothing under test reads the machine's own CLI homes (``ls`` discovers sessions
    from ``$CLAUDE_CONFIG_DIR``, ``$CODEX_HOME``, ``$GEMINI_CLI_HOME`` and OpenCode's store
    under ``$XDG_DATA_HOME``), writes into the machine's default runtime dir (``install``
    keeps its lock files there) or its data dir (the history store): each test gets
    private ones."""
    root = tmp_path_factory.mktemp("cli-homes")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(root / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(root / "gemini"))
    monkeypatch.setenv("QWEN_HOME", str(root / "qwen"))
    monkeypatch.setenv("KIMI_CODE_HOME", str(root / "kimi"))
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", str(root / "runtime"))
    monkeypatch.setenv("AGENTSPOOL_DATA_DIR", str(root / "data"))
    # OpenCode: its store ($XDG_DATA_HOME/opencode, or $OPENCODE_DB), its plugin folder
    # ($XDG_CONFIG_HOME/opencode), and what setup merges from the spawn's environment.
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg-config"))
    for name in ("OPENCODE_DB", "OPENCODE_CONFIG_CONTENT", "OPENCODE_SERVER_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def runtime_dir(tmp_path: Path) -> str:
    """A private (0700) runtime dir of this user, unique to the test."""
    path = tmp_path / "runtime"
    path.mkdir()
    path.chmod(0o700)
    return str(path)


@dataclass
class HookRun:
    """One run armed by ``agentspool.setup("claude-code", …)``; hooks spawned as the CLI does."""

    runtime_dir: str
    run_id: str
    run_dir: str
    settings_path: str
    commands: dict[str, str]
    """Event name → the exact command string from the rendered settings file."""

    def argv(self, event: str = "PostToolUse") -> list[str]:
        return shlex.split(self.commands[event])

    def run(
        self,
        stdin: bytes = b"{}",
        event: str = "PostToolUse",
        *,
        env: Mapping[str, str] | None = None,
        preexec_fn: Callable[[], Any] | None = None,
        argv: list[str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Spawn the hook with ``stdin``; cwd is the filesystem root (never the repo)."""
        return subprocess.run(
            argv if argv is not None else self.argv(event),
            input=stdin,
            capture_output=True,
            env=dict(env) if env is not None else {"PATH": "/usr/bin:/bin"},
            cwd="/",
            preexec_fn=preexec_fn,
            check=False,
            timeout=60,
        )

    def records(self) -> list[SpoolRecord]:
        return SpoolReader(self.run_dir).read()

    def spool_path(self) -> str:
        return os.path.join(self.run_dir, "events.spool")

    def log_text(self) -> str:
        path = os.path.join(self.run_dir, "hooks.log")
        return Path(path).read_text() if os.path.exists(path) else ""


def hook_commands(settings_path: str) -> dict[str, str]:
    """Event → command from a rendered Claude Code settings file."""
    settings = json.loads(Path(settings_path).read_text())
    commands: dict[str, str] = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                commands[event] = handler["command"]
    return commands


def setup_claude_run(runtime_dir: str, run_id: str = "run-1") -> HookRun:
    spawn = agentspool.setup("claude-code", run_id, runtime_dir)
    return HookRun(
        runtime_dir=runtime_dir,
        run_id=run_id,
        run_dir=spawn.run_dir,
        settings_path=spawn.settings_path,
        commands=hook_commands(spawn.settings_path),
    )


@pytest.fixture
def claude_run(runtime_dir: str) -> HookRun:
    """A Claude Code run set up in the private runtime dir."""
    return setup_claude_run(runtime_dir)


@pytest.fixture
def make_claude_run() -> Callable[..., HookRun]:
    """``make_claude_run(runtime_dir, run_id)``: set up another run anywhere."""
    return setup_claude_run


def assert_silent_success(proc: subprocess.CompletedProcess[bytes]) -> None:
    """What every hook run must look like to the agent: exit 0, nothing on stdout/stderr."""
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


@pytest.fixture
def silent() -> Callable[[subprocess.CompletedProcess[bytes]], None]:
    return assert_silent_success


ADVERSARY = "agentspool-adversary"


@dataclass
class Adversary:
    """A second local account, for what another user of the machine can do (issue 22)."""

    name: str
    uid: int
    gid: int

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``argv`` run as this account (``runuser``), from ``/``."""
        return subprocess.run(
            ["runuser", "-u", self.name, "--", *argv],
            capture_output=True,
            text=True,
            cwd="/",
            check=check,
            timeout=60,
        )

    def sh(self, script: str) -> subprocess.CompletedProcess[str]:
        return self.run("sh", "-c", script)


@pytest.fixture(scope="session")
def adversary() -> Adversary:
    """The account ``agentspool-adversary``, created if missing (idempotent: a fresh CI
    machine runs as root); skipped with the reason where this process cannot."""
    if os.getuid() != 0:
        pytest.skip("a second local account needs root (useradd, runuser)")
    for tool in ("useradd", "runuser"):
        if shutil.which(tool) is None:
            pytest.skip(f"a second local account needs {tool}, not installed")
    try:
        entry = pwd.getpwnam(ADVERSARY)
    except KeyError:
        proc = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ADVERSARY],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode not in (0, 9):  # 9: created meanwhile by another process
            pytest.skip(f"useradd {ADVERSARY} failed: {proc.stderr.strip()}")
        entry = pwd.getpwnam(ADVERSARY)
    return Adversary(ADVERSARY, entry.pw_uid, entry.pw_gid)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A dir like ``/tmp`` (sticky, anyone may create in it) that both accounts reach:
    pytest's own tmp dirs are private to this user."""
    path = tempfile.mkdtemp(prefix="agentspool-shared-", dir="/tmp")
    os.chmod(path, 0o1777)
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)
