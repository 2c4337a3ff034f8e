"""Claude Code's ``spool_sig`` moves whenever ``read_chat`` could answer otherwise.

A property over random histories of everything a Claude Code run's answer depends on:
hook records (with the agent's pid, as ``CLAUDE_PID`` gives it), the native status file
``<config>/sessions/<pid>.json`` being rewritten, the agent process dying (a SIGKILLed
agent stays a zombie until reaped, and reads as gone) and being reaped, and turns
appended to the transcript. The agent is a real process. After each step a watcher's
poll: the signature first, then ``locate_transcript`` and ``read_chat``. Whenever the
answer differs from the previous poll's, the signature must too.

The status file is replaced (a new inode) on each write here: an in-place rewrite of
the same size within one filesystem timestamp tick would be invisible to any stat-only
digest, and the test would be about the filesystem's clock, not the adapter.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentspool.adapters.claude_code import ClaudeCode, _kit, _signals
from agentspool.adapters.testing import answer
from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.write import append_record

RUN = "run-1"
SESSION = _kit.SESSION
STEPS = [
    "prompt",
    "tool",
    "permission",
    "tool-done",
    "stop",
    "native-busy",
    "native-waiting",
    "native-question",
    "native-idle",
    "native-removed",
    "transcript",
    "die",
    "reap",
    "nothing",
]


class World:
    """One run: its runtime dir, transcript, agent process and native status file."""

    def __init__(self, root: str) -> None:
        self.runtime = os.path.join(root, "runtime")
        self.run_dir = ensure_run_dir(self.runtime, RUN)
        self.kit = _kit.Kit()
        self.transcript = self.kit.transcript(root, 1)
        self.agent = subprocess.Popen(["sleep", "600"])
        self.pid = self.agent.pid
        self.proc_start = _signals.process_start(self.pid)
        self.native = _signals.native_path(self.transcript, self.pid)
        os.makedirs(os.path.dirname(self.native), exist_ok=True)
        self.prompts = 0

    def hook(self, event: str, **fields: object) -> None:
        payload = {
            "session_id": SESSION,
            "transcript_path": self.transcript,
            "cwd": "/work",
            "hook_event_name": event,
            "prompt_id": f"prompt-{self.prompts}",
            **fields,
        }
        append_record(self.run_dir, event, json.dumps(payload).encode(), agent_pid=self.pid)

    def status(self, status: str, waiting_for: str = "") -> None:
        now = int(time.time() * 1000)
        body = {
            "pid": self.pid,
            "sessionId": SESSION,
            "procStart": self.proc_start,
            "entrypoint": "cli",
            "status": status,
            "updatedAt": now,
            "statusUpdatedAt": now,
            **({"waitingFor": waiting_for} if waiting_for else {}),
        }
        with open(self.native + ".tmp", "w") as fh:
            json.dump(body, fh)
        os.replace(self.native + ".tmp", self.native)

    def apply(self, step: str) -> None:
        bash = {"command": "touch out.txt", "description": "Make a file"}
        if step == "prompt":
            self.prompts += 1
            self.hook("UserPromptSubmit", prompt="make a file")
        elif step == "tool":
            self.hook("PreToolUse", tool_name="Bash", tool_input=bash, tool_use_id="toolu_p")
        elif step == "permission":
            self.hook("PermissionRequest", tool_name="Bash", tool_input=bash)
        elif step == "tool-done":
            self.hook("PostToolUse", tool_name="Bash", tool_input=bash, tool_use_id="toolu_p")
        elif step == "stop":
            self.hook("Stop", background_tasks=[])
        elif step == "native-busy":
            self.status("busy")
        elif step == "native-waiting":
            self.status("waiting", "permission prompt")
        elif step == "native-question":
            self.status("waiting", "input needed")
        elif step == "native-idle":
            self.status("idle")
        elif step == "native-removed":
            if os.path.exists(self.native):
                os.unlink(self.native)
        elif step == "transcript":
            self.kit.append_turn(self.transcript)
        elif step == "die":
            self.agent.send_signal(signal.SIGKILL)
            _wait_until_zombie_or_gone(self.pid)
        elif step == "reap" and self.agent.returncode is None and not _alive(self.pid):
            self.agent.wait()

    def close(self) -> None:
        self.agent.kill()
        self.agent.wait()


def _alive(pid: int) -> bool:
    return _signals.process_start(pid) is not None


def _wait_until_zombie_or_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline
        time.sleep(0.001)


@contextmanager
def world() -> Iterator[World]:
    with tempfile.TemporaryDirectory() as root:
        made = World(root)
        try:
            yield made
        finally:
            made.close()


def _poll(adapter: ClaudeCode, w: World) -> tuple[str, bytes]:
    """What a watcher does: the signature, then (when it moved) a read of the located
    transcript. Here the read always happens, to compare."""
    sig = adapter.spool_sig(RUN, w.runtime)
    located = adapter.locate_transcript(RUN, w.runtime)
    return sig, answer(adapter.read_chat(RUN, w.runtime, located))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(STEPS), min_size=1, max_size=10))
def test_signature_moves_whenever_the_answer_does(steps: list[str]) -> None:
    with world() as w:
        adapter = ClaudeCode()
        w.apply("prompt")
        _poll(adapter, w)  # the first read learns the pid and the transcript
        before = _poll(adapter, w)
        for step in steps:
            w.apply(step)
            after = _poll(adapter, w)
            if after[1] != before[1]:
                assert after[0] != before[0], f"{step}: the answer moved, the signature not"
            before = after


def test_each_kind_of_evidence_moves_the_signature() -> None:
    """The property is not vacuous: each kind of step does change the answer here."""
    with world() as w:
        adapter = ClaudeCode()
        w.apply("prompt")
        _poll(adapter, w)
        before = _poll(adapter, w)
        for step in ["native-waiting", "native-idle", "transcript", "native-question", "die"]:
            w.apply(step)
            after = _poll(adapter, w)
            assert after[1] != before[1], f"{step} did not change the answer"
            assert after[0] != before[0], f"{step}: the answer moved, the signature not"
            before = after


def test_signature_holds_still_while_nothing_changes() -> None:
    with world() as w:
        adapter = ClaudeCode()
        w.apply("prompt")
        w.status("busy")
        _poll(adapter, w)
        assert len({_poll(adapter, w)[0] for _ in range(5)}) == 1
