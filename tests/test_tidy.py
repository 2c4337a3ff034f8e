"""``agentspool tidy``: removes exactly the runs declared done whose run ended.

Every combination of the latest declaration (done, active or blocked after done, done
after blocked, never) and the agent process (alive, gone, ended by the ledger, never
seen). Alive and gone are real processes (a ``sleep`` standing in for the agent, its
pid given to the real hook command as Claude Code gives it); ended runs are real
``agentspool run`` runs whose CLI (a shell script) declares from inside, as an agent
does; declarations go through the real ``agentspool lifecycle`` command.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import agentspool
from agentspool.cli.main import main
from agentspool.core import ledger

DECLARATIONS: dict[str, list[list[str]]] = {
    "never": [],
    "done": [["done", "--force"]],
    "active-after-done": [["done", "--force"], ["active"]],
    "blocked-after-done": [["done", "--force"], ["blocked", "--reason", "needs review"]],
    "done-after-blocked": [["blocked", "--reason", "needs review"], ["done", "--force"]],
}
PROCESSES = ["alive", "gone", "ended", "unseen"]
FINISHED = sorted(
    f"{declared}.{process}"
    for declared in ("done", "done-after-blocked")
    for process in ("gone", "ended")
)


def _snapshot(runtime_dir: str) -> dict[str, bytes]:
    """Every file below the runtime dir (but the sweep's lock), with its bytes."""
    found = {}
    for root, _, files in os.walk(runtime_dir):
        for name in files:
            path = os.path.join(root, name)
            if name != ".sweep.lock":
                found[os.path.relpath(path, runtime_dir)] = Path(path).read_bytes()
    return found


@pytest.fixture
def matrix(runtime_dir, make_claude_run, silent, tmp_path):
    """One run per combination; yields (runtime dir, run ids), then ends the agents."""
    agents: list[subprocess.Popen[bytes]] = []
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    run_ids = []
    try:
        for declared, steps in DECLARATIONS.items():
            for process in PROCESSES:
                run_id = f"{declared}.{process}"
                run_ids.append(run_id)
                if process == "ended":
                    _ended_run(runtime_dir, run_id, steps, tmp_path)
                    continue
                run = make_claude_run(runtime_dir, run_id)
                if process in ("alive", "gone"):
                    agent = subprocess.Popen(["sleep", "300"])
                    agents.append(agent)
                    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PID": str(agent.pid)}
                    payload = {"session_id": "s1", "transcript_path": str(transcript)}
                    for event in ("SessionStart", "UserPromptSubmit"):
                        body = {**payload, "hook_event_name": event, "prompt_id": "p1"}
                        silent(run.run(json.dumps(body).encode(), event, env=env))
                for step in steps:
                    argv = ["lifecycle", *step, "--run-id", run_id, "--runtime-dir", runtime_dir]
                    assert main(argv) == 0
                if process == "gone":
                    agent.kill()
                    agent.wait()
        yield runtime_dir, run_ids
    finally:
        for agent in agents:
            agent.kill()
            agent.wait()


def _ended_run(runtime_dir: str, run_id: str, steps: list[list[str]], tmp_path: Path) -> None:
    """``agentspool run`` of a CLI that declares from inside its session, then exits."""
    cli = tmp_path / f"cli-{run_id}"
    lines = [
        f"{shlex.quote(sys.executable)} -m agentspool.cli.main lifecycle "
        f"{shlex.join(step)} || exit 9"
        for step in steps
    ]
    cli.write_text("#!/bin/sh\n" + "\n".join(lines) + "\nexit 0\n")
    cli.chmod(0o755)
    status = agentspool.run(
        "claude-code", [], run_id=run_id, runtime_dir=runtime_dir, executable=str(cli)
    )
    assert status == 0
    assert ledger.lifecycle(os.path.join(runtime_dir, run_id)).ended is not None


def test_dry_run_lists_exactly_the_finished_runs_and_changes_nothing(matrix, capsys) -> None:
    runtime_dir, run_ids = matrix
    before = _snapshot(runtime_dir)
    assert main(["tidy", "--runtime-dir", runtime_dir, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True
    assert report["removed"] == FINISHED
    verdicts = {run["run_id"]: run["verdict"] for run in report["runs"]}
    assert verdicts == {r: "remove" if r in FINISHED else "keep" for r in run_ids}
    why = {run["run_id"]: run["why"] for run in report["runs"]}
    assert why["done.alive"].startswith("done, but its agent process ")
    assert why["done.alive"].endswith(" still runs")
    assert why["never.gone"] == "its task state was never declared (process exit never means done)"
    assert why["active-after-done.ended"] == "its latest declaration is active"
    assert why["blocked-after-done.gone"] == "its latest declaration is blocked: needs review"
    assert why["done.unseen"] == "done, but nothing shows its agent process ended"
    assert why["done.ended"] == "done, and the run ended (exit status 0)"
    assert why["done.gone"].startswith("done, and its agent process ")
    assert _snapshot(runtime_dir) == before

    assert main(["tidy", "--runtime-dir", runtime_dir]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = out[:-1]
    assert sorted(line.split()[2 if line.startswith("would") else 1] for line in lines) == sorted(
        run_ids
    )
    listed = sorted(line.split()[2] for line in lines if line.startswith("would remove "))
    assert listed == FINISHED
    assert out[-1] == (
        f"would remove {len(FINISHED)} of {len(run_ids)} runs; agentspool tidy --yes removes them"
    )
    assert _snapshot(runtime_dir) == before


def test_yes_removes_them_and_nothing_else(matrix, capsys, tmp_path) -> None:
    runtime_dir, run_ids = matrix
    before = _snapshot(runtime_dir)
    archive = tmp_path / "archive"
    argv = ["tidy", "--yes", "--runtime-dir", runtime_dir, "--archive", str(archive), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["dry_run"], report["removed"], report["archived"]) == (
        False,
        FINISHED,
        FINISHED,
    )
    kept = sorted(set(run_ids) - set(FINISHED))
    assert sorted(n for n in os.listdir(runtime_dir) if not n.startswith(".")) == kept
    # What stays is byte for byte what was there.
    after = _snapshot(runtime_dir)
    assert after == {k: v for k, v in before.items() if k.split("/")[0] in kept}
    # The archive holds each removed run's ledger, readable as it was.
    for run_id in FINISHED:
        [copy] = list((archive / run_id).iterdir())
        assert ledger.lifecycle(str(copy)).task_state == "done"
        assert (copy / "ledger.spool").read_bytes() == before[f"{run_id}/ledger.spool"]
    # Nothing more to do: a second tidy removes nothing.
    assert main(["tidy", "--yes", "--runtime-dir", runtime_dir, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == []


def test_a_run_goes_once_its_agent_process_is_gone(
    runtime_dir, make_claude_run, silent, tmp_path
) -> None:
    """Declared done while the agent still runs: kept; its process gone: removed."""
    run = make_claude_run(runtime_dir, "late")
    agent = subprocess.Popen(["sleep", "300"])
    try:
        transcript = tmp_path / "s1.jsonl"
        transcript.write_text("")
        payload = {"session_id": "s1", "transcript_path": str(transcript)}
        env = {"PATH": "/usr/bin:/bin", "CLAUDE_PID": str(agent.pid)}
        silent(run.run(json.dumps(payload).encode(), "SessionStart", env=env))
        agentspool.declare("done", run_id="late", runtime_dir=runtime_dir, force=True)
        kept = agentspool.tidy(runtime_dir, dry_run=False)
        assert kept.removed == [] and [r.verdict for r in kept.runs] == ["keep"]
        assert os.path.isdir(run.run_dir)
    finally:
        agent.kill()
        agent.wait()
    assert agentspool.tidy(runtime_dir, dry_run=False).removed == ["late"]
    assert not os.path.exists(run.run_dir)


def test_a_run_that_cannot_be_read_is_kept_and_named(runtime_dir, make_claude_run) -> None:
    """A run dir others can write is no evidence (ADR 0013): kept, and the rest judged."""
    for run_id in ("open", "fine"):
        make_claude_run(runtime_dir, run_id)
        agentspool.declare("done", run_id=run_id, runtime_dir=runtime_dir, force=True)
    os.chmod(os.path.join(runtime_dir, "open"), 0o777)
    report = agentspool.tidy(runtime_dir)
    [fine, opened] = report.runs
    assert (opened.run_id, opened.verdict) == ("open", "keep")
    assert opened.why.startswith("cannot be read: ") and "refused" in opened.why
    assert (fine.run_id, fine.why) == ("fine", "done, but nothing shows its agent process ended")
