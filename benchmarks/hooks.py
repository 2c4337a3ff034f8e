"""Hook cost as the agent pays it, against the bare interpreter, measured side by side.

The hook command is the exact string ``agentspool.setup`` renders into Claude Code's
settings (parsed with ``shlex.split`` and spawned directly, as Claude Code's own spawn
would exec it after its shell), fed a realistic ``PostToolUse`` payload on stdin; Codex's
hook (run with the environment ``setup`` returns) also reads ``/proc`` once to name its
agent, so it is measured beside it. The baseline is ``<same interpreter> -I -S -c pass``.
Runs are interleaved round-robin so machine noise hits both alike; the ratio of medians
is printed last (budget: <= 1.25, hooks/README.md). The same pair is also
measured through ``sh -c``, for information: agent CLIs start hooks through a shell.
The installed hooks (``agentspool install``: no run in the command, the run named after
the agent process — one more ``/proc`` read — and created on first use) are measured too,
with this process standing in for the agent.

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
import tomllib

import agentspool
from agentspool.adapters.common.commands import hook_argv

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


def _time(argv: list[str], stdin: bytes, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        input=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env=env,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]}… exited {proc.returncode}")
    return elapsed


Pair = tuple[list[str], bytes, dict[str, str] | None]


def _measure(pairs: dict[str, Pair], runs: int) -> dict[str, list[float]]:
    for argv, stdin, env in pairs.values():  # warm-up: page cache, pyc files
        for _ in range(5):
            _time(argv, stdin, env)
    times: dict[str, list[float]] = {name: [] for name in pairs}
    for _ in range(runs):
        for name, (argv, stdin, env) in pairs.items():
            times[name].append(_time(argv, stdin, env))
    return times


BUDGET = 1.25
BUDGETED = {
    "codex hook": "codex hook",
    "inst. codex": "installed codex hook",
    "inst. gemini": "installed gemini hook",
    "copilot hook": "copilot hook",
    "inst. copilot": "installed copilot hook",
    "qwen hook": "qwen hook",
    "inst. qwen": "installed qwen hook",
    "inst. kimi": "installed kimi hook",
    "installed": "installed hook",
    "hook": "hook",
}
"""The hook commands held to ``BUDGET`` times the bare interpreter: the pair measured,
the name its ratio is printed under."""


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    with tempfile.TemporaryDirectory(prefix="agentspool-bench-") as runtime:
        os.chmod(runtime, 0o700)
        spawn = agentspool.setup("claude-code", "bench-run", runtime)
        with open(spawn.settings_path, encoding="utf-8") as fh:
            settings = json.load(fh)
        command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        # Codex's hook also names its agent: the parent, past a shell (one /proc read).
        codex = agentspool.setup("codex", "bench-codex", runtime)
        codex_command = next(
            tomllib.loads(a)["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            for a in codex.args
            if a.startswith("hooks.PostToolUse=")
        )
        codex_env = {**os.environ, **codex.env}
        # Copilot CLI's: armed by the run's plugin dir; its agent is the parent, past a shell.
        copilot = agentspool.setup("copilot", "bench-copilot", runtime)
        with open(copilot.settings_path, encoding="utf-8") as fh:
            copilot_command = json.load(fh)["hooks"]["postToolUse"][0]["bash"]
        # Qwen Code's run hook: its run baked in; the agent is the hook's parent.
        qwen = agentspool.setup("qwen-code", "bench-qwen", runtime)
        with open(qwen.settings_path, encoding="utf-8") as fh:
            qwen_command = json.load(fh)["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        # Installed hooks: the run comes from the agent process, in the default runtime
        # dir ($AGENTSPOOL_RUNTIME_DIR here); no run id in the environment.
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSPOOL_")}
        installed_env = {**base_env, "AGENTSPOOL_RUNTIME_DIR": runtime}
        installed = shlex.join(hook_argv("claude_code", "PostToolUse", installed=True))
        installed_codex = shlex.join(hook_argv("codex", "PostToolUse", installed=True))
        # Gemini CLI's looks for a wrapper's run in the agent's /proc/<pid>/environ first.
        installed_gemini = shlex.join(hook_argv("gemini_cli", "AfterTool", installed=True))
        installed_copilot = shlex.join(hook_argv("copilot", "postToolUse", installed=True))
        installed_qwen = shlex.join(hook_argv("qwen_code", "PostToolUse", installed=True))
        # Kimi Code's (installed only) also looks for a wrapper's run in the agent's environ.
        installed_kimi = shlex.join(hook_argv("kimi_code", "PermissionRequest", installed=True))
        bare = shlex.join([sys.executable, "-I", "-S", "-c", "pass"])
        pairs: dict[str, Pair] = {
            "hook": (shlex.split(command), PAYLOAD, None),
            "bare": (shlex.split(bare), PAYLOAD, None),
            "codex hook": (shlex.split(codex_command), PAYLOAD, codex_env),
            "installed": (
                shlex.split(installed),
                PAYLOAD,
                {**installed_env, "CLAUDE_PID": str(os.getpid())},
            ),
            "inst. codex": (shlex.split(installed_codex), PAYLOAD, installed_env),
            "inst. gemini": (shlex.split(installed_gemini), PAYLOAD, installed_env),
            "copilot hook": (shlex.split(copilot_command), PAYLOAD, None),
            "inst. copilot": (shlex.split(installed_copilot), PAYLOAD, installed_env),
            "qwen hook": (shlex.split(qwen_command), PAYLOAD, None),
            "inst. qwen": (shlex.split(installed_qwen), PAYLOAD, installed_env),
            "inst. kimi": (shlex.split(installed_kimi), PAYLOAD, installed_env),
            "sh -c hook": (["/bin/sh", "-c", command], PAYLOAD, None),
            "sh -c bare": (["/bin/sh", "-c", bare], PAYLOAD, None),
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
    for key, label in BUDGETED.items():
        print(f"ratio {label}/bare (median): {med[key] / med['bare']:.2f}")
    worst = max(BUDGETED, key=lambda key: med[key])
    print(f"worst: {BUDGETED[worst]} {med[worst] / med['bare']:.2f} (budget <= {BUDGET})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
