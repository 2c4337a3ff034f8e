"""Shared fixtures: private CLI homes and runtime dir, Claude Code runs whose hooks run
exactly as the CLI runs them (``tests/support/hook_runs.py``), a second local account.

``tests/support`` is on ``sys.path`` (pyproject's ``pythonpath``): helpers live there and
are imported; fixtures hand out the ones most tests want.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hook_runs import HookRun, assert_silent_success, setup_claude_run


@pytest.fixture(autouse=True)
def _private_cli_homes(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Nothing under test reads the machine's own CLI homes (``ls`` discovers sessions
    from ``$CLAUDE_CONFIG_DIR``, ``$CODEX_HOME``, ``$GEMINI_CLI_HOME``, ``$QWEN_HOME``,
    ``$KIMI_CODE_HOME``, ``$COPILOT_HOME``, ``$PI_CODING_AGENT_DIR`` and OpenCode's store
    under ``$XDG_DATA_HOME``), writes into the machine's default runtime dir (``install``
    keeps its lock files there) or its data dir (the history store): each test gets
    private ones."""
    root = tmp_path_factory.mktemp("cli-homes")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(root / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(root / "gemini"))
    monkeypatch.setenv("QWEN_HOME", str(root / "qwen"))
    monkeypatch.setenv("KIMI_CODE_HOME", str(root / "kimi"))
    monkeypatch.setenv("COPILOT_HOME", str(root / "copilot"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(root / "pi"))
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


@pytest.fixture
def claude_run(runtime_dir: str) -> HookRun:
    """A Claude Code run set up in the private runtime dir."""
    return setup_claude_run(runtime_dir)


@pytest.fixture
def make_claude_run() -> Callable[..., HookRun]:
    """``make_claude_run(runtime_dir, run_id)``: set up another run anywhere."""
    return setup_claude_run


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
