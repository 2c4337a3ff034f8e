"""Tier 2: ``agentspool lifecycle`` run by an agent a person started by hand.

Hooks installed in the CLI's own settings (``agentspool install``) made the run; nothing
put ``AGENTSPOOL_RUN_ID`` in the agent's environment. The command finds the run itself:
Claude Code's Bash runs under the claude process (its ancestry); Codex's sandbox runs it
in a pid namespace of its own, so the session Codex names in the command's environment
finds it instead (ADR 0019); Copilot CLI's ``bash`` tool runs under the copilot process,
whose open ``preToolUse`` of that call says the main agent runs it (ADR 0053).
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import chat_server as cs
from harness import claude, codex, copilot
from harness import responses_server as rs

import agentspool
from agentspool.core import ledger
from agentspool.spool.read import read_all

pytestmark = pytest.mark.live

AGENTSPOOL_BIN = sysconfig.get_path("scripts")
DECLARE_BLOCKED = 'agentspool lifecycle blocked --reason "needs the API key"'


def _only_run(env: dict[str, str], provider: str) -> agentspool.Chat:
    runtime = f"{env['TMPDIR']}/agentspool-{os.getuid()}"
    [run] = agentspool.list_runs(runtime, include_ended=True)
    assert run.provider == provider
    return agentspool.read_chat(provider, run.run_id, runtime)


@pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)")
def test_claude_started_by_hand_declares_for_its_own_run(tmp_path: Path) -> None:
    home = claude.make_home(tmp_path / "claude")
    agentspool.install("claude-code", "user", directory=str(home.home / ".claude"))
    scenario = [
        api.tool_use("Bash", {"command": DECLARE_BLOCKED, "description": "Declare"}),
        api.text("Blocked."),
    ]
    extra_env = {"PATH": f"{AGENTSPOOL_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    with api.AnthropicServer(scenario) as srv:
        proc = claude.run_print(
            "declare that you are blocked",
            home=home,
            server_url=srv.url,
            extra_args=["--allowedTools", "Bash(agentspool lifecycle:*)"],
            extra_env=extra_env,
        )
        assert proc.returncode == 0, proc.stderr
        env = claude.build_env(home, srv.url, extra_env)
    chat = _only_run(env, "claude-code")
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")
    assert chat.state == "ended"  # claude -p exited; the declaration outlives it


@pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)")
def test_codex_started_by_hand_declares_from_its_sandbox(tmp_path: Path) -> None:
    srv = rs.ResponsesServer([rs.exec_command(DECLARE_BLOCKED), rs.text("Blocked.")]).start()
    home = codex.make_home(srv.base_url, root=tmp_path / "codex")
    try:
        agentspool.install("codex", "user", directory=str(home.codex_home))
        # Codex's login shell takes PATH from ~/.profile (docs/agent/README.md).
        (home.home / ".profile").write_text(f'PATH="{AGENTSPOOL_BIN}:$PATH"\n')
        proc = codex.run_exec(
            home, "declare that you are blocked", extra_args=["-s", "workspace-write"]
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        chat = _only_run(codex.build_env(home), "codex")
        assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")
    finally:
        home.cleanup()
        srv.stop()


@pytest.mark.skipif(not copilot.available(), reason="copilot not installed (make install)")
def test_copilot_started_by_hand_declares_for_its_own_run(tmp_path: Path) -> None:
    srv = cs.ChatServer(
        [
            cs.tool_call("bash", {"command": DECLARE_BLOCKED, "description": "Declare"}),
            cs.text("Blocked."),
        ]
    ).start()
    home = copilot.make_home(srv.base_url, tmp_path / "copilot")
    try:
        agentspool.install("copilot", "user", directory=str(home.copilot_dir))
        extra_env = {"PATH": f"{AGENTSPOOL_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        proc = copilot.run_print(
            home,
            "declare that you are blocked",
            extra_args=["--allow-all-tools"],
            extra_env=extra_env,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        env = copilot.build_env(home, extra_env)
        chat = _only_run(env, "copilot")
        assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")
        assert chat.state == "ended"  # copilot -p exited; the declaration outlives it
        # Declared inside the call: after its preToolUse, before its postToolUse (what
        # the lifecycle caller reads as the main agent's own call).
        run_dir = next(Path(f"{env['TMPDIR']}/agentspool-{os.getuid()}").glob("copilot-*"))
        times = {r.event: r.wall_ns / 1e9 for r in read_all(str(run_dir))}
        (declared,) = ledger.read(str(run_dir))
        assert times["preToolUse"] < declared.at < times["postToolUse"]
    finally:
        home.cleanup()
        srv.stop()
