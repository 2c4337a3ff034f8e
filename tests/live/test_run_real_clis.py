"""Tier 2: ``agentspool run`` wrapping the real ``claude -p`` against the scripted server.

The wrapper must exit with the CLI's own status, and the run must read ``ended``
afterwards (its spool swept, its ledger kept), with the conversation the CLI wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from harness import anthropic_server as api
from harness import claude

import agentspool
from agentspool.core import ledger

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)"),
]


def _run(tmp_path, runtime_dir: str, scenario: list[api.Reply], prompt: str, run_id: str):
    with api.AnthropicServer(scenario) as server:
        home = claude.make_home(tmp_path / "claude")
        env = claude.build_env(home, server.url)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentspool.cli.main",
                "run",
                "claude-code",
                "--run-id",
                run_id,
                "--runtime-dir",
                runtime_dir,
                "--cli",
                str(claude.CLAUDE_BIN),
                "--",
                "-p",
                prompt,
                "--permission-mode",
                "default",
            ],
            cwd=home.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    return proc


def test_run_passes_the_status_through_and_the_run_reads_ended(tmp_path, runtime_dir) -> None:
    proc = _run(tmp_path, runtime_dir, [api.text("All done here.")], "say done", "wrapped-ok")
    assert proc.returncode == 0, proc.stderr
    assert "All done here." in proc.stdout
    run_dir = os.path.join(runtime_dir, "wrapped-ok")
    assert os.listdir(run_dir) == [ledger.LEDGER_FILE]  # the spool was swept
    chat = agentspool.read_chat("claude-code", "wrapped-ok", runtime_dir)
    assert chat.state == "ended"
    assert chat.transcript_path and os.path.exists(chat.transcript_path)
    assert [m.text for m in chat.messages if m.role == "assistant" and m.kind == "text"] == [
        "All done here."
    ]


def test_run_passes_a_failing_status_through(tmp_path, runtime_dir) -> None:
    scenario = [api.error(400, type="invalid_request_error", message="prompt is invalid", times=10)]
    proc = _run(tmp_path, runtime_dir, scenario, "trigger an error", "wrapped-error")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    chat = agentspool.read_chat("claude-code", "wrapped-error", runtime_dir)
    assert chat.state == "ended"
    assert chat.evidence[0].detail == "the run ended (exit status 1)"
