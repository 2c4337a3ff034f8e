"""Hermetic regressions for two adapter bugs found by tests/live/test_claude_scenarios.py.

1. A SIGKILLed claude stays a zombie until its parent reaps it (tmux does not, at once);
   ``/proc/<pid>/stat`` still exists, so the stale native status was trusted.
2. A background agent: the transcript's end-of-turn records are stamped before the
   ``Stop`` hook that lists the running agent; the turn was finalized by the transcript
   first (with no background) and the hook's ``background_tasks`` dropped as stale.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from agentspool.adapters.claude_code import _signals
from agentspool.adapters.claude_code._transcript import TranscriptParser
from agentspool.core import events as ev
from agentspool.core import reducer

SID = "5e55a1d0-0000-4000-8000-00000000c0de"


def test_a_zombie_is_dead() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        # Not reaped yet: a zombie, whose /proc/<pid>/stat is still there. A loaded
        # machine can take a while to run the child to its exit: wait for it (a
        # deadline, not a timing assertion; 1000 yields were once not enough).
        deadline = time.monotonic() + 60
        while True:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    break
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.001)
        assert _signals.process_start(pid) is None
        assert _signals.read_native("/x/projects/slug/s.jsonl", pid) == (None, True)
    finally:
        os.waitpid(pid, 0)
    assert _signals.process_start(os.getpid()) is not None


def _line(**fields: Any) -> bytes:
    return json.dumps({"isSidechain": False, "sessionId": SID, **fields}).encode() + b"\n"


def _stamp(second: float) -> str:
    return f"2026-11-30T00:00:{second:06.3f}Z"


def _assistant(at: float, content: dict[str, Any], stop: str) -> bytes:
    return _line(
        type="assistant",
        uuid=f"a{at}",
        timestamp=_stamp(at),
        message={
            "id": f"msg_{at}",
            "role": "assistant",
            "model": "m",
            "content": [content],
            "stop_reason": stop,
        },
    )


def _background_turn() -> list[bytes]:
    notification = (
        "<task-notification>\n<task-id>agent1</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n"
        "<status>completed</status>\n</task-notification>"
    )
    return [
        _line(
            type="user",
            uuid="u1",
            promptId="p1",
            timestamp=_stamp(1.0),
            message={"role": "user", "content": "start a background agent"},
        ),
        _assistant(
            1.5,
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Agent",
                "input": {"run_in_background": True},
            },
            "tool_use",
        ),
        _line(
            type="user",
            uuid="u2",
            promptId="p1",
            timestamp=_stamp(1.8),
            message={
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "launched"}
                ],
            },
            toolUseResult={"isAsync": True, "status": "async_launched", "agentId": "agent1"},
        ),
        _assistant(2.0, {"type": "text", "text": "Agent launched."}, "end_turn"),
        _line(
            type="system",
            subtype="turn_duration",
            uuid="s1",
            timestamp=_stamp(2.1),
            pendingBackgroundAgentCount=1,
        ),
        # ... later the agent reports back and wakes the main agent
        _line(
            type="user",
            uuid="u3",
            promptId="p2",
            timestamp=_stamp(9.0),
            message={"role": "user", "content": notification},
            origin={"kind": "task-notification"},
        ),
        _assistant(9.5, {"type": "text", "text": "It finished."}, "end_turn"),
        _line(type="system", subtype="turn_duration", uuid="s2", timestamp=_stamp(9.6)),
    ]


def test_transcript_end_of_turn_names_the_running_background_agent() -> None:
    parser = TranscriptParser()
    lines = _background_turn()
    for raw in lines[:5]:
        parser.feed_line(raw)
    stops = [e for e in parser.events if isinstance(e, ev.TurnStopped)]
    assert [s.background for s in stops] == [("agent1",), ("agent1",)]
    # The Stop hook (stamped after the transcript's end_turn) arrives too late to count.
    base = stops[0].at
    hook_stop = ev.TurnStopped(turn_id="p1", at=base + 0.05, background=("agent1",))
    state = reducer.fold(sorted([*parser.events, hook_stop], key=lambda e: e.at))
    assert reducer.chat_state(state) == "working"
    assert state.activity == "working"

    for raw in lines[5:]:
        parser.feed_line(raw)
    assert parser.background == {}
    assert any(
        isinstance(e, ev.BackgroundFinished) and e.task_id == "agent1" for e in parser.events
    )
    state = reducer.fold(sorted(parser.events, key=lambda e: e.at))
    assert (reducer.chat_state(state), state.activity) == ("needs_input", "idle")


def test_a_denied_agent_launch_is_no_background_work() -> None:
    parser = TranscriptParser()
    lines = _background_turn()[:5]
    lines[2] = lines[2].replace(
        b'"toolUseResult": {"isAsync": true, "status": "async_launched", "agentId": "agent1"}',
        b'"toolUseResult": "User rejected tool use"',
    )
    for raw in lines:
        parser.feed_line(raw)
    assert parser.background == {}
    state = reducer.fold(parser.events)
    assert (reducer.chat_state(state), state.activity) == ("needs_input", "idle")
