"""Installed hooks (``agentspool install``): no run in the command — the hook derives the
run from the agent process itself and creates it in the default runtime dir; a run a
wrapper armed is left to the wrapper's hooks. Run exactly as the CLI runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hook_runs import run_hook

import agentspool
from agentspool.adapters.common.commands import hook_argv
from agentspool.spool.read import SpoolReader


def _start_ticks(pid: int) -> int:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return int(raw[raw.rfind(b")") + 2 :].split()[19])


@pytest.fixture
def agent():
    """A live process standing in for the agent CLI whose pid the hook is given."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The agent's environment: no XDG runtime dir, a TMPDIR of the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp)}


def _runtime(env: dict[str, str]) -> str:
    return f"{env['TMPDIR']}/agentspool-{os.getuid()}"


def _hook(module: str, event: str, payload: dict, env: dict[str, str], **kw):
    return run_hook(hook_argv(module, event, installed=True), payload, env=env, **kw)


def test_claude_installed_hook_creates_the_agent_process_run(agent, env, silent) -> None:
    env = {**env, "CLAUDE_PID": str(agent.pid)}
    payload = {"session_id": "s1", "transcript_path": "", "hook_event_name": "SessionStart"}
    silent(_hook("claude_code", "SessionStart", payload, env))
    silent(_hook("claude_code", "UserPromptSubmit", {**payload, "prompt_id": "p1"}, env))
    runtime = _runtime(env)
    run_id = f"claude-code-{agent.pid}-{_start_ticks(agent.pid)}"
    assert os.listdir(runtime) == [run_id]
    for path in (runtime, os.path.join(runtime, run_id)):
        assert os.stat(path).st_mode & 0o777 == 0o700
    records = SpoolReader(os.path.join(runtime, run_id)).read()
    assert [(r.event, r.agent_pid) for r in records] == [
        ("SessionStart", agent.pid),
        ("UserPromptSubmit", agent.pid),
    ]
    [run] = agentspool.list_runs(runtime)
    assert (run.provider, run.run_id, run.state) == ("claude-code", run_id, "working")


def test_a_wrapped_run_is_recorded_once_under_the_wrappers_id(agent, env, silent) -> None:
    runtime = _runtime(env)
    spawn = agentspool.setup("claude-code", "wrapped", runtime)
    env = {**env, **spawn.env, "CLAUDE_PID": str(agent.pid)}
    silent(_hook("claude_code", "SessionStart", {"session_id": "s1"}, env))
    assert os.listdir(runtime) == ["wrapped"]
    assert SpoolReader(spawn.run_dir).read() == []  # the wrapper's own hook records it


def test_an_unknown_agent_records_nothing_and_still_exits_0(env, silent) -> None:
    silent(_hook("claude_code", "Stop", {"session_id": "s1"}, env))
    assert not os.path.exists(_runtime(env))  # no run could be named: nothing created


def test_codex_installed_hook_names_its_parent_process(env, tmp_path) -> None:
    """Codex runs hooks as its children: the run is the hook's parent process."""
    script = tmp_path / "codex.py"
    script.write_text(
        "import json, os, subprocess, sys\n"
        "argv, env, payload = json.loads(sys.argv[1])\n"
        "p = subprocess.run(argv, input=payload.encode(), env=env, capture_output=True)\n"
        "assert p.returncode == 0 and not p.stdout and not p.stderr\n"
        "print(os.getpid())\n"
    )
    argv = hook_argv("codex", "UserPromptSubmit", installed=True)
    payload = json.dumps({"session_id": "t1", "turn_id": "u1"})
    parent = subprocess.Popen(
        [sys.executable, str(script), json.dumps([argv, env, payload])],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
    )
    out, _ = parent.communicate(timeout=60)
    assert parent.returncode == 0
    pid = int(out)
    runtime = _runtime(env)
    [run_id] = os.listdir(runtime)
    assert run_id.startswith(f"codex-{pid}-")
    [record] = SpoolReader(os.path.join(runtime, run_id)).read()
    assert (record.event, record.agent_pid) == ("UserPromptSubmit", pid)


def test_codex_daemon_sessions_are_separate_runs(env, silent, tmp_path) -> None:
    """A hook whose parent is Codex's shared app-server daemon adds the session id."""
    script = tmp_path / "app-server.py"
    script.write_text(
        "import json, subprocess, sys\n"
        "argv, env, payloads = json.loads(sys.argv[1])\n"
        "for payload in payloads:\n"
        "    p = subprocess.run(argv, input=payload.encode(), env=env, capture_output=True)\n"
        "    assert p.returncode == 0 and not p.stdout and not p.stderr\n"
    )
    argv = hook_argv("codex", "SessionStart", installed=True)
    payloads = [
        json.dumps({"session_id": s, "hook_event_name": "SessionStart"}) for s in ("aa-1", "bb-2")
    ]
    # argv[1] == "app-server", as the daemon's own command line has it.
    subprocess.run(
        [sys.executable, str(script), json.dumps([argv, env, payloads]), "app-server"],
        check=True,
        timeout=60,
    )
    runs = sorted(os.listdir(_runtime(env)))
    assert len(runs) == 2 and [r.rsplit("-", 2)[-2:] for r in runs] == [["aa", "1"], ["bb", "2"]]
