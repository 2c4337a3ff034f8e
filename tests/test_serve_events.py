"""``GET /api/v1/events``: one Server-Sent Event per state transition — exactly the JSON
lines ``agentspool watch`` prints — and a client that reconnects with ``Last-Event-ID``
gets exactly the events it missed, in order, none twice (docs/adr/0036-serve-events.md).
The transitions are written by the real hook commands while serve runs."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

import pytest
from serving import EventStream, Served

import agentspool

BASH = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "make test"}}


class Steps:
    """A Claude Code run driven by its real hooks, one transition at a time."""

    def __init__(self, run, silent, tmp_path) -> None:
        transcript = tmp_path / f"{run.run_id}.jsonl"
        transcript.write_text("")
        self.run, self.silent = run, silent
        self.base = {
            "session_id": f"s-{run.run_id}",
            "transcript_path": str(transcript),
            "cwd": "/w",
        }
        self.turn = {**self.base, "prompt_id": "p1"}

    def hook(self, event: str, **extra: Any) -> None:
        payload = {**self.turn, **extra}
        self.silent(self.run.run(json.dumps(payload).encode(), event))

    def start(self) -> None:
        self.hook("SessionStart")
        self.hook("UserPromptSubmit")

    def approval(self) -> None:
        self.hook("PreToolUse", **BASH)
        self.hook("PermissionRequest", **BASH)

    def approved(self) -> None:
        self.hook("PostToolUse", **BASH, tool_response={"stdout": "ok"})

    def stop(self) -> None:
        self.hook("Stop")


def _without_at(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != "at"}


class WatchLines:
    def __init__(self, runtime: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentspool.cli.main",
                "watch",
                "--json",
                "--runtime-dir",
                runtime,
            ],
            stdout=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self) -> dict[str, Any]:
        return self.lines.get(timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def test_events_are_watchs_lines_and_a_reconnect_gets_exactly_what_it_missed(
    runtime_dir, make_claude_run, silent, tmp_path
) -> None:
    first = Steps(make_claude_run(runtime_dir, "first"), silent, tmp_path)
    first.start()
    watch = WatchLines(runtime_dir)
    streams: list[EventStream] = []
    with Served(["--runtime-dir", runtime_dir]) as served:
        try:
            witness = served.events()  # stays connected throughout
            client = served.events()  # hangs up and comes back
            streams += [witness, client]
            opening = witness.until("ready")
            assert [m.event for m in opening] == ["reset", "transition", "ready"]
            assert opening[0].json() == {"reason": "fresh"}
            seen = opening[1].json()
            # A fresh stream begins as watch does: every run seen, as it is now.
            assert _without_at(seen) == _without_at(watch.next())
            assert (seen["event"], seen["key"], seen["state"]) == (
                "seen",
                "claude-code:first",
                "working",
            )
            assert opening[2].id == opening[2].json()["id"]
            client.until("ready")

            def step(action) -> dict[str, Any]:
                """One transition: the witness's event, which watch printed too."""
                action()
                message = witness.next()
                assert message.event == "transition" and message.id
                event = message.json()
                assert _without_at(event) == _without_at(watch.next())
                return {"id": message.id, **event}

            asked = step(first.approval)
            assert (asked["event"], asked["previous"], asked["state"]) == (
                "changed",
                "working",
                "needs_input",
            )
            assert asked["pending_approval"]["tool_input"] == {"command": "make test"}
            got = client.next()
            assert (got.id, got.json()) == (
                asked["id"],
                {k: v for k, v in asked.items() if k != "id"},
            )
            client.close()

            # While the client is away: five transitions, two of a run set up meanwhile.
            later: list[Steps] = []
            missed = [
                step(first.approved),
                step(first.stop),
                step(
                    lambda: agentspool.declare(
                        "blocked", "needs a key", run_id="first", runtime_dir=runtime_dir
                    )
                ),
                step(
                    lambda: later.append(
                        Steps(make_claude_run(runtime_dir, "second"), silent, tmp_path)
                    )
                ),
                step(lambda: later[0].start()),  # noqa: PLW0108 - later[0] is made by the step before
            ]
            second = later[0]
            assert [(m["key"], m["event"], m["state"], m["task_state"]) for m in missed] == [
                ("claude-code:first", "changed", "working", "active"),
                ("claude-code:first", "changed", "needs_input", "active"),
                ("claude-code:first", "changed", "needs_input", "blocked"),
                ("claude-code:second", "seen", "idle", "active"),
                ("claude-code:second", "changed", "working", "active"),
            ]
            numbers = [int(m["id"].rpartition(":")[2]) for m in missed]
            assert numbers == list(range(numbers[0], numbers[0] + len(missed)))  # in order, no gap

            back = served.events(last_id=got.id)
            streams.append(back)
            resumed = [back.next() for _ in missed]
            assert [(m.event, m.id, m.json()) for m in resumed] == [
                ("transition", m["id"], {k: v for k, v in m.items() if k != "id"}) for m in missed
            ]
            # None twice, nothing else in between: the next event is the next transition.
            after = step(second.approval)
            nxt = back.next()
            assert (nxt.event, nxt.id) == ("transition", after["id"])
        finally:
            for stream in streams:
                stream.close()
            watch.stop()


def test_past_the_window_or_from_another_server_the_stream_starts_over(
    runtime_dir, make_claude_run, silent, tmp_path
) -> None:
    run = Steps(make_claude_run(runtime_dir, "only"), silent, tmp_path)
    run.start()
    streams: list[EventStream] = []
    with Served(["--runtime-dir", runtime_dir, "--event-window", "2"]) as served:
        try:
            witness = served.events()
            streams.append(witness)
            last = witness.until("ready")[-1].id
            for action in (run.approval, run.approved, run.stop):
                action()
                witness.transition()
            # three events since: past a window of two
            late = served.events(last_id=last)
            streams.append(late)
            opening = late.until("ready")
            assert opening[0].json() == {"reason": "too_old"}
            assert [(m.json()["key"], m.json()["state"]) for m in opening[1:-1]] == [
                ("claude-code:only", "needs_input")
            ]
            assert opening[-1].id == witness.last_id  # the last event published
            epoch = last.partition(":")[0]
            for foreign in ("0:1", f"{epoch}:999", "nonsense"):
                stranger = served.events(last_id=foreign)
                streams.append(stranger)
                assert stranger.next().json() == {"reason": "unknown"}, foreign
            # within the window: resumed
            near = served.events(last_id=f"{epoch}:{int(witness.last_id.rpartition(':')[2]) - 1}")
            streams.append(near)
            message = near.next()
            assert (message.event, message.id) == ("transition", witness.last_id)
        finally:
            for stream in streams:
                stream.close()


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_serve_stops_with_its_streams_open(runtime_dir, signal_name) -> None:
    import os
    import signal

    served = Served(["--runtime-dir", runtime_dir])
    stream = served.events()
    try:
        stream.until("ready")
        os.kill(served.proc.pid, getattr(signal, signal_name))
        with pytest.raises(EOFError):
            while True:
                stream.next()
        assert served.proc.wait(timeout=30) in (0, -getattr(signal, signal_name), 130)
    finally:
        stream.close()
        served.stop()
    assert "Traceback" not in served.stderr
