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


def test_one_bad_run_is_one_warning_in_ls_and_watch(
    runtime_dir, make_claude_run, silent, tmp_path
) -> None:
    """A run dir others can write, a run whose transcript is a directory, one whose
    transcript is a FIFO: each is one warning line; the good run is listed."""
    good = make_claude_run(runtime_dir, "good")
    silent(good.run(json.dumps({"session_id": "g"}).encode(), "SessionStart"))
    loose = make_claude_run(runtime_dir, "loose")
    os.chmod(loose.run_dir, 0o770)
    for name, make in (("dir", os.mkdir), ("fifo", os.mkfifo)):
        path = tmp_path / f"{name}.jsonl"
        make(path)
        run = make_claude_run(runtime_dir, f"odd-{name}")
        payload = {"session_id": name, "transcript_path": str(path)}
        silent(run.run(json.dumps(payload).encode(), "SessionStart"))
    for argv in (["ls", "--json"], ["watch", "--once"]):
        proc = agentspool(*argv, "--runtime-dir", runtime_dir)
        assert proc.returncode == 0, proc.stderr
        if argv[0] == "ls":
            listed = [r["run_id"] for r in json.loads(proc.stdout)]
        else:
            listed = [json.loads(line)["run_id"] for line in proc.stdout.splitlines()]
        assert listed == ["good"]
        warnings = sorted(proc.stderr.splitlines())
        assert len(warnings) == 3, proc.stderr
        assert all(w.startswith("agentspool: warning: claude-code run ") for w in warnings)
        assert "run loose: left out" in warnings[0] and "writable by group" in warnings[0]
        assert "odd-dir" in warnings[1] and "is a directory" in warnings[1]
        assert "odd-fifo" in warnings[2] and "is a FIFO" in warnings[2]


def test_sig_refuses_what_read_refuses(claude_run) -> None:
    """``sig`` must not answer for a spool ``read`` refuses (one others may write)."""
    Path(claude_run.spool_path()).write_bytes(b"")
    os.chmod(claude_run.spool_path(), 0o666)
    where = ["claude-code", "--run-id", claude_run.run_id, "--runtime-dir", claude_run.runtime_dir]
    read = agentspool("read", *where)
    sig = agentspool("sig", *where)
    assert read.returncode == 1 and "writable by group or others" in read.stderr
    assert (sig.returncode, sig.stdout) == (1, ""), sig.stdout
    assert sig.stderr == read.stderr


def test_replay_of_a_symlinked_run_dir_says_refused_not_missing(claude_run, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    os.rename(claude_run.run_dir, elsewhere)
    os.symlink(elsewhere, claude_run.run_dir)
    line = one_line(
        agentspool("replay", claude_run.run_id, "--runtime-dir", claude_run.runtime_dir)
    )
    assert "symlink" in line and "not found" not in line
