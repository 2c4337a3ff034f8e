"""Tier 2: the real ``claude -p`` and ``codex exec``, armed only by ``agentspool.setup``.

Each CLI runs against a scripted model server on 127.0.0.1 with a private HOME (and
CODEX_HOME), with exactly the args and env ``setup`` returned; the spool must then hold
one whole record per hook event that fired, in order, each payload the CLI's own JSON.
"""

from __future__ import annotations

import json
import os
import stat

import pytest
from harness import anthropic_server as api
from harness import claude, codex
from harness import responses_server as rs

import agentspool
from agentspool.adapters.codex import _lifecycle as codex_lifecycle
from agentspool.spool.read import SpoolReader

pytestmark = pytest.mark.live


def _records(run_dir: str) -> list[tuple[str, dict]]:
    reader = SpoolReader(run_dir)
    records = reader.read()
    assert reader.damaged == 0
    assert not os.path.exists(os.path.join(run_dir, "hooks.log"))
    assert stat.S_IMODE(os.stat(os.path.join(run_dir, "events.spool")).st_mode) == 0o600
    return [(r.event, json.loads(r.payload)) for r in records]


@pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)")
def test_claude_print_mode_spools_every_hook(runtime_dir, tmp_path):
    spawn = agentspool.setup("claude-code", "live-claude", runtime_dir)
    scenario = [
        api.tool_use("Bash", {"command": "echo hi", "description": "Say hi"}),
        api.tool_use("Bash", {"command": "rm -rf /nonexistent", "description": "Denied"}),
        api.text("Done."),
    ]
    with api.AnthropicServer(scenario) as server:
        home = claude.make_home(tmp_path / "claude")
        result = claude.run_print(
            "say hi",
            home=home,
            server_url=server.url,
            extra_args=[*spawn.args, "--allowedTools", "Bash(echo hi)"],
        )
    assert result.returncode == 0, result.stderr
    assert "Done." in result.stdout
    records = _records(spawn.run_dir)
    events = [event for event, _ in records]
    # -p mode: the allowed Bash runs; the other is auto-denied (PermissionRequest, no wait)
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "PreToolUse",
        "PermissionRequest",
        "PostToolBatch",
        "Stop",
        "SessionEnd",
    ]
    for event, payload in records:
        assert payload["hook_event_name"] == event
    session_ids = {payload["session_id"] for _, payload in records}
    assert len(session_ids) == 1
    post = dict(records)["PostToolUse"]
    assert (post["tool_name"], post["tool_input"]["command"]) == ("Bash", "echo hi")
    # CLAUDE_PID reached the hook: every record names the same agent process
    pids = {r.agent_pid for r in SpoolReader(spawn.run_dir).read()}
    assert len(pids) == 1 and pids != {0}


def _codex_events(run_dir: str) -> list[tuple[str, dict]]:
    records = _records(run_dir)
    for event, payload in records:
        assert payload["hook_event_name"] == event
    return records


CODEX_EXPECTED = [
    "SessionStart",
    "UserPromptSubmit",
    "PreModelRequest",
    "PreToolUse",
    "PostToolUse",
    "PreModelRequest",
    "Stop",
    "SessionEnd",
]


@pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)")
def test_codex_exec_spools_every_hook(runtime_dir, tmp_path):
    spawn = agentspool.setup("codex", "live-codex", runtime_dir)
    with rs.ResponsesServer([rs.exec_command("echo hi"), rs.text("Done.")]) as server:
        home = codex.make_home(server.base_url, root=tmp_path / "codex")
        result = codex.run_exec(home, "say hi", extra_args=spawn.args, extra_env=spawn.env)
    assert result.returncode == 0, result.stderr
    assert "Done." in result.stdout
    records = _codex_events(spawn.run_dir)
    assert [event for event, _ in records] == CODEX_EXPECTED
    assert len({payload["session_id"] for _, payload in records}) == 1
    assert os.listdir(runtime_dir) == ["live-codex"]


@pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)")
def test_codex_hooks_trusted_through_config_run_without_bypass(runtime_dir, tmp_path):
    """``--trust config``: our computed trusted_hash values are the ones Codex accepts."""
    with rs.ResponsesServer([rs.exec_command("echo hi"), rs.text("Done.")]) as server:
        home = codex.make_home(server.base_url, root=tmp_path / "codex")
        before = home.config_toml.read_bytes()
        spawn = codex_lifecycle.setup(
            "live-trusted", runtime_dir, trust_mode="config", home=str(home.codex_home)
        )
        assert codex_lifecycle.BYPASS_FLAG not in spawn.args
        result = codex.run_exec(home, "say hi", extra_args=spawn.args, extra_env=spawn.env)
    assert result.returncode == 0, result.stderr
    assert "dangerously-bypass-hook-trust" not in result.stderr
    assert [event for event, _ in _codex_events(spawn.run_dir)] == CODEX_EXPECTED
    assert codex_lifecycle.untrust(str(home.codex_home)) is True
    assert home.config_toml.read_bytes() == before
