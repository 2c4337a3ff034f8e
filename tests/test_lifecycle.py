"""``agentspool lifecycle``: task-state declarations into the run's ledger, as the agent
itself runs it (the run from the environment) and as a person does (``--run-id``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentspool
from agentspool.cli.main import main
from agentspool.core import ledger


def _lifecycle(argv: list[str], env: dict[str, str], cwd: str) -> subprocess.CompletedProcess[str]:
    """The command as an agent's shell runs it: a process with the run in its env."""
    return subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", "lifecycle", *argv],
        env={"PATH": os.environ["PATH"], **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.fixture
def armed(runtime_dir: str) -> dict[str, str]:
    """The environment ``setup`` gives the agent."""
    return dict(agentspool.setup("claude-code", "agent-run", runtime_dir).env)


def test_the_agent_declares_from_its_environment(armed, runtime_dir, tmp_path) -> None:
    proc = _lifecycle(["blocked", "--reason", "needs the API key"], armed, str(tmp_path))
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "run agent-run: blocked: needs the API key\n"
    chat = agentspool.read_chat("claude-code", "agent-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("blocked", "needs the API key")
    assert chat.evidence[-1].source == "cli:lifecycle"


def test_an_exact_repeat_records_nothing_and_says_so(armed, runtime_dir, tmp_path) -> None:
    args = ["blocked", "--reason", "needs the API key"]
    assert _lifecycle(args, armed, str(tmp_path)).returncode == 0
    again = _lifecycle(args, armed, str(tmp_path))
    assert again.returncode == 0
    assert again.stdout == "run agent-run: already blocked; nothing recorded\n"
    assert len(ledger.read(os.path.join(runtime_dir, "agent-run"))) == 1
    other = _lifecycle(["blocked", "--reason", "needs review"], armed, str(tmp_path))
    assert other.stdout == "run agent-run: blocked: needs review\n"  # a new reason is news


def test_leaving_blocked_drops_the_reason(armed, runtime_dir, tmp_path) -> None:
    _lifecycle(["blocked", "--reason", "waiting on CI"], armed, str(tmp_path))
    proc = _lifecycle(["active", "--json"], armed, str(tmp_path))
    assert json.loads(proc.stdout) == {
        "run_id": "agent-run",
        "task_state": "active",
        "task_reason": "",
        "changed": True,
    }
    chat = agentspool.read_chat("claude-code", "agent-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("active", "")


def test_blocked_without_a_reason_is_refused(armed, runtime_dir, tmp_path) -> None:
    proc = _lifecycle(["blocked"], armed, str(tmp_path))
    assert proc.returncode == 4
    assert proc.stderr == "agentspool: run 'agent-run': blocked needs a reason (--reason TEXT)\n"
    assert ledger.read(os.path.join(runtime_dir, "agent-run")) == []


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "PATH": os.environ["PATH"],
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "HOME": str(repo),
        },
    )


def test_done_is_refused_with_uncommitted_changes_unless_forced(armed, runtime_dir, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("work\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-qm", "a")
    (repo / "a.txt").write_text("more work\n")
    refused = _lifecycle(["done"], armed, str(repo / "."))
    assert refused.returncode == 4
    assert f"uncommitted changes in {repo}" in refused.stderr
    assert agentspool.read_chat("claude-code", "agent-run", runtime_dir).task_state == "active"
    _git(repo, "commit", "-qam", "more")
    (repo / "new.txt").write_text("untracked counts too\n")
    assert _lifecycle(["done"], armed, str(repo)).returncode == 4
    forced = _lifecycle(["done", "--force"], armed, str(repo))
    assert (forced.returncode, forced.stdout) == (0, "run agent-run: done\n")
    assert agentspool.read_chat("claude-code", "agent-run", runtime_dir).task_state == "done"


def test_a_person_declares_for_a_named_run_from_outside(runtime_dir, tmp_path, capsys) -> None:
    agentspool.setup("codex", "other-run", runtime_dir)
    argv = ["lifecycle", "blocked", "--reason", "flaky test", "--run-id", "other-run"]
    assert main([*argv, "--runtime-dir", runtime_dir]) == 0
    assert capsys.readouterr().out == "run other-run: blocked: flaky test\n"
    chat = agentspool.read_chat("codex", "other-run", runtime_dir)
    assert (chat.task_state, chat.task_reason) == ("blocked", "flaky test")


def test_an_ended_run_keeps_its_declared_task_state(armed, runtime_dir, tmp_path) -> None:
    _lifecycle(["blocked", "--reason", "needs the API key"], armed, str(tmp_path))
    chat = agentspool.read_chat("claude-code", "agent-run", runtime_dir, ended=True)
    assert (chat.state, chat.task_state, chat.task_reason) == (
        "ended",
        "blocked",
        "needs the API key",
    )


def test_process_exit_never_means_done(fp, runtime_dir, tmp_path) -> None:
    cli = tmp_path / "claude"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    fp.register([str(cli), fp.any()], returncode=0)
    agentspool.run("claude-code", [], run_id="exits", runtime_dir=runtime_dir, executable=str(cli))
    chat = agentspool.read_chat("claude-code", "exits", runtime_dir)
    assert (chat.state, chat.task_state) == ("ended", "active")
