"""Who declares: ``agentspool lifecycle`` run by an agent started by hand finds its run
through its process ancestry; a subagent cannot declare for its parent's run (ADR 0019).

Real processes throughout: a stand-in agent process runs the installed hooks exactly as
the CLI runs them, then runs the command through a shell, as the agent's Bash tool does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hook_runs import fire

import agentspool
from agentspool.adapters.common.commands import hook_argv
from agentspool.core import ledger

AGENT = textwrap.dedent(
    """\
    import json, os, shlex, subprocess, sys
    hook_module, command = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    if hook_module == "claude_code":
        env["CLAUDE_PID"] = str(os.getpid())  # Claude Code names itself to its hooks
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "cwd": os.getcwd()}
    hook = json.loads(os.environ["HOOK_ARGV"])
    subprocess.run(hook, input=json.dumps(payload).encode(), env=env, check=True)
    shell = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    stat = open("/proc/self/stat", "rb").read()
    ticks = int(stat[stat.rfind(b")") + 2 :].split()[19])
    print(json.dumps({"pid": os.getpid(), "ticks": ticks, "rc": shell.returncode,
                      "out": shell.stdout, "err": shell.stderr}))
    """
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An agent started by hand: no run in its environment, a TMPDIR of the test's own
    (so the default runtime dir is the test's)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"PATH": os.environ["PATH"], "TMPDIR": str(tmp)}


def _runtime(env: dict[str, str]) -> str:
    return f"{env['TMPDIR']}/agentspool-{os.getuid()}"


def _start_ticks(pid: int) -> int:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return int(raw[raw.rfind(b")") + 2 :].split()[19])


LIFECYCLE = f"{sys.executable} -m agentspool.cli.main lifecycle"


def _agent(module: str, command: str, env: dict[str, str], cwd: Path) -> dict:
    """Start the stand-in agent; it stays alive while its command runs (so its pid and
    start ticks name it), then reports what the command printed."""
    script = cwd / "agent.py"
    script.write_text(AGENT)
    proc = subprocess.run(
        [sys.executable, str(script), module, command],
        env={**env, "HOOK_ARGV": json.dumps(hook_argv(module, "SessionStart", installed=True))},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("module", "provider"),
    [("claude_code", "claude-code"), ("codex", "codex"), ("copilot", "copilot")],
)
def test_an_agent_started_by_hand_declares_for_its_own_run(module, provider, env, tmp_path):
    said = _agent(module, f"{LIFECYCLE} blocked --reason 'needs the API key'", env, tmp_path)
    run_id = f"{provider}-{said['pid']}-{said['ticks']}"
    assert (said["rc"], said["err"]) == (0, "")
    assert said["out"] == f"run {run_id}: blocked: needs the API key\n"
    chat = agentspool.read_chat(provider, run_id, _runtime(env), ended=True)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")


def test_the_nearest_agent_above_wins_and_other_runs_are_not_taken(env, tmp_path) -> None:
    """Another agent's run in the same runtime dir (a sibling process) is not ours."""
    sibling = subprocess.Popen(["sleep", "300"])
    try:
        other = f"claude-code-{sibling.pid}-{_start_ticks(sibling.pid)}"
        os.makedirs(os.path.join(_runtime(env), other), mode=0o700)
        os.chmod(_runtime(env), 0o700)
        said = _agent("claude_code", f"{LIFECYCLE} done --force", env, tmp_path)
    finally:
        sibling.kill()
        sibling.wait()
    assert (said["rc"], said["err"]) == (0, "")
    assert said["out"] == f"run claude-code-{said['pid']}-{said['ticks']}: done\n"
    assert ledger.read(os.path.join(_runtime(env), other)) == []


def test_no_agent_above_is_a_clear_refusal(env, tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", "lifecycle", "done"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 4
    assert proc.stderr.startswith("agentspool: no run: $AGENTSPOOL_RUN_ID is not set")
    assert proc.stderr.count("\n") == 1


# -- subagents -------------------------------------------------------------------------


def _hook(module: str, event: str, payload: dict, run: agentspool.Spawn, *, agent: int = 0) -> None:
    """The hook as the CLI runs it. The agent process is this test's process (Codex: the
    hook's parent; Claude Code: ``CLAUDE_PID``), so ``_declare`` runs under it, as the
    agent's shell commands do; ``agent`` names another process instead."""
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PID": str(agent or os.getpid()), **run.env}
    fire(hook_argv(module, event), payload, env=env)


def _declare(run: agentspool.Spawn, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", "lifecycle", *argv],
        env={"PATH": os.environ["PATH"], **run.env},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _shell_call(call_id: str, command: str, agent_id: str = "") -> dict:
    payload = {
        "session_id": "s1",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call_id,
    }
    if agent_id:
        payload |= {"agent_id": agent_id, "agent_type": "general-purpose"}
    return payload


@pytest.mark.parametrize(
    ("module", "provider"), [("claude_code", "claude-code"), ("codex", "codex")]
)
def test_a_subagent_cannot_declare_for_its_parents_run(module, provider, runtime_dir, tmp_path):
    run = agentspool.setup(provider, "parent-run", runtime_dir)
    command = 'agentspool lifecycle blocked --reason "needs the API key"'
    _hook(module, "PreToolUse", _shell_call("call_sub", command, "a1b2c3"), run)
    refused = _declare(run, tmp_path, "blocked", "--reason", "needs the API key")
    assert refused.returncode == 4
    assert "a subagent (a1b2c3) cannot declare its parent's task state" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert ledger.read(run.run_dir) == []
    chat = agentspool.read_chat(provider, "parent-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("active", "")

    # The subagent's call finished; the main agent's own call declares.
    _hook(module, "PostToolUse", _shell_call("call_sub", command, "a1b2c3"), run)
    _hook(module, "PreToolUse", _shell_call("call_main", command), run)
    accepted = _declare(run, tmp_path, "blocked", "--reason", "needs the API key")
    assert (accepted.returncode, accepted.stderr) == (0, "")
    chat = agentspool.read_chat(provider, "parent-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")


def test_the_newest_open_lifecycle_call_decides(runtime_dir, tmp_path) -> None:
    """A main call left open (interrupted, no PostToolUse) does not let a later
    subagent's call through; other open shell calls say nothing either way."""
    run = agentspool.setup("claude-code", "parent-run", runtime_dir)
    _hook("claude_code", "PreToolUse", _shell_call("c1", "agentspool lifecycle active"), run)
    _hook("claude_code", "PreToolUse", _shell_call("c2", "sleep 100", "sub1"), run)
    _hook(
        "claude_code",
        "PreToolUse",
        _shell_call("c3", "cd /x && .venv/bin/agentspool lifecycle done --force", "sub1"),
        run,
    )
    assert _declare(run, tmp_path, "done", "--force").returncode == 4
    _hook("claude_code", "PreToolUse", _shell_call("c4", "sleep 100"), run)
    assert _declare(run, tmp_path, "done", "--force").returncode == 4


def test_without_hook_evidence_a_person_declares(runtime_dir, tmp_path) -> None:
    """No open lifecycle call in the spool (a person at a terminal): nothing to refuse."""
    run = agentspool.setup("codex", "parent-run", runtime_dir)
    assert _declare(run, tmp_path, "done", "--force").returncode == 0


def test_a_person_at_another_terminal_declares_while_a_subagent_runs_one(
    runtime_dir, tmp_path
) -> None:
    """The subagent's open call says nothing about a command not run under the agent."""
    agent = subprocess.Popen(["sleep", "300"])
    try:
        run = agentspool.setup("claude-code", "parent-run", runtime_dir)
        command = "agentspool lifecycle done"
        _hook(
            "claude_code",
            "PreToolUse",
            _shell_call("c1", command, "sub1"),
            run,
            agent=agent.pid,
        )
        person = _declare(run, tmp_path, "blocked", "--reason", "waiting on review")
        assert (person.returncode, person.stderr) == (0, "")
    finally:
        agent.kill()
        agent.wait()
    chat = agentspool.read_chat("claude-code", "parent-run", runtime_dir, ended=True)
    assert (chat.task_state, chat.task_reason) == ("blocked", "waiting on review")


# -- Copilot CLI: hooks that name no call ---------------------------------------------


def _copilot_shell(event: str, command: str, run: agentspool.Spawn) -> None:
    """Copilot 1.0.102's ``preToolUse``/``postToolUse`` of its ``bash`` tool: no call id,
    the arguments as the model gave them (docs/providers/copilot.md §2)."""
    payload = {
        "sessionId": "s1",
        "timestamp": 1796185221359,
        "cwd": "/work",
        "toolName": "bash",
        "toolArgs": {"command": command, "description": "Declare"},
    }
    fire(hook_argv("copilot", event, run.env["AGENTSPOOL_RUNTIME_DIR"], "cop-run"), payload)


def test_copilot_main_agent_declares_while_its_lifecycle_call_is_open(
    runtime_dir, tmp_path
) -> None:
    """The hook's parent (this process) is the agent; its commands run under it."""
    from agentspool.adapters import registry

    caller = registry.load("copilot").lifecycle
    assert caller is not None
    run = agentspool.setup("copilot", "cop-run", runtime_dir)
    command = 'agentspool lifecycle blocked --reason "needs the API key"'
    shell = subprocess.Popen(["sleep", "60"])  # a command the agent runs
    try:
        _copilot_shell("preToolUse", "ls", run)
        assert caller.lifecycle_caller("cop-run", runtime_dir, shell.pid, {}) is None
        _copilot_shell("preToolUse", command, run)
        assert caller.lifecycle_caller("cop-run", runtime_dir, shell.pid, {}) == ""
        assert caller.lifecycle_caller("cop-run", runtime_dir, 1, {}) is None  # not under it
        accepted = _declare(run, tmp_path, "blocked", "--reason", "needs the API key")
        assert (accepted.returncode, accepted.stderr) == (0, "")
        _copilot_shell("postToolUse", command, run)
        assert caller.lifecycle_caller("cop-run", runtime_dir, shell.pid, {}) is None
        _copilot_shell("preToolUse", command, run)
        _copilot_shell("userPromptSubmitted", "", run)  # Esc left it open: a new turn
        assert caller.lifecycle_caller("cop-run", runtime_dir, shell.pid, {}) is None
    finally:
        shell.kill()
        shell.wait()
    chat = agentspool.read_chat("copilot", "cop-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")


# -- Codex: the environment it gives every shell command -------------------------------

SESSION = "01a23063-3ca5-7d52-bd66-38eaacab5143"
CHILD = "01a23063-3db4-7e63-b2e0-cb6388558b4d"


def test_a_codex_sub_agents_thread_is_refused_from_its_environment(runtime_dir, tmp_path):
    """Codex names the thread running the command (a sub-agent's own id) and the root
    session: they differ in a sub-agent, whatever the spool holds."""
    run = agentspool.setup("codex", "parent-run", runtime_dir)
    child = agentspool.Spawn(
        args=[], env={**run.env, "CODEX_SESSION_ID": SESSION, "CODEX_THREAD_ID": CHILD}
    )
    refused = _declare(child, tmp_path, "done", "--force")
    assert refused.returncode == 4
    assert f"a subagent ({CHILD}) cannot declare" in refused.stderr
    root = agentspool.Spawn(
        args=[], env={**run.env, "CODEX_SESSION_ID": SESSION, "CODEX_THREAD_ID": SESSION}
    )
    assert _declare(root, tmp_path, "done", "--force").returncode == 0
    assert ledger.lifecycle(run.run_dir).task_state == "done"


def test_a_sandboxed_codex_command_finds_its_hand_started_run_by_session(env, tmp_path):
    """Codex's sandbox runs the command in a pid namespace of its own: no ancestor is the
    Codex process. The session it names is in the hooks of the run that is."""
    agent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; subprocess.run(sys.argv[1:], check=True)",
            *hook_argv("codex", "SessionStart", installed=True),
        ],
        env=env,
        stdin=subprocess.PIPE,
    )
    agent.communicate(
        json.dumps({"session_id": SESSION, "hook_event_name": "SessionStart"}).encode(), timeout=60
    )
    [run_id] = os.listdir(_runtime(env))
    assert run_id.startswith(f"codex-{agent.pid}-")
    other = os.path.join(_runtime(env), "codex-1-2")  # another session's run
    os.mkdir(other, 0o700)
    proc = subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", "lifecycle", "blocked", "--reason", "key"],
        env={**env, "CODEX_SESSION_ID": SESSION, "CODEX_THREAD_ID": SESSION},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"run {run_id}: blocked: key\n"
    assert ledger.read(other) == []
