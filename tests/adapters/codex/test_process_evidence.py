"""The codex process's children as evidence (real capture h_tui_long_command, real processes).

After an approval Codex 0.169.0 writes nothing until the command ends or yields at 10 s.
The approved command runs as a child of the codex process — ``bash -c <command>``, which
for a simple command like the capture's ``sleep 25`` execs ``sleep 25`` itself (observed
in the Tier-2 run). Here the test process plays ``codex``: the replayed hooks name it as
their agent (as the real hook names its parent), and the command is its real child.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentspool.core import proc as _proc

EPS = 0.0005
CAPTURE = "h_tui_long_command"
COMMAND = "sleep 25"  # the capture's approved command


@pytest.fixture
def children() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str, running: list[str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``argv``; return once its argv reads ``running`` (default ``argv``)."""
        proc = subprocess.Popen(argv)
        started.append(proc)
        deadline = time.monotonic() + 10
        while _proc.argv(proc.pid) != (running or list(argv)):
            assert time.monotonic() < deadline, _proc.argv(proc.pid)
            time.sleep(0.01)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _asked(replay: Callable[[str], Any], agent_pid: int, command: str = COMMAND) -> Any:
    """The capture up to its open approval, hooks naming ``agent_pid``; ``command``
    replaces the captured one (to try a compound command, which bash does not exec)."""
    r = replay(CAPTURE)
    r.agent_pid = agent_pid
    for hook in r.hooks:
        tool_input = hook["payload"].get("tool_input")
        if isinstance(tool_input, dict) and tool_input.get("command") == COMMAND:
            tool_input["command"] = command
    chat = r.to(r.hook_time("PermissionRequest") + EPS).chat()
    assert chat.state == "needs_input" and chat.pending_approval is not None
    assert chat.pending_approval.tool_input["command"] == command
    return r


def test_the_approved_command_running_closes_the_approval(replay, children) -> None:
    r = _asked(replay, os.getpid())
    child = children("/bin/bash", "-c", COMMAND, running=["sleep", "25"])  # bash exec'd it
    chat = r.chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("working", "working", None)
    assert chat.evidence[0].source == "process:approved command running"
    # Kept once seen: the command ending (before its hook lands) reopens nothing.
    child.kill()
    child.wait()
    assert r.chat().pending_approval is None
    # The yield, then the turn's end, as captured.
    chat = r.to(r.hook_times("PreModelRequest")[-1] + EPS).chat()
    assert (chat.state, chat.pending_approval) == ("working", None)
    chat = r.full().chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)


def test_a_compound_command_runs_as_its_shell(replay, children) -> None:
    """``bash -c 'sleep 25 && true'`` stays bash, the command its argument."""
    command = f"{COMMAND} && true"
    r = _asked(replay, os.getpid(), command)
    children("/bin/bash", "-c", command)
    chat = r.chat()
    assert (chat.state, chat.pending_approval) == ("working", None)


def test_the_same_command_started_before_the_question_proves_nothing(replay, children) -> None:
    children("/bin/bash", "-c", COMMAND, running=["sleep", "25"])  # from an earlier turn
    time.sleep(2 / _proc.HZ + 0.01)  # start times are in clock ticks
    r = _asked(replay, os.getpid())
    chat = r.chat()
    assert chat.state == "needs_input" and chat.pending_approval is not None


def test_another_command_proves_nothing(replay, children) -> None:
    r = _asked(replay, os.getpid())
    children("/bin/bash", "-c", "sleep 26", running=["sleep", "26"])
    # The command's words, but as a step of another command: bash's child, not codex's.
    shell = children("/bin/bash", "-c", f"{COMMAND} && false")
    deadline = time.monotonic() + 10
    while not [p for p in _proc.descendants(shell.pid) if _proc.argv(p.pid) == ["sleep", "25"]]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert r.chat().pending_approval is not None


def test_the_command_under_another_process_proves_nothing(replay, children) -> None:
    codex = children("sleep", "30")  # plays codex: alive, older than every record
    time.sleep(2 / _proc.HZ + 0.01)
    r = _asked(replay, codex.pid)
    children("/bin/bash", "-c", COMMAND, running=["sleep", "25"])  # ours, not codex's
    assert r.chat().pending_approval is not None


def test_a_dead_codex_process_ends_the_run(replay) -> None:
    """SIGKILL fires no hook: the dead process is the evidence that nothing waits."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    r = replay(CAPTURE)
    r.agent_pid = dead.pid
    chat = r.to(r.hook_time("PermissionRequest") + EPS).chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)
    assert chat.evidence[0].source == f"process:{dead.pid} gone"


def test_a_hook_that_outlived_codex_does_not_name_init_as_the_agent(replay) -> None:
    """A hook whose codex died before it named its parent names pid 1 (init, its new
    parent): the agent is still the dead codex process, and the run ends."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    r = replay(CAPTURE)
    r.agent_pid = dead.pid
    asked = r.hook_time("PermissionRequest")
    r.to(asked - EPS)
    r.agent_pid = 1
    chat = r.to(asked + EPS).chat()
    assert (chat.state, chat.activity, chat.pending_approval) == ("needs_input", "idle", None)
    assert chat.evidence[0].source == f"process:{dead.pid} gone"


def test_a_reused_pid_is_not_the_agent() -> None:
    before = time.monotonic_ns()
    time.sleep(2 / _proc.HZ + 0.01)
    child = subprocess.Popen(["sleep", "5"])
    try:
        time.sleep(2 / _proc.HZ + 0.01)
        assert _proc.same_process(child.pid, time.monotonic_ns()) is not None
        # A record written before this process existed named an older one.
        assert _proc.same_process(child.pid, before) is None
    finally:
        child.kill()
        child.wait()
