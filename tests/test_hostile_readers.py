"""Issue 22: the readers, run as a user runs them, end with one line whatever a file is.

A transcript that is a FIFO held every reader's ``open`` until someone wrote to it; one
that is a directory raised from deep inside the parse. Each command here runs as a
subprocess with a timeout: a hang fails the test (``TimeoutExpired``), it does not stall
the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUDGET = 20  # seconds; every command below takes well under one


def agentspool(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = os.path.join(os.path.dirname(sys.executable), "agentspool")
    return subprocess.run(
        [script, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd="/",
        check=False,
        timeout=BUDGET,
    )


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The refusal: exit 1, one line on stderr, no traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    return proc.stderr


@pytest.fixture(params=["fifo", "directory"])
def odd_transcript(request, tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    if request.param == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.mkdir()
    return path


@pytest.fixture
def odd_run(claude_run, silent, odd_transcript):
    """A Claude Code run whose SessionStart named a transcript that is not a file."""
    payload = {"session_id": "s1", "transcript_path": str(odd_transcript)}
    silent(claude_run.run(json.dumps(payload).encode(), "SessionStart"))
    return claude_run


def test_read_explain_replay_of_an_odd_transcript_say_so_in_one_line(odd_run, odd_transcript):
    where = ["--runtime-dir", odd_run.runtime_dir]
    for argv in (
        ["read", "claude-code", "--run-id", odd_run.run_id, *where],
        ["explain", "claude-code", "--run-id", odd_run.run_id, *where],
        ["replay", odd_run.run_id, *where],
    ):
        line = one_line(agentspool(*argv))
        assert str(odd_transcript) in line and "not a regular file" in line


def test_show_of_an_odd_transcript_says_so_in_one_line(odd_transcript):
    line = one_line(agentspool("show", str(odd_transcript)))
    assert str(odd_transcript) in line


def test_a_fifo_provider_file_does_not_hold_ls(claude_run):
    os.unlink(os.path.join(claude_run.run_dir, "provider"))
    os.mkfifo(os.path.join(claude_run.run_dir, "provider"), 0o600)
    proc = agentspool("ls", "--runtime-dir", claude_run.runtime_dir, "--all")
    assert proc.returncode == 0, proc.stderr


def test_a_fifo_spool_does_not_hold_read(claude_run):
    os.mkfifo(claude_run.spool_path(), 0o600)
    proc = agentspool(
        "read",
        "claude-code",
        "--run-id",
        claude_run.run_id,
        "--runtime-dir",
        claude_run.runtime_dir,
    )
    assert proc.returncode == 0, proc.stderr
