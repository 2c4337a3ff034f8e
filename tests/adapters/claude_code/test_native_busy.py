"""The native status file's ``busy`` ends a prompt (real capture: tui-permission-approve).

No hook fires between approving a tool and the tool's end, so an approved command that
runs for minutes read ``needs_input`` for minutes. Claude Code 2.1.328 rewrites
``sessions/<pid>.json`` to ``busy`` at the approval; that is the evidence. The capture's
session timeline gives the statuses and when they were written; its hooks and transcript
give the rest.
"""

from __future__ import annotations

import json

from replay import CAPTURES, claude_events

from agentspool.adapters.claude_code import _signals
from agentspool.core import reducer

CAPTURE = "tui-permission-approve"


def _statuses() -> list[_signals.NativeStatus]:
    """The capture's native file as it was rewritten, stamped when the recorder saw it."""
    out = []
    with open(CAPTURES / "claude-code" / CAPTURE / "session-timeline.jsonl") as fh:
        for line in fh:
            seen = json.loads(line)
            if seen["status"]:
                out.append(
                    _signals.NativeStatus(
                        sessionId=seen["sessionId"],
                        status=seen["status"],
                        waitingFor=seen["waitingFor"] or "",
                        statusUpdatedAt=seen["time"] * 1000,
                    )
                )
    return out


def _state_at(at: float, status: _signals.NativeStatus) -> reducer.RunState:
    """What a read at ``at`` folds: the evidence written by then, plus the file's status."""
    events = [e for e in claude_events(CAPTURE) if e.at <= at]
    native = _signals.native_events(status, False, 1)
    return reducer.fold(sorted([*events, *native], key=lambda e: e.at))


def test_busy_after_the_prompt_means_approved_and_working() -> None:
    statuses = _statuses()
    assert [s.status for s in statuses] == ["idle", "busy", "waiting", "busy"]
    waiting, approved = statuses[2], statuses[3]
    asked = next(e.at for e in claude_events(CAPTURE) if e.source == "hook:PermissionRequest")
    ran = next(e.at for e in claude_events(CAPTURE) if e.source == "hook:PostToolUse")
    assert asked < approved.statusUpdatedAt / 1000 < ran

    # While the dialog is open: waiting, the prompt pending.
    state = _state_at(asked + 0.1, waiting)
    assert reducer.chat_state(state) == "needs_input" and state.pending is not None

    # Approved, the tool running, no hook yet: the busy file alone says the prompt is gone.
    state = _state_at(ran - 0.01, approved)
    assert state.pending is None
    assert (reducer.chat_state(state), state.activity) == ("working", "working")


def test_the_busy_written_before_the_prompt_does_not_close_it() -> None:
    """The file said ``busy`` since the prompt was submitted; a read that sees it while
    the ``PermissionRequest`` hook is already spooled (the file is rewritten ~40 ms
    later) must still report the prompt."""
    early_busy = _statuses()[1]
    asked = next(e.at for e in claude_events(CAPTURE) if e.source == "hook:PermissionRequest")
    assert early_busy.statusUpdatedAt / 1000 < asked
    state = _state_at(asked + 0.01, early_busy)
    assert reducer.chat_state(state) == "needs_input" and state.pending is not None
    assert state.pending.tool_name == "Bash"
