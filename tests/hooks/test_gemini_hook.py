"""The Gemini CLI hook, run as the CLI runs it: a child of the agent process (the node
process the CLI restarted itself as), given the environment the CLI chooses to give it.

Gemini CLI cannot be armed per run, so its installed hook records a wrapper's run too:
the run named by ``AGENTSPOOL_RUN_ID`` in the hook's environment, else in the agent's own
(the CLI withholds variables from hooks in CI or when asked to redact), if that run is a
Gemini CLI run; otherwise the agent process's own run, as for a session started by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentspool.adapters.common.commands import hook_argv
from agentspool.core.runs import write_provider
from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.read import SpoolReader

AGENT = (
    "import json, os, subprocess, sys\n"
    "argv, hook_env, payloads = json.loads(sys.argv[1])\n"
    "for event, payload in payloads:\n"
    "    p = subprocess.run(argv[:-1] + [event], input=payload.encode(), env=hook_env,\n"
    "                       capture_output=True, cwd='/')\n"
    "    assert (p.returncode, p.stdout, p.stderr) == (0, b'', b''), p\n"
    "print(os.getpid())\n"
)


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp)}


def _agent(agent_env: dict[str, str], hook_env: dict[str, str], events: list[str]) -> int:
    """Start a stand-in agent with ``agent_env``; it runs the installed hook once per
    event, each with ``hook_env``; return its pid."""
    payloads = [
        (e, json.dumps({"session_id": "s1", "hook_event_name": e, "cwd": "/w"})) for e in events
    ]
    argv = hook_argv("gemini_cli", "SessionStart", installed=True)
    proc = subprocess.run(
        [sys.executable, "-c", AGENT, json.dumps([argv, hook_env, payloads])],
        env=agent_env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def _wrapped(runtime: str, provider: str = "gemini-cli") -> tuple[str, dict[str, str]]:
    run_dir = ensure_run_dir(runtime, "wrapped")
    write_provider(run_dir, provider)
    return run_dir, {"AGENTSPOOL_RUNTIME_DIR": runtime, "AGENTSPOOL_RUN_ID": "wrapped"}


def _events(run_dir: str) -> list[tuple[str, int]]:
    return [(r.event, r.agent_pid) for r in SpoolReader(run_dir).read()]


def test_a_session_started_by_hand_is_its_agent_process_run(base_env) -> None:
    pid = _agent(base_env, base_env, ["SessionStart", "BeforeAgent"])
    runtime = f"{base_env['TMPDIR']}/agentspool-{os.getuid()}"
    [run_id] = os.listdir(runtime)
    assert run_id.startswith(f"gemini-cli-{pid}-")
    assert _events(os.path.join(runtime, run_id)) == [("SessionStart", pid), ("BeforeAgent", pid)]


def test_a_wrapped_run_is_recorded_by_the_installed_hook(base_env, runtime_dir) -> None:
    run_dir, wrap = _wrapped(runtime_dir)
    env = {**base_env, **wrap}
    pid = _agent(env, env, ["SessionStart", "BeforeAgent"])
    assert _events(run_dir) == [("SessionStart", pid), ("BeforeAgent", pid)]
    assert sorted(os.listdir(runtime_dir)) == ["wrapped"]
    assert not os.path.exists(f"{base_env['TMPDIR']}/agentspool-{os.getuid()}")


def test_variables_withheld_from_the_hook_are_read_from_the_agent(base_env, runtime_dir) -> None:
    """Gemini CLI 0.61.0 redacts the environment it gives hooks in CI (``GITHUB_SHA``
    set) to an allow-list: our variables reach the agent, not its hooks."""
    run_dir, wrap = _wrapped(runtime_dir)
    pid = _agent({**base_env, **wrap, "BIG": "x" * 70000}, base_env, ["SessionStart"])
    assert _events(run_dir) == [("SessionStart", pid)]
    assert sorted(os.listdir(runtime_dir)) == ["wrapped"]


def test_another_providers_run_in_the_environment_is_not_ours(base_env, runtime_dir) -> None:
    """A gemini started inside another agent's wrapped run inherits that run's variables:
    its hooks make a run of its own, and the other run's spool stays untouched."""
    run_dir, wrap = _wrapped(runtime_dir, provider="claude-code")
    env = {**base_env, **wrap}
    pid = _agent(env, env, ["SessionStart"])
    assert _events(run_dir) == []
    [own] = [name for name in os.listdir(runtime_dir) if name != "wrapped"]
    assert own.startswith(f"gemini-cli-{pid}-")
    assert _events(os.path.join(runtime_dir, own)) == [("SessionStart", pid)]
