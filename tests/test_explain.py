"""``agentspool explain``: every event the read folded, with its effect or why it was
judged stale — real hook processes writing the evidence."""

from __future__ import annotations

import json

import agentspool
from agentspool.cli.main import main


def test_explain_names_each_event_its_effect_and_what_was_stale(
    claude_run, tmp_path, capsys
) -> None:
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    claude_run.fire("SessionStart", {**base, "source": "startup"})
    claude_run.fire("UserPromptSubmit", {**base, "prompt_id": "p1"})
    claude_run.fire("Stop", {**base, "prompt_id": "p1"})
    # A prompt of the turn that already ended: late evidence, stale.
    late = {**base, "prompt_id": "p1", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    claude_run.fire("PermissionRequest", late)

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
    assert out.startswith(
        f"{claude_run.run_id} (claude-code): your turn (state needs_input; task never declared)\n"
    )
    assert "-> your turn" in out and "/idle" not in out
    assert "events folded: 4 (1 changed nothing)" in out
    assert "hook:PermissionRequest" in out and "ignored: stale: turn p1 had already ended" in out
    assert "parse counters (CLI version not stated): nothing unknown" in out
    assert "decided by:\n" in out and "hook:Stop" in out.split("decided by:")[1]

    assert main([*argv, "--runtime-dir", claude_run.runtime_dir, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["steps"]) == 4 and data["steps"][3]["event"]["type"] == (
        "interaction.input_requested"
    )


def test_an_ordinary_read_traces_nothing(claude_run, tmp_path) -> None:
    from agentspool.core import reducer

    assert reducer.TRACE.get() is None
    agentspool.explain("claude-code", claude_run.run_id, claude_run.runtime_dir)
    assert reducer.TRACE.get() is None


def test_an_unknown_run_is_not_found_not_explained(runtime_dir, capsys) -> None:
    """Issue 21: a typo got ``typo: idle (activity unknown, task active)`` and exit 0."""
    assert main(["explain", "claude-code", "--run-id", "typo", "--runtime-dir", runtime_dir]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"agentspool: run 'typo': not found in the runtime dir {runtime_dir}\n")
    assert main(["explain", "typo", "--runtime-dir", runtime_dir]) == 1
    assert "not found" in capsys.readouterr().err


def test_explain_takes_the_bare_run_id_as_replay_does(claude_run, tmp_path, capsys):
    """Issue 21: the README's ``explain <run-id>`` is a form the CLI takes."""
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    claude_run.fire("UserPromptSubmit", {**base, "prompt_id": "p1"})
    where = ["--runtime-dir", claude_run.runtime_dir]
    assert main(["explain", claude_run.run_id, *where]) == 0
    bare = capsys.readouterr().out
    assert bare.startswith(f"{claude_run.run_id} (claude-code): working (state working;")
    assert main(["explain", "claude-code", claude_run.run_id, *where]) == 0
    assert capsys.readouterr().out == bare
    assert main(["replay", claude_run.run_id, *where]) == 0
    # a provider that is not the run's, or too many words: bad usage or not found
    assert main(["explain", "codex", "--run-id", claude_run.run_id, *where]) == 1
    assert main(["explain", "a", "b", "c", *where]) == 2
    assert main(["explain", *where]) == 2


def test_task_reads_never_declared_until_a_declaration(claude_run, tmp_path, capsys):
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    claude_run.fire("SessionStart", {"session_id": "s1", "transcript_path": str(transcript)})
    where = ["--runtime-dir", claude_run.runtime_dir]
    assert main(["explain", claude_run.run_id, *where]) == 0
    assert "task never declared" in capsys.readouterr().out
    run = {"run_id": claude_run.run_id, "runtime_dir": claude_run.runtime_dir}
    agentspool.declare("blocked", "the key", **run)
    assert main(["explain", claude_run.run_id, *where]) == 0
    assert "; task blocked: the key)" in capsys.readouterr().out.splitlines()[0]
    agentspool.declare("active", **run)
    assert main(["explain", claude_run.run_id, *where]) == 0
    assert "; task active)" in capsys.readouterr().out.splitlines()[0]
