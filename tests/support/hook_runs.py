"""Hooks run exactly as an agent CLI runs them: the command ``setup`` or ``install``
rendered, spawned with the payload on stdin, from ``/``, with the agent's environment.

``run_hook`` spawns one; ``fire`` spawns one and checks it looked to the agent as every
hook must (exit 0, nothing on stdout or stderr); ``HookRun`` is one Claude Code run armed
by ``agentspool.setup``, with its rendered commands (the ``claude_run`` fixtures).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agentspool
from agentspool.spool.read import SpoolReader, SpoolRecord

AGENT_PATH = {"PATH": "/usr/bin:/bin"}
"""The environment a hook gets when a test names none: a CLI's, stripped to PATH."""


def run_hook(
    argv: Sequence[str],
    stdin: bytes | Mapping[str, Any] = b"{}",
    *,
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], Any] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Spawn the hook ``argv`` with ``stdin`` (a payload dict is sent as its JSON); cwd
    is the filesystem root (never the repo)."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    return subprocess.run(
        list(argv),
        input=data,
        capture_output=True,
        env=dict(env) if env is not None else dict(AGENT_PATH),
        cwd="/",
        preexec_fn=preexec_fn,
        check=False,
        timeout=60,
    )


def assert_silent_success(proc: subprocess.CompletedProcess[bytes]) -> None:
    """What every hook run must look like to the agent: exit 0, nothing on stdout/stderr."""
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def fire(
    argv: Sequence[str], payload: Mapping[str, Any], *, env: Mapping[str, str] | None = None
) -> None:
    """Run the hook with ``payload`` and check it was silent and exited 0."""
    assert_silent_success(run_hook(argv, payload, env=env))


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
        """Spawn the hook with ``stdin`` (``run_hook``)."""
        argv = argv if argv is not None else self.argv(event)
        return run_hook(argv, stdin, env=env, preexec_fn=preexec_fn)

    def fire(self, event: str, payload: Mapping[str, Any]) -> None:
        """The ``event`` hook with ``payload``, checked silent (``fire``)."""
        fire(self.argv(event), payload)

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
