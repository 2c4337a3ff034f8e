"""Hook cost as the agent pays it, against the bare interpreter, measured side by side.

The hook command is the exact string ``agentspool.setup`` renders into Claude Code's
settings (parsed with ``shlex.split`` and spawned directly, as Claude Code's own spawn
would exec it after its shell), fed a realistic ``PostToolUse`` payload on stdin. The
baseline is ``<same interpreter> -I -S -c pass``. Runs are interleaved round-robin so
machine noise hits both alike; the ratio of medians is printed last (budget: <= 1.25,
ADR 0001). The same pair is also measured through ``sh -c``, for
information: agent CLIs start hooks through a shell.

Usage: ``.venv/bin/python benchmarks/hooks.py [runs]`` (default 60, warm-up 5).
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import agentspool

PAYLOAD = json.dumps(
    {
        "session_id": "0b9c6a1e-5d0f-4a53-9d1e-2f8f1c7e6b01",
        "transcript_path": "/home/user/.claude/projects/-home-user-src-app/"
        "0b9c6a1e-5d0f-4a53-9d1e-2f8f1c7e6b01.jsonl",
        "cwd": "/home/user/src/app",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls -la src", "description": "List the source directory"},
        "tool_response": {
            "stdout": "\n".join(
                f"-rw-r--r-- 1 user user {i * 37} Nov 29 12:00 mod{i}.py" for i in range(60)
            ),
            "stderr": "",
            "interrupted": False,
            "isImage": False,
        },
        "tool_use_id": "toolu_01XxY7k3hQbJ6aCw9mV2sR8L",
    }
).encode()


def _time(argv: list[str], stdin: bytes) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]}… exited {proc.returncode}")
    return elapsed


def _measure(pairs: dict[str, tuple[list[str], bytes]], runs: int) -> dict[str, list[float]]:
    for argv, stdin in pairs.values():  # warm-up: page cache, pyc files
        for _ in range(5):
            _time(argv, stdin)
    times: dict[str, list[float]] = {name: [] for name in pairs}
    for _ in range(runs):
        for name, (argv, stdin) in pairs.items():
            times[name].append(_time(argv, stdin))
    return times


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    with tempfile.TemporaryDirectory(prefix="agentspool-bench-") as runtime:
        os.chmod(runtime, 0o700)
        spawn = agentspool.setup("claude-code", "bench-run", runtime)
        with open(spawn.settings_path, encoding="utf-8") as fh:
            settings = json.load(fh)
        command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        bare = shlex.join([sys.executable, "-I", "-S", "-c", "pass"])
        pairs = {
            "hook": (shlex.split(command), PAYLOAD),
            "bare": (shlex.split(bare), PAYLOAD),
            "sh -c hook": (["/bin/sh", "-c", command], PAYLOAD),
            "sh -c bare": (["/bin/sh", "-c", bare], PAYLOAD),
        }
        times = _measure(pairs, runs)
        spool = os.path.join(spawn.run_dir, "events.spool")
        records = os.path.getsize(spool)
    med = {name: statistics.median(t) * 1000 for name, t in times.items()}
    print(f"payload {len(PAYLOAD)} bytes, {runs} interleaved runs each, spool {records} bytes")
    for name, ms in med.items():
        print(f"{name:>12}: median {ms:6.2f} ms  (min {min(times[name]) * 1000:6.2f} ms)")
    sh_ratio = med["sh -c hook"] / med["sh -c bare"]
    print(f"ratio sh -c hook/bare (median, information): {sh_ratio:.2f}")
    print(f"ratio hook/bare (median): {med['hook'] / med['bare']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
