"""``agentspool watch`` over many runs spooling at once: its CPU time ÷ wall time.

200 Claude Code runs are armed in a private runtime dir (``agentspool.setup``), each with
a transcript of real record shapes (64 KB to start). While watch runs, every run goes
through tool calls as an agent does: the real hook command (the exact string ``setup``
rendered) is spawned for ``PreToolUse`` then ``PostToolUse`` — the transcript gains the
call's records between them — every few seconds (exponential gaps, mean ``--gap``
seconds per run; 15 s by default), a turn ending now and then (``Stop``, then a new
``UserPromptSubmit``), and one tool call in ten waits on a permission first
(``PermissionRequest``). A run's hooks run one after another, as the CLI waits for each;
runs run side by side. That is about 2.4 hook processes per call: 2.4 * runs / gap a
second across the runs (~31/s by default).

watch itself runs as the operator starts it, in its own process: ``--json`` (JSON lines
to a pipe this process drains) and, where tmux exists, the full-screen app in a private
tmux server — each twice side by side, at ``--interval 1`` (a refresh once a second, as
issue 13 states the target) and at watch's default interval. After a warm-up each
one's CPU time (utime + stime from ``/proc/<pid>/stat``) is taken over the same
``--seconds`` of wall time; the ratios print last (target < 0.05: 5 % of one core).

Usage: python benchmarks/watch.py [--runs 200] [--gap 15] [--seconds 30] [--warmup 8]
                                  [--also 0.5 ...]  (more intervals, side by side)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import _claude_gen

import agentspool
from agentspool.cli.watch import INTERVAL

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def hook_commands(settings_path: str) -> dict[str, list[str]]:
    with open(settings_path) as fh:
        settings = json.load(fh)
    return {
        event: shlex.split(groups[0]["hooks"][0]["command"])
        for event, groups in settings["hooks"].items()
    }


class Agents:
    """The runs' hooks, spawned at their rates by one scheduler thread."""

    def __init__(self, runtime: str, tmp: str, runs: int, gap: float) -> None:
        self.gap = gap
        self.rng = random.Random(7)
        self.runs = []
        for i in range(runs):
            spawn = agentspool.setup("claude-code", f"bench-{i:03d}", runtime)
            transcript = os.path.join(tmp, f"t{i:03d}.jsonl")
            _claude_gen.write(transcript, 64 << 10, seed=i)
            base = {
                "session_id": f"s-{i:03d}",
                "transcript_path": transcript,
                "cwd": f"/home/user/src/app{i % 17}",
            }
            self.runs.append((hook_commands(spawn.settings_path), base, transcript))
        self.stop = threading.Event()
        self.spawned = 0
        self.lock = threading.Lock()
        # A run's hooks one after another (the CLI waits for each); runs side by side.
        self.pool = ThreadPoolExecutor(max_workers=16)
        self.busy: set[int] = set()

    def hook(self, commands: dict[str, list[str]], event: str, payload: dict) -> None:
        """One hook, spawned and waited for, as the CLI runs it (its next waits)."""
        subprocess.run(
            commands[event],
            input=json.dumps({**payload, "hook_event_name": event}).encode(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            check=False,
        )
        with self.lock:
            self.spawned += 1

    def start_all(self) -> None:
        def start(run: tuple[dict[str, list[str]], dict, str]) -> None:
            commands, base, _ = run
            self.hook(commands, "SessionStart", base)
            self.hook(commands, "UserPromptSubmit", {**base, "prompt_id": "p0"})

        list(self.pool.map(start, self.runs))

    def step(self, i: int, call: int) -> None:
        commands, base, transcript = self.runs[i]
        turn = {**base, "prompt_id": f"p{call // 8}"}
        tool = {
            **turn,
            "tool_name": "Bash",
            "tool_use_id": f"toolu_{i:03d}_{call}",
            "tool_input": {"command": f"make test-{call}"},
        }
        self.hook(commands, "PreToolUse", tool)
        if call % 10 == 3:
            self.hook(commands, "PermissionRequest", tool)
        with open(transcript, "ab") as fh:
            fh.write(_claude_gen.extra_turn(i * 1000 + call))
        self.hook(commands, "PostToolUse", {**tool, "tool_response": {"stdout": "ok"}})
        if call % 8 == 7:
            self.hook(commands, "Stop", turn)
            self.hook(commands, "UserPromptSubmit", {**base, "prompt_id": f"p{call // 8 + 1}"})

    def run(self) -> None:
        due = [(self.rng.expovariate(1 / self.gap), i) for i in range(len(self.runs))]
        calls = [0] * len(self.runs)
        start = time.monotonic()
        while not self.stop.is_set():
            due.sort()
            at, i = due[0]
            wait = start + at - time.monotonic()
            if wait > 0 and self.stop.wait(wait):
                break
            if i not in self.busy:  # a run still in its last call skips this one
                self.busy.add(i)
                self.pool.submit(self._step, i, calls[i])
                calls[i] += 1
            due[0] = (at + self.rng.expovariate(1 / self.gap), i)

    def _step(self, i: int, call: int) -> None:
        try:
            self.step(i, call)
        finally:
            self.busy.discard(i)


def measure(pids: list[int], warmup: float, seconds: float) -> list[float]:
    """Each process's CPU time over the same ``seconds`` of wall time, after ``warmup``."""
    time.sleep(warmup)
    cpu0, wall0 = [cpu_seconds(pid) for pid in pids], time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - wall0
    return [(cpu_seconds(pid) - before) / wall for pid, before in zip(pids, cpu0, strict=True)]


def watch_json(runtime: str, intervals: list[str], warmup: float, seconds: float) -> list[float]:
    """One ``watch --json`` per interval, side by side, each drained by a thread."""
    argv = [sys.executable, "-m", "agentspool.cli.main", "watch", "--json"]
    procs = [
        subprocess.Popen(
            [*argv, "--runtime-dir", runtime, "--interval", interval], stdout=subprocess.PIPE
        )
        for interval in intervals
    ]
    lines = [0] * len(procs)

    def drain(i: int) -> None:
        stdout = procs[i].stdout
        assert stdout is not None
        for _ in stdout:
            lines[i] += 1

    for i in range(len(procs)):
        threading.Thread(target=drain, args=(i,), daemon=True).start()
    try:
        ratios = measure([proc.pid for proc in procs], warmup, seconds)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    for interval, count in zip(intervals, lines, strict=True):
        print(f"watch --json --interval {interval}: {count} transition lines")
    return ratios


def watch_tui(
    runtime: str, tmp: str, intervals: list[str], warmup: float, seconds: float
) -> list[float]:
    """One full-screen ``watch`` per interval, side by side, each in a private tmux server."""
    from harness.watching import start_watch

    panes = []
    try:
        for interval in intervals:
            panes.append(
                start_watch(runtime, home=tmp, args=["--interval", interval], width=200, height=60)
            )
        for pane in panes:
            pane.wait_for("runs", timeout=60)
        ratios = measure([pane.pane_pid() for pane in panes], warmup, seconds)
        print("watch (full screen, last screen's first rows):")
        print("\n".join(panes[-1].screen().splitlines()[:6]))
    finally:
        for pane in panes:
            pane.kill()
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--gap", type=float, default=15.0, help="mean seconds between tool calls")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--also", nargs="*", default=[], help="more --interval values to measure")
    args = parser.parse_args()
    # The refresh the issue names (once a second) and watch's default, side by side.
    default = f"{INTERVAL:g}"
    intervals = sorted({"1", default, *args.also}, key=float, reverse=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLAUDE_CONFIG_DIR"] = os.path.join(tmp, "claude-home")  # no real sessions
        os.environ["CODEX_HOME"] = os.path.join(tmp, "codex-home")
        os.environ["GEMINI_CLI_HOME"] = os.path.join(tmp, "gemini-home")
        runtime = os.path.join(tmp, "runtime")
        os.mkdir(runtime, 0o700)
        agents = Agents(runtime, tmp, args.runs, args.gap)
        agents.start_all()
        writer = threading.Thread(target=agents.run, daemon=True)
        writer.start()
        try:
            started, t0 = agents.spawned, time.monotonic()
            named = [f"--interval {i}" + (" (default)" if i == default else "") for i in intervals]
            ratios = {}
            for name, ratio in zip(
                named, watch_json(runtime, intervals, args.warmup, args.seconds), strict=True
            ):
                ratios[f"--json {name}"] = ratio
            if shutil.which("tmux"):
                for name, ratio in zip(
                    named,
                    watch_tui(runtime, tmp, intervals, args.warmup, args.seconds),
                    strict=True,
                ):
                    ratios[f"full screen {name}"] = ratio
            spawned, elapsed = agents.spawned - started, time.monotonic() - t0
            print(
                f"{args.runs} runs: {spawned} hook processes spawned while watching "
                f"({spawned / elapsed:.0f}/s over {elapsed:.0f}s)"
            )
        finally:
            agents.stop.set()
            writer.join()
            agents.pool.shutdown()
    for mode, ratio in ratios.items():
        print(f"watch {mode}: CPU time / wall time {ratio:.3f}  target < 0.05")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
