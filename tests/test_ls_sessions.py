"""``ls`` also lists sessions no hook armed, from the CLIs' own files: Claude Code's
``sessions/<pid>.json`` beside its transcripts, Codex's recent rollouts. Real captures,
laid out as the CLIs lay them out, with a real process standing in for the agent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import agentspool

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"
CLAUDE = CAPTURES / "claude-code" / "tui-permission-approve"
SESSION = "44bada7c-1d71-4dff-9021-8d176603d55a"
CODEX = CAPTURES / "codex" / "c_tui_plain"
ROLLOUT = "rollout-2026-11-30T00-00-52-01a229c1-20d3-72e2-810d-e96992513ffe.jsonl"


def _start_ticks(pid: int) -> str:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return raw[raw.rfind(b")") + 2 :].split()[19].decode()


@pytest.fixture
def agent():
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def _claude_session(pid: int, proc_start: str, status: str = "idle") -> Path:
    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    project = config / "projects" / "-srv-project"
    project.mkdir(parents=True)
    shutil.copy(CLAUDE / "transcript" / f"{SESSION}.jsonl", project)
    native = json.loads((CLAUDE / "session-idle.json").read_text())
    native.update(pid=pid, procStart=proc_start, cwd="/srv/project", status=status)
    (config / "sessions").mkdir()
    (config / "sessions" / f"{pid}.json").write_text(json.dumps(native))
    return project / f"{SESSION}.jsonl"


def test_a_running_claude_session_without_hooks_is_listed(agent, runtime_dir) -> None:
    transcript = _claude_session(agent.pid, _start_ticks(agent.pid))
    [run] = agentspool.list_runs(runtime_dir)
    assert (run.provider, run.run_id, run.session_id) == ("claude-code", "", SESSION)
    assert (run.pid, run.cwd, run.transcript_path) == (agent.pid, "/srv/project", str(transcript))
    assert run.state == "needs_input"  # its turn ended; the status file says idle
    assert run.title  # the first prompt


def test_a_claude_session_whose_process_is_gone_is_ended(agent, runtime_dir) -> None:
    _claude_session(agent.pid, str(int(_start_ticks(agent.pid)) - 1))  # a reused pid
    assert agentspool.list_runs(runtime_dir) == []
    [run] = agentspool.list_runs(runtime_dir, include_ended=True)
    assert run.state == "ended"


def test_a_run_covering_the_session_is_listed_once(agent, runtime_dir, claude_run, silent) -> None:
    transcript = _claude_session(agent.pid, _start_ticks(agent.pid))
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "source": "startup"}
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PID": str(agent.pid)}
    silent(claude_run.run(json.dumps(payload).encode(), "SessionStart", env=env))
    [run] = agentspool.list_runs(claude_run.runtime_dir)
    assert run.run_id == claude_run.run_id and run.session_id == SESSION


def test_a_recent_codex_rollout_is_listed_with_all(runtime_dir) -> None:
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(CODEX / ROLLOUT, day)
    assert agentspool.list_runs(runtime_dir) == []  # its process is not known to run
    [run] = agentspool.list_runs(runtime_dir, include_ended=True)
    assert (run.provider, run.run_id) == ("codex", "")
    assert run.session_id == "01a229c1-20d3-72e2-810d-e96992513ffe"
    assert run.state == "needs_input"


def test_a_recent_gemini_chat_file_is_listed_with_all(runtime_dir) -> None:
    """Gemini CLI keeps no status file: a chat file changed in the last hour is listed
    with ``include_ended``, its state read from the file alone; a subagent's own file
    (a folder named after its parent session) is not a session."""
    chats = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "work" / "chats"
    (chats / "dfd823e2-parent").mkdir(parents=True)
    [capture] = (CAPTURES / "gemini-cli" / "tui-approve" / "chats").iterdir()
    shutil.copy(capture, chats)
    shutil.copy(capture, chats / "dfd823e2-parent" / "child.jsonl")
    (chats.parent / ".project_root").write_text("/srv/project")
    assert agentspool.list_runs(runtime_dir) == []
    [run] = agentspool.list_runs(runtime_dir, include_ended=True)
    assert (run.provider, run.run_id, run.transcript_path) == (
        "gemini-cli",
        "",
        str(chats / capture.name),
    )
    assert run.session_id == json.loads(capture.read_text().splitlines()[0])["sessionId"]
    assert (run.state, run.title) == ("needs_input", "please touch approved.txt")
    assert run.cwd == "/srv/project"  # the project's directory the CLI recorded


def test_an_old_rollout_is_not_listed(runtime_dir) -> None:
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    path = day / ROLLOUT
    shutil.copy(CODEX / ROLLOUT, path)
    old = os.stat(path).st_mtime - 2 * agentspool.api.RECENT_SESSIONS
    os.utime(path, (old, old))
    assert agentspool.list_runs(runtime_dir, include_ended=True) == []


def test_poll_follows_a_session_without_hooks_and_drops_it_when_its_process_ends(
    agent, runtime_dir
) -> None:
    transcript = _claude_session(agent.pid, _start_ticks(agent.pid))
    key = f"claude-code:session:{SESSION}"
    first = agentspool.poll_runs(None, runtime_dir)
    assert (first.listed, first.changed) == ([key], [key])
    assert agentspool.run_key(first.runs[key]) == key
    # between listings of the CLI's files, the session is re-signed from its own stat
    quiet = agentspool.poll_runs(first, runtime_dir, discover=False)
    assert (quiet.listed, quiet.changed) == ([key], [])
    assert quiet.runs[key] is first.runs[key]

    # a permission prompt opens: the CLI rewrites its status file, the transcript rests
    status = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "sessions" / f"{agent.pid}.json"
    native = json.loads(status.read_text())
    dialog = json.loads((CLAUDE / "session-dialog-open.json").read_text())
    stamp = int(time.time() * 1000)
    native.update(
        status=dialog["status"],
        waitingFor=dialog["waitingFor"],
        updatedAt=stamp,
        statusUpdatedAt=stamp,
    )
    status.write_text(json.dumps(native))
    asked = agentspool.poll_runs(quiet, runtime_dir, discover=False)
    assert asked.changed == [key]
    assert asked.runs[key].state == "needs_input"
    assert asked.runs[key].since * 1000 == pytest.approx(stamp, abs=1)

    with transcript.open("ab") as fh:
        fh.write(transcript.read_bytes().splitlines(keepends=True)[-1])
    grown = agentspool.poll_runs(asked, runtime_dir, discover=False)
    assert grown.changed == [key]

    agent.kill()
    agent.wait()
    gone = agentspool.poll_runs(grown, runtime_dir, discover=False)
    assert gone.changed == [key]
    assert gone.listed == []  # its process is gone: ended, listed only with include_ended
    assert gone.runs[key].state == "ended"
    everything = agentspool.poll_runs(grown, runtime_dir, discover=False, include_ended=True)
    assert everything.listed == [key]
