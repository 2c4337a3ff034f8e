"""``agentspool ls``: every run in the runtime dir, most urgent first, real hooks writing
the evidence and the adapters composing it."""

from __future__ import annotations

import json
import os

import agentspool
from agentspool.cli.main import main
from agentspool.core import ledger
from agentspool.core.events import RunEnded

FIELDS = [
    "provider",
    "run_id",
    "state",
    "activity",
    "task_state",
    "task_reason",
    "since",
    "cwd",
    "title",
    "pending_approval",
    "pending_dialog",
    "session_id",
    "transcript_path",
    "pid",
    "task_declared",
]


def test_ls_orders_by_urgency_and_hides_ended_runs(
    runtime_dir, make_claude_run, tmp_path, capsys
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    idle = make_claude_run(runtime_dir, "b-idle")
    idle.fire("SessionStart", {"session_id": "s0", "transcript_path": str(transcript)})
    waiting = make_claude_run(runtime_dir, "c-waiting")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    waiting.fire("UserPromptSubmit", {**base, "prompt_id": "p1"})
    waiting.fire(
        "PermissionRequest",
        {**base, "prompt_id": "p1", "tool_name": "Bash", "tool_input": {"command": "make deploy"}},
    )
    ended = make_claude_run(runtime_dir, "a-ended")
    ledger.append(ended.run_dir, RunEnded(exit_status=0, at=1.0))
    os.mkdir(os.path.join(runtime_dir, "not-a-known-provider"), 0o700)

    assert main(["ls", "--runtime-dir", runtime_dir, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in runs] == ["c-waiting", "b-idle"]
    assert all(list(r) == FIELDS for r in runs)
    first = runs[0]
    assert (first["provider"], first["state"]) == ("claude-code", "needs_input")
    assert first["pending_approval"]["tool_input"] == {"command": "make deploy"}
    assert first["since"] > 0
    assert runs[1]["state"] == "idle"

    assert main(["ls", "--runtime-dir", runtime_dir, "--all", "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in every] == ["c-waiting", "b-idle", "a-ended"]

    assert main(["ls", "--runtime-dir", runtime_dir]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].split() == ["PROVIDER", "RUN", "STATE", "FOR"]
    assert lines[1].startswith("claude-code  c-waiting") and "approve Bash: make deploy" in lines[1]
    # the end of a turn is not an approval, on screen (issue 21); no task column: nobody
    # declared one
    assert lines[2].startswith("claude-code  b-idle") and "your turn" in lines[2]
    assert "active" not in "\n".join(lines)


def test_ls_of_a_missing_runtime_dir_is_empty(tmp_path) -> None:
    assert agentspool.list_runs(str(tmp_path / "none")) == []
