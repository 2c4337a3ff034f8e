"""``agentspool demo``: recorded Claude Code and Codex sessions replayed for real (ADR 0021).

No agent CLI and no network: each script in ``data/`` is a real capture's evidence (hook
payloads, transcript lines, Claude Code's status file over time), trimmed, with the
recording machine's paths replaced by ``{root}``. A replay arms each run with ``setup``,
starts a stand-in agent process per run (``_agent``) and has it run the exact hook
commands ``setup`` rendered, append the transcript lines and rewrite the status file at
their recorded offsets — so the runs' states come from the real hooks and the real
adapters, read as any caller reads them. Times are real but human pauses are evened out:
a wait on a person plays as ``PAUSE`` seconds, each hook or status change as at least
``BEAT`` (so a view redrawn once a second sees every state), and ``speed`` divides all.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import IO, Any

from agentspool.api import setup
from agentspool.spool.errors import AgentspoolError

PAUSE = 3.0  # seconds a wait on a person plays as (a permission prompt, a question)
BEAT = 0.8  # the least time between two hook or status changes of one run
STAGGER = 2.0  # between the starts of two runs
SCRIPTS = ("claude-permission", "claude-question", "codex-approval")
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_STATUS_TIMES = ("startedAt", "updatedAt", "statusUpdatedAt", "nameSince")


@dataclass(frozen=True)
class DemoRun:
    """One replayed run: which script, which provider, the run id it is armed as."""

    script: str
    provider: str
    run_id: str
    title: str


@dataclass(frozen=True)
class DemoStep:
    """One step the replay just performed (``on_step``)."""

    run: DemoRun
    op: str  # hook | append | status | status-delete | exit
    event: str  # the hook event, or ""


@dataclass
class _Live:
    run: DemoRun
    steps: list[dict[str, Any]]
    commands: dict[str, str]
    env: dict[str, str]
    hook_env: dict[str, str]
    """What the CLI adds to each hook's environment (the script's ``hook_env``)."""
    process: subprocess.Popen[bytes] | None = None
    status_path: str = ""
    started: dict[str, Any] = field(default_factory=dict)


def _load(script: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    text = resources.files(__package__).joinpath("data", f"{script}.jsonl").read_text("utf-8")
    header, *steps = (json.loads(line) for line in text.splitlines() if line)
    return header, steps


def _settings_commands(settings_path: str) -> dict[str, str]:
    """The hooks of a rendered settings file (``{"hooks": {Event: [{"hooks": [...]}]}}``)."""
    with open(settings_path, encoding="utf-8") as fh:
        settings = json.load(fh)
    return {
        event: handler["command"]
        for event, groups in settings.get("hooks", {}).items()
        for group in groups
        for handler in group["hooks"]
    }


def _override_commands(args: list[str]) -> dict[str, str]:
    """The ``-c hooks.<Event>=[…]`` config overrides ``setup`` renders, read as TOML."""
    commands = {}
    for flag, value in itertools.pairwise(args):
        if flag != "-c" or not value.startswith("hooks."):
            continue
        key, _, toml = value.partition("=")
        groups = tomllib.loads(f"v = {toml}")["v"]
        commands[key.removeprefix("hooks.")] = groups[0]["hooks"][0]["command"]
    return commands


def _substitute(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for name, replacement in names.items():
            value = value.replace(name, replacement)
        return value
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    return value


def _start_ticks(pid: int) -> str:
    """``/proc/<pid>/stat`` field 22, as Claude Code's status file spells ``procStart``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rpartition(")")[2].split()[19]


def _iso_now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def _played(steps: list[dict[str, Any]], speed: float) -> list[float]:
    """Each step's offset from the run's start as played: recorded gaps, evened out."""
    offsets, clock, before = [], 0.0, steps[0]["at"]
    for step in steps:
        gap = step["at"] - before
        before = step["at"]
        if step.get("hold"):
            gap = PAUSE
        elif step["op"] in ("hook", "status", "status-delete"):
            gap = min(max(gap, BEAT), PAUSE)
        else:
            gap = min(gap, BEAT)
        clock += gap / speed
        offsets.append(clock)
    return offsets


class DemoReplay:
    """Recorded sessions replayed into a temporary runtime dir; a context manager.

    ``play(seconds)`` performs the steps due in the next ``seconds`` and says whether any
    remain; leaving the ``with`` block (normally, on an error or on Ctrl-C) stops every
    stand-in agent and removes the temporary dir. ``environment`` points the CLIs' own
    homes at the replay's, for a view that also discovers sessions from them.
    """

    def __init__(self, *, speed: float = 1.0, scripts: tuple[str, ...] = SCRIPTS) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be positive, not {speed}")
        self.speed = speed
        self.root = tempfile.mkdtemp(prefix="agentspool-demo-")
        self.runtime_dir = os.path.join(self.root, "runtime")
        self.agents_root = os.path.join(self.root, "agents")
        self.environment = {
            "CLAUDE_CONFIG_DIR": os.path.join(self.agents_root, "home", ".claude"),
            "CODEX_HOME": os.path.join(self.agents_root, "codex"),
        }
        self._scripts = scripts
        self._live: list[_Live] = []
        self._timeline: list[tuple[float, int, int]] = []
        self._next = 0
        self._origin = 0.0
        self._closed = False

    @property
    def runs(self) -> list[DemoRun]:
        return [live.run for live in self._live]

    def __enter__(self) -> DemoReplay:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        os.mkdir(self.runtime_dir, 0o700)
        os.makedirs(os.path.join(self.agents_root, "work"))
        slug = re.sub(r"[^A-Za-z0-9]", "-", os.path.join(self.agents_root, "work"))
        names = {"{slug}": slug, "{root}": self.agents_root}
        for script in self._scripts:
            header, steps = _load(script)
            provider = header["provider"]
            run = DemoRun(script, provider, f"demo-{script}", header["title"])
            spawn = setup(provider, run.run_id, self.runtime_dir)
            commands = _settings_commands(spawn.settings_path) or _override_commands(spawn.args)
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": os.path.join(self.agents_root, "home"),
                **spawn.env,
            }
            self._live.append(
                _Live(run, _substitute(steps, names), commands, env, header.get("hook_env", {}))
            )
        for index, live in enumerate(self._live):
            live.process = subprocess.Popen(
                [sys.executable, "-I", "-m", f"{__package__}._agent"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=os.path.join(self.agents_root, "work"),
                start_new_session=True,  # Ctrl-C reaches the replay, which stops them
            )
            pid = live.process.pid
            live.started = {"pid": pid, "procStart": _start_ticks(pid), "at": time.time()}
            live.status_path = os.path.join(
                self.environment["CLAUDE_CONFIG_DIR"], "sessions", f"{pid}.json"
            )
            for number, offset in enumerate(_played(live.steps, self.speed)):
                self._timeline.append((index * STAGGER / self.speed + offset, index, number))
        self._timeline.sort()
        self._origin = time.monotonic()

    def play(
        self, seconds: float | None = None, on_step: Callable[[DemoStep], None] | None = None
    ) -> bool:
        """Perform the steps due within ``seconds`` (None: all of them, in real time);
        True while steps remain."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while self._next < len(self._timeline):
            offset, index, number = self._timeline[self._next]
            due = self._origin + offset
            if deadline is not None and due > deadline:
                time.sleep(max(0.0, deadline - time.monotonic()))
                return True
            time.sleep(max(0.0, due - time.monotonic()))
            live = self._live[index]
            step = live.steps[number]
            self._perform(live, step)
            self._next += 1
            if on_step is not None:
                on_step(DemoStep(live.run, step["op"], step.get("event", "")))
        return False

    def _perform(self, live: _Live, step: dict[str, Any]) -> None:
        process = live.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        kind = step["op"]
        if kind == "exit":
            process.stdin.close()
            process.wait(timeout=30)
            return
        if kind == "hook":
            payload = step["payload"]
            names = {"{pid}": str(process.pid), "{session_id}": payload.get("session_id", "")}
            env = {**live.env, **_substitute(live.hook_env, names)}
            op = {
                "op": "hook",
                "command": live.commands[step["event"]],
                "stdin": json.dumps(payload),
                "env": env,
                "cwd": payload.get("cwd") or self.agents_root,
            }
        elif kind == "append":
            op = {
                "op": "append",
                "path": step["file"],
                "line": _ISO_TIME.sub(_iso_now(), step["line"]),
            }
        elif kind == "status":
            now_ms = int(time.time() * 1000)
            status = {
                **step["status"],
                **{k: now_ms for k in _STATUS_TIMES if k in step["status"]},
                "startedAt": int(live.started["at"] * 1000),
                "pid": live.started["pid"],
                "procStart": live.started["procStart"],
            }
            op = {"op": "write", "path": live.status_path, "text": json.dumps(status, indent=2)}
        else:
            op = {"op": "delete", "path": live.status_path}
        _send(process.stdin, process.stdout, op)

    def close(self) -> None:
        """Stop every stand-in agent (and its hook in flight), remove the temporary dir."""
        if self._closed:
            return
        self._closed = True
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            for live in self._live:
                _stop(live.process)
            shutil.rmtree(self.root, ignore_errors=True)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)


def _send(stdin: IO[bytes], stdout: IO[bytes], op: dict[str, Any]) -> None:
    stdin.write(json.dumps(op).encode() + b"\n")
    stdin.flush()
    if stdout.readline() != b"ok\n":
        raise AgentspoolError("the demo's stand-in agent stopped")


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None:
        return
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
