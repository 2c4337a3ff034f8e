"""``agentspool replay``: the transitions a run's evidence and ledger made, read from the
runtime dir or from the archive a sweep moved the run to — real hook processes writing
the evidence, the real ``lifecycle`` command writing the ledger."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import agentspool
from agentspool.cli.main import main
from agentspool.core import ledger


def _declare(run, *argv: str) -> None:
    assert main(["lifecycle", *argv, "--run-id", run.run_id, "--runtime-dir", run.runtime_dir]) == 0


@pytest.fixture
def worked(claude_run, tmp_path, capsys):
    """A turn that started and stopped; then blocked, then done."""
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    claude_run.fire("SessionStart", {**base, "source": "startup"})
    claude_run.fire("UserPromptSubmit", {**base, "prompt_id": "p1"})
    claude_run.fire("Stop", {**base, "prompt_id": "p1"})
    claude_run.fire("Stop", {**base, "prompt_id": "p1"})  # a repeat: no transition
    _declare(claude_run, "blocked", "--reason", "needs the API key")
    _declare(claude_run, "done", "--force")
    capsys.readouterr()
    return claude_run


EXPECTED = [
    ("evidence", "hook:SessionStart", "idle", "idle", "active", ("activity",)),
    ("evidence", "hook:UserPromptSubmit", "working", "working", "active", ("state", "activity")),
    ("evidence", "hook:Stop", "needs_input", "idle", "active", ("state", "activity")),
    ("ledger", "cli:lifecycle", "needs_input", "idle", "blocked", ("task_state",)),
    ("ledger", "cli:lifecycle", "needs_input", "idle", "done", ("task_state",)),
]


def _shape(found) -> list[tuple]:
    return [(t.channel, t.source, t.state, t.activity, t.task_state, t.changed) for t in found]


def _files(directory: str) -> dict[str, tuple[bytes, int]]:
    return {
        name: (
            Path(directory, name).read_bytes(),
            os.stat(os.path.join(directory, name)).st_mtime_ns,
        )
        for name in os.listdir(directory)
    }


def test_replay_prints_each_transition_with_its_time_and_source(worked, capsys) -> None:
    before = _files(worked.run_dir)
    read_before = agentspool.read_chat("claude-code", worked.run_id, worked.runtime_dir)
    found = agentspool.replay(worked.run_id, worked.runtime_dir)
    assert _shape(found.transitions) == EXPECTED
    assert found.events == 6  # four hook records and two declarations
    assert found.transitions[3].task_reason == "needs the API key"
    assert all(t.at > 0 for t in found.transitions)
    assert [t.at for t in found.transitions] == sorted(t.at for t in found.transitions)
    # Replay writes nothing and leaves what a read says as it was.
    assert _files(worked.run_dir) == before
    read_after = agentspool.read_chat("claude-code", worked.run_id, worked.runtime_dir)
    assert (read_after.state, read_after.activity, read_after.task_state) == (
        read_before.state,
        read_before.activity,
        read_before.task_state,
    )
    # The last transition says what a read says.
    last = found.transitions[-1]
    assert (last.state, last.activity, last.task_state) == (
        read_after.state,
        read_after.activity,
        read_after.task_state,
    )

    assert main(["replay", worked.run_id, "--runtime-dir", worked.runtime_dir]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{worked.run_id} (claude-code), from the runtime dir: {worked.run_dir}; "
        "6 events folded, 5 transitions"
    )
    assert len(out) == 6
    assert "hook:UserPromptSubmit" in out[2]
    assert out[2].endswith("-> working; task never declared")
    assert out[4].endswith("-> your turn; task blocked: needs the API key")

    assert main(["replay", worked.run_id, "--runtime-dir", worked.runtime_dir, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["event"] for t in data["transitions"]] == [
        "session.started",
        "turn.started",
        "turn.stopped",
        "state.task_state",
        "state.task_state",
    ]


def test_an_archived_run_replays_as_it_did_before_the_sweep(worked, tmp_path, capsys) -> None:
    live = agentspool.replay(worked.run_id, worked.runtime_dir)
    archive = tmp_path / "archive"
    report = agentspool.sweep_spools(worked.runtime_dir, min_idle=0, archive=str(archive))
    assert report.archived == [worked.run_id]
    assert not os.path.exists(worked.run_dir)
    with pytest.raises(agentspool.RunNotFoundError):
        agentspool.replay(worked.run_id, worked.runtime_dir)
    archived = agentspool.replay(worked.run_id, archive=str(archive))
    assert archived.archived and archived.run_dir.startswith(str(archive / worked.run_id))
    assert archived.transitions == live.transitions
    argv = ["replay", worked.run_id, "--archive", str(archive)]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"{worked.run_id} (claude-code), from the archive: ")


def test_the_latest_archived_copy_is_replayed(worked, tmp_path, make_claude_run) -> None:
    archive = tmp_path / "archive"
    agentspool.sweep_spools(worked.runtime_dir, min_idle=0, archive=str(archive))
    again = make_claude_run(worked.runtime_dir, worked.run_id)  # the run id, set up anew
    again.fire("SessionStart", {"session_id": "s2", "source": "startup"})
    agentspool.sweep_spools(worked.runtime_dir, min_idle=0, archive=str(archive))
    assert len(list((archive / worked.run_id).iterdir())) == 2
    found = agentspool.replay(worked.run_id, archive=str(archive))
    assert _shape(found.transitions) == [EXPECTED[0]]


def test_a_run_that_ended_replays_its_end(runtime_dir, tmp_path) -> None:
    """``agentspool run``: the CLI declares done from inside, exits; the spool is swept
    and the ledger says the rest."""
    cli = tmp_path / "claude"
    cli.write_text(f"#!/bin/sh\n{sys.executable} -m agentspool.cli.main lifecycle done --force\n")
    cli.chmod(0o755)
    assert (
        agentspool.run("claude-code", [], run_id="r1", runtime_dir=runtime_dir, executable=str(cli))
        == 0
    )
    found = agentspool.replay("r1", runtime_dir)
    assert [(t.source, t.state, t.task_state, t.changed) for t in found.transitions] == [
        ("cli:lifecycle", "idle", "done", ("task_state",)),
        ("core:run", "ended", "done", ("state",)),
    ]
    assert found.transitions[1].event == "run.ended"
    assert agentspool.read_chat("claude-code", "r1", runtime_dir).state == "ended"


def test_a_run_that_is_not_there_is_one_line_and_exit_1(runtime_dir, tmp_path, capsys) -> None:
    assert main(["replay", "nope", "--runtime-dir", runtime_dir]) == 1
    assert (
        capsys.readouterr().err
        == f"agentspool: run 'nope': not found in the runtime dir {runtime_dir}\n"
    )
    assert main(["replay", "nope", "--archive", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("agentspool: run 'nope': not found in the archive ") and err.count("\n") == 1
    )


def test_ledger_replay_agrees_with_the_fold(worked) -> None:
    events = ledger.read(worked.run_dir)
    assert [life for _, life in ledger.replayed(events)][-1] == ledger.lifecycle(worked.run_dir)
