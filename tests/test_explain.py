"""``agentspool explain``: every event the read folded, with its effect or why it was
judged stale — real hook processes writing the evidence."""

from __future__ import annotations

import json

import agentspool
from agentspool.cli.main import main


def _hook(run, silent, event: str, payload: dict) -> None:
    silent(run.run(json.dumps(payload).encode(), event))


def test_explain_names_each_event_its_effect_and_what_was_stale(
    claude_run, silent, tmp_path, capsys
) -> None:
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    _hook(claude_run, silent, "SessionStart", {**base, "source": "startup"})
    _hook(claude_run, silent, "UserPromptSubmit", {**base, "prompt_id": "p1"})
    _hook(claude_run, silent, "Stop", {**base, "prompt_id": "p1"})
    # A prompt of the turn that already ended: late evidence, stale.
    late = {**base, "prompt_id": "p1", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    _hook(claude_run, silent, "PermissionRequest", late)

    found = agentspool.explain("claude-code", claude_run.run_id, claude_run.runtime_dir)
    assert found.chat.state == "needs_input" and found.chat.pending_approval is None
    assert found.chat.messages == []
    assert [(s.event.source, s.state, s.ignored) for s in found.steps] == [
        ("hook:SessionStart", "idle", ""),
        ("hook:UserPromptSubmit", "working", ""),
        ("hook:Stop", "needs_input", ""),
        ("hook:PermissionRequest", "needs_input", "stale: turn p1 had already ended"),
    ]
    # The ordinary read agrees with the traced one.
    assert agentspool.read_chat("claude-code", claude_run.run_id, claude_run.runtime_dir).state == (
        "needs_input"
    )

    argv = ["explain", "claude-code", "--run-id", claude_run.run_id]
    assert main([*argv, "--runtime-dir", claude_run.runtime_dir]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{claude_run.run_id}: needs_input (activity idle, task active)\n")
    assert "events folded: 4 (1 changed nothing)" in out
    assert "hook:PermissionRequest" in out and "ignored: stale: turn p1 had already ended" in out
    assert "parse counters (CLI version not stated): nothing unknown" in out
    assert "decided by:\n" in out and "hook:Stop" in out.split("decided by:")[1]

    assert main([*argv, "--runtime-dir", claude_run.runtime_dir, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["steps"]) == 4 and data["steps"][3]["event"]["type"] == (
        "interaction.input_requested"
    )


def test_an_ordinary_read_traces_nothing(claude_run, silent, tmp_path) -> None:
    from agentspool.core import reducer

    assert reducer.TRACE.get() is None
    agentspool.explain("claude-code", claude_run.run_id, claude_run.runtime_dir)
    assert reducer.TRACE.get() is None
