"""``agentspool watch`` without a terminal: one JSON line per state transition, the
evidence written by real hook processes while the command runs; and ``poll_runs``,
which re-reads only the runs whose signature moved."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import agentspool

WATCH = [sys.executable, "-m", "agentspool.cli.main", "watch"]


def _working(run, transcript: Path, session: str) -> dict:
    base = {"session_id": session, "transcript_path": str(transcript), "cwd": "/srv/app"}
    run.fire("SessionStart", base)
    run.fire("UserPromptSubmit", {**base, "prompt_id": "p1", "prompt": "go"})
    return base


QUESTION = {
    "tool_name": "AskUserQuestion",
    "tool_use_id": "toolu_q",
    "tool_input": {
        "questions": [
            {
                "question": "Which database?",
                "header": "db",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}],
            }
        ]
    },
}


class Lines:
    """The watch process's stdout, one decoded JSON object per line, as they arrive."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.queue: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.queue.put(json.loads(line))

    def next(self, timeout: float = 20.0) -> dict:
        return self.queue.get(timeout=timeout)


def test_json_lines_follow_real_hooks_through_each_transition(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    busy = make_claude_run(runtime_dir, "busy")
    base = _working(busy, transcript, "s1")
    quiet = make_claude_run(runtime_dir, "quiet")
    quiet.fire("SessionStart", {"session_id": "s2", "transcript_path": str(transcript)})
    waited = tmp_path / "waited.json"

    with subprocess.Popen(
        [*WATCH, "--runtime-dir", runtime_dir, "--on-wait", f"cat >> {waited}", "--for", "60"],
        stdout=subprocess.PIPE,
    ) as proc:
        _follow(proc, busy, base, runtime_dir)
    # --on-wait ran for each wait that began while watching, the run's JSON on its stdin
    hooked = [json.loads(line) for line in waited.read_text().splitlines()]
    assert [(h["run_id"], h["state"]) for h in hooked] == [
        ("busy", "question"),
        ("busy", "needs_input"),
    ]


def _follow(proc, busy, base, runtime_dir) -> None:
    try:
        lines = Lines(proc)
        first = {line["run_id"]: line for line in (lines.next(), lines.next())}
        assert {r: (x["event"], x["previous"], x["state"]) for r, x in first.items()} == {
            "busy": ("seen", None, "working"),
            "quiet": ("seen", None, "idle"),
        }
        assert first["busy"]["key"] == "claude-code:busy"
        assert first["busy"]["cwd"] == "/srv/app"

        busy.fire("PreToolUse", {**base, **QUESTION, "prompt_id": "p1"})
        busy.fire("PermissionRequest", {**base, **QUESTION, "prompt_id": "p1"})
        asked = lines.next()
        assert (asked["event"], asked["run_id"], asked["previous"], asked["state"]) == (
            "changed",
            "busy",
            "working",
            "question",
        )
        assert [o["label"] for o in asked["pending_dialog"]["options"]] == ["Postgres", "SQLite"]

        busy.fire("PostToolUse", {**base, **QUESTION, "tool_response": {}})
        resumed = lines.next()
        assert (resumed["previous"], resumed["state"]) == ("question", "working")

        busy.fire("Stop", {**base, "prompt_id": "p1"})
        stopped = lines.next()
        assert (stopped["run_id"], stopped["previous"]) == ("busy", "working")
        assert stopped["state"] == "needs_input"  # the end of a turn waits on the operator

        agentspool.declare("blocked", "needs a key", run_id="quiet", runtime_dir=runtime_dir)
        blocked = lines.next()
        assert (blocked["run_id"], blocked["task_state"], blocked["task_reason"]) == (
            "quiet",
            "blocked",
            "needs a key",
        )
        assert lines.queue.empty()  # nothing printed for a tick that moved nothing
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_once_prints_every_run_and_exits(runtime_dir, make_claude_run, tmp_path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    for name in ("a", "b", "c"):
        _working(make_claude_run(runtime_dir, name), transcript, f"s-{name}")
    out = subprocess.run(
        [*WATCH, "--runtime-dir", runtime_dir, "--once"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted(x["run_id"] for x in lines) == ["a", "b", "c"]
    assert {x["event"] for x in lines} == {"seen"}
    assert out.stderr == b""


def test_state_filter_keeps_only_matching_transitions(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    _working(make_claude_run(runtime_dir, "w"), transcript, "s1")
    idle = make_claude_run(runtime_dir, "i")
    idle.fire("SessionStart", {"session_id": "s2", "transcript_path": str(transcript)})
    out = subprocess.run(
        [*WATCH, "--runtime-dir", runtime_dir, "--once", "--state", "idle"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert [json.loads(line)["run_id"] for line in out.stdout.splitlines()] == ["i"]


def test_poll_rereads_only_runs_whose_signature_moved(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    runs = {name: make_claude_run(runtime_dir, name) for name in ("a", "b")}
    bases = {name: _working(run, transcript, f"s-{name}") for name, run in runs.items()}

    first = agentspool.poll_runs(None, runtime_dir)
    assert sorted(first.changed) == ["claude-code:a", "claude-code:b"]
    assert first.listed == ["claude-code:a", "claude-code:b"]
    settled = agentspool.poll_runs(first, runtime_dir)  # the transcript joined the signature
    assert agentspool.poll_runs(settled, runtime_dir).changed == []

    runs["b"].fire("PermissionRequest", {**bases["b"], "tool_name": "Bash"})
    moved = agentspool.poll_runs(settled, runtime_dir)
    assert moved.changed == ["claude-code:b"]
    assert moved.listed[0] == "claude-code:b"
    assert moved.runs["claude-code:b"].state == "needs_input"
    assert moved.runs["claude-code:a"] is settled.runs["claude-code:a"]  # not read again

    os.rename(runs["a"].run_dir, os.path.join(tmp_path, "moved-away"))
    gone = agentspool.poll_runs(moved, runtime_dir)
    assert gone.changed == ["claude-code:a"]
    assert gone.listed == ["claude-code:b"]


def test_a_quick_poll_reads_only_runs_a_hook_appended_to(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    transcripts = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b")}
    runs, bases = {}, {}
    for name, transcript in transcripts.items():
        transcript.write_text("")
        runs[name] = make_claude_run(runtime_dir, name)
        bases[name] = _working(runs[name], transcript, f"s-{name}")
    settled = agentspool.poll_runs(agentspool.poll_runs(None, runtime_dir), runtime_dir)
    assert agentspool.poll_runs(settled, runtime_dir, full=False).changed == []

    runs["b"].fire("PermissionRequest", {**bases["b"], "tool_name": "Bash"})
    # what no hook wrote: the quick poll does not look, the full one does
    with open(transcripts["a"], "a") as fh:
        fh.write("\n")
    quick = agentspool.poll_runs(settled, runtime_dir, full=False)
    assert quick.changed == ["claude-code:b"]
    assert quick.runs["claude-code:b"].state == "needs_input"
    assert quick.listed[0] == "claude-code:b"
    assert quick.runs["claude-code:a"] is settled.runs["claude-code:a"]
    assert agentspool.poll_runs(quick, runtime_dir, full=False).changed == []
    assert agentspool.poll_runs(quick, runtime_dir).changed == ["claude-code:a"]

    # a run dir made meanwhile: the quick poll lists the runs again
    _working(make_claude_run(runtime_dir, "c"), transcripts["a"], "s-c")
    grown = agentspool.poll_runs(quick, runtime_dir, full=False)
    assert "claude-code:c" in grown.changed and grown.runs["claude-code:c"].state == "working"


def test_a_bad_runtime_dir_is_one_line_not_a_traceback(tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    out = subprocess.run(
        [*WATCH, "--runtime-dir", str(shared), "--once"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 1
    assert out.stdout == b""
    assert out.stderr.decode().count("\n") == 1 and str(shared) in out.stderr.decode()


def test_runs_already_waiting_do_not_fire_on_wait(runtime_dir, make_claude_run, tmp_path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    run = make_claude_run(runtime_dir, "w")
    base = _working(run, transcript, "s1")
    run.fire("PermissionRequest", {**base, "tool_name": "Bash"})
    fired = tmp_path / "fired"
    subprocess.run(
        [*WATCH, "--runtime-dir", runtime_dir, "--for", "1.5", "--on-wait", f"touch {fired}"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert not fired.exists()


def test_bell_sends_a_desktop_notification_when_a_run_starts_waiting(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    run = make_claude_run(runtime_dir, "w")
    base = _working(run, transcript, "s1")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sent = tmp_path / "sent"
    notify_send = bin_dir / "notify-send"  # stands in for the desktop's: records its argv
    notify_send.write_text(f'#!/bin/sh\nprintf "%s|" "$@" >> {sent}\necho >> {sent}\n')
    notify_send.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    with subprocess.Popen(
        [*WATCH, "--runtime-dir", runtime_dir, "--bell", "--for", "60"],
        stdout=subprocess.PIPE,
        env=env,
    ) as proc:
        try:
            lines = Lines(proc)
            assert lines.next()["state"] == "working"
            run.fire("PermissionRequest", {**base, "tool_name": "Bash"})
            assert lines.next()["state"] == "needs_input"
            for _ in range(100):
                if sent.exists() and sent.read_text().endswith("\n"):
                    break
                time.sleep(0.05)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert sent.read_text() == "--app-name=agentspool|claude-code waits for you|w|\n"


def test_a_reader_that_leaves_ends_watch_quietly(runtime_dir, make_claude_run, tmp_path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    run = make_claude_run(runtime_dir, "a")
    base = _working(run, transcript, "s1")
    with subprocess.Popen(
        [*WATCH, "--runtime-dir", runtime_dir, "--for", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert json.loads(proc.stdout.readline())["run_id"] == "a"
        proc.stdout.close()  # the reader leaves (`watch | head -1`)
        run.fire("PermissionRequest", {**base, "tool_name": "Bash"})  # a next line
        assert proc.wait(timeout=30) == 0
        assert proc.stderr.read() == b""


def test_an_on_wait_command_that_reads_nothing_stalls_no_other_run(
    runtime_dir, make_claude_run, tmp_path
) -> None:
    """Issue 22: a run whose JSON outgrows a pipe (64 KiB) handed to an ``--on-wait``
    command that never reads its stdin: the watch goes on, and the next run's wait is
    reported (and its command run) all the same."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    big = make_claude_run(runtime_dir, "big")
    named = {"session_id": "s1", "transcript_path": str(transcript)}
    wide = {**named, "cwd": "/" + "d" * 60_000}  # each payload under the 64 KiB cut
    big.fire("SessionStart", wide)
    big.fire("UserPromptSubmit", {**wide, "prompt_id": "p1", "prompt": "go"})
    small = make_claude_run(runtime_dir, "small")
    base = _working(small, transcript, "s2")
    fired = tmp_path / "fired"
    # Reads nothing; notes the run it was started for by the second line of the shell.
    command = f"sleep 0.2; echo started >> {fired}; sleep 30"
    with subprocess.Popen(
        [*WATCH, "--runtime-dir", runtime_dir, "--for", "60", "--on-wait", command],
        stdout=subprocess.PIPE,
    ) as proc:
        try:
            lines = Lines(proc)
            assert {lines.next()["run_id"], lines.next()["run_id"]} == {"big", "small"}
            ask = {"tool_name": "Bash", "tool_input": {"command": "x" * 60_000}}
            big.fire("PermissionRequest", {**named, "prompt_id": "p1", **ask})
            first = lines.next()
            assert (first["run_id"], first["state"]) == ("big", "needs_input")
            small.fire("PermissionRequest", {**base, "tool_name": "Bash"})
            second = lines.next(timeout=10)  # the old watch sat in write(2) for good here
            assert (second["run_id"], second["state"]) == ("small", "needs_input")
            for _ in range(200):
                if fired.exists() and fired.read_text().count("started") == 2:
                    break
                time.sleep(0.05)
            assert fired.read_text().count("started") == 2
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_watch_sees_a_codex_run_end_when_its_process_exits() -> None:
    """Codex fires no hook when it exits: the end is only the codex process gone. A
    watcher must read the run again then (issue 21), as ``ls --all`` does."""
    from agentspool.cli.watch import Follower

    with agentspool.DemoReplay(speed=4.0, scripts=("codex-approval",)) as demo:
        follower = Follower(demo.runtime_dir, interval=0.5)
        seen: list[str] = []

        def state() -> str:
            follower.tick()
            assert follower.poll is not None
            run = follower.poll.runs["codex:demo-codex-approval"]
            if not seen or seen[-1] != run.state:
                seen.append(run.state)
            return run.state

        while demo.play(0.25):
            state()
        # the stand-in codex has exited: two ticks make one full poll
        assert [state(), state()][-1] == "ended", seen
        assert agentspool.list_runs(demo.runtime_dir, include_ended=True)[0].state == "ended"
    assert "needs_input" in seen and "working" in seen, seen
