"""``agentspool serve`` under ``watch``'s load: its CPU time ÷ wall time, and how soon an
SSE client sees a transition after the hook recorded it.

The load is ``benchmarks/watch.py``'s: 200 Claude Code runs armed in a private runtime
dir, each going through tool calls through the real hook commands (``Agents``). One
``serve`` runs over them as the operator starts it (its own process, ``--port 0``), with
one SSE client reading ``/api/v1/events`` and the page open in headless Chromium (where
Debian's ``/usr/bin/chromium`` and Playwright are installed; the page holds a second
event stream). After a warm-up serve's CPU time (utime + stime from ``/proc``) is taken
over ``--seconds`` of wall time.

Then the latency: a probe run outside the 200 is driven through ``--probes``
transitions (a permission prompt opened, then answered, by its real hooks), one at a
time, each at a random moment of serve's tick; for each, the time from the hook process
that wrote the deciding record exiting to the SSE client reading the event. The median
prints (target < 1 s), then the ratio last (target < 0.05).

Usage: python benchmarks/serve.py [--runs 200] [--gap 15] [--seconds 30] [--warmup 8]
                                  [--probes 50]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support")
)

import watch as load  # the watch benchmark's load generator
from serving import EventStream, Served

import agentspool
from agentspool.follow import INTERVAL

CHROMIUM = "/usr/bin/chromium"


@contextlib.contextmanager
def page_open(url: str) -> Iterator[bool]:
    """The page in headless Chromium until the block ends; ``False`` if there is none."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        yield False
        return
    if not os.path.exists(CHROMIUM):
        yield False
        return
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=flags
        )
        try:
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("#live.on", timeout=60_000)
            yield True
        finally:
            context.close()


class Arrivals:
    """The SSE client: every transition read, and when, for the probe's key."""

    def __init__(self, stream: EventStream, key: str) -> None:
        self.stream = stream
        self.key = key
        self.count = 0
        self.probe: queue.Queue[tuple[float, dict]] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                message = self.stream.next(timeout=3600)
            except EOFError:
                return
            at = time.monotonic()
            if message.event != "transition":
                continue
            self.count += 1
            event = json.loads(message.data)
            if event["key"] == self.key:
                self.probe.put((at, event))


def probe_latencies(
    commands: dict[str, list[str]], base: dict, arrivals: Arrivals, count: int
) -> list[float]:
    turn = {**base, "prompt_id": "p1"}
    latencies = []
    phase = random.Random(23)
    for n in range(count):
        # A hook comes at any moment of serve's tick, not just after the last one ended.
        time.sleep(phase.uniform(0.0, INTERVAL))
        tool = {**turn, "tool_name": "Bash", "tool_use_id": f"toolu_probe_{n // 2}"}
        tool["tool_input"] = {"command": f"make probe-{n // 2}"}
        if n % 2 == 0:  # working → needs_input: the permission prompt opens
            hook(commands, "PreToolUse", tool)
            hook(commands, "PermissionRequest", tool)
            wanted = "needs_input"
        else:  # needs_input → working: answered, the call ran
            hook(commands, "PostToolUse", {**tool, "tool_response": {"stdout": "ok"}})
            wanted = "working"
        written = time.monotonic()
        while True:
            at, event = arrivals.probe.get(timeout=60)
            if event["state"] == wanted:
                break
        latencies.append(at - written)
    return latencies


def hook(commands: dict[str, list[str]], event: str, payload: dict) -> None:
    subprocess.run(
        commands[event],
        input=json.dumps({**payload, "hook_event_name": event}).encode(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        check=False,
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--gap", type=float, default=15.0, help="mean seconds between tool calls")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--probes", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, sub in (
            ("CLAUDE_CONFIG_DIR", "claude-home"),
            ("CODEX_HOME", "codex-home"),
            ("GEMINI_CLI_HOME", "gemini-home"),
            ("AGENTSPOOL_DATA_DIR", "data"),
            ("XDG_DATA_HOME", "xdg-data"),
        ):
            os.environ[name] = os.path.join(tmp, sub)  # no real sessions, no real store
        runtime = os.path.join(tmp, "runtime")
        os.mkdir(runtime, 0o700)
        agents = load.Agents(runtime, tmp, args.runs, args.gap)
        agents.start_all()
        spawn = agentspool.setup("claude-code", "probe", runtime)
        transcript = os.path.join(tmp, "probe.jsonl")
        open(transcript, "w").close()
        base = {"session_id": "s-probe", "transcript_path": transcript, "cwd": "/probe"}
        probe = load.hook_commands(spawn.settings_path)
        hook(probe, "SessionStart", base)
        hook(probe, "UserPromptSubmit", {**base, "prompt_id": "p1"})
        writer = threading.Thread(target=agents.run, daemon=True)
        writer.start()
        try:
            with Served(["--runtime-dir", runtime]) as served:
                stream = served.events()
                arrivals = Arrivals(stream, "claude-code:probe")
                with page_open(served.url) as shown:
                    started, t0 = agents.spawned, time.monotonic()
                    [ratio] = load.measure([served.proc.pid], args.warmup, args.seconds)
                    spawned, elapsed = agents.spawned - started, time.monotonic() - t0
                    seen = arrivals.count
                    latencies = probe_latencies(probe, base, arrivals, args.probes)
                stream.close()
        finally:
            agents.stop.set()
            writer.join()
            agents.pool.shutdown()
    page = "the page open in Chromium" if shown else "no browser (no page open)"
    print(
        f"{args.runs} runs: {spawned} hook processes spawned while serving "
        f"({spawned / elapsed:.0f}/s over {elapsed:.0f}s); one SSE client ({seen} transitions "
        f"read), {page}"
    )
    print(
        f"SSE latency over {len(latencies)} transitions (hook record → client): median "
        f"{statistics.median(latencies):.3f} s, max {max(latencies):.3f} s  target < 1 s"
    )
    print(f"serve: CPU time / wall time {ratio:.3f}  target < 0.05")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
