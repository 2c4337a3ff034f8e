"""Core's read path, tested on the scripted fake (no real transcript needed)."""

import os

from agentspool.adapters.fake import Line, ScriptedAdapter, emit, write_line
from agentspool.core import events as ev
from agentspool.core.reader import read_run
from agentspool.core.seam import Message
from agentspool.spool.layout import ensure_run_dir


def _transcript(tmp_path: object, *lines: Line) -> str:
    path = os.path.join(str(tmp_path), "t.jsonl")
    for line in lines:
        write_line(path, line)
    return path


def test_live_read_forwards_pending_approval_unchanged(tmp_path: object) -> None:
    runtime = os.path.join(str(tmp_path), "rt")
    ensure_run_dir(runtime, "r")
    path = _transcript(tmp_path, Line(event=ev.TurnStarted(turn_id="t", at=1)))
    emit(
        runtime,
        "r",
        ev.InputRequested(
            kind="approval",
            turn_id="t",
            tool_use_id="x",
            tool_name="Bash",
            tool_input={"command": "ls"},
            at=2,
        ),
    )
    chat = read_run(ScriptedAdapter(), "r", runtime, path)
    assert chat.state == "needs_input"
    assert chat.pending_approval is not None
    assert (chat.pending_approval.tool_name, chat.pending_approval.tool_input) == (
        "Bash",
        {"command": "ls"},
    )


def test_ended_run_reads_ended_whatever_transcript_and_spool_say(tmp_path: object) -> None:
    runtime = os.path.join(str(tmp_path), "rt")
    ensure_run_dir(runtime, "r")
    path = _transcript(
        tmp_path,
        Line(event=ev.TurnStarted(turn_id="t", at=1)),
        Line(message=Message(id="m", kind="text", role="user", text="go")),
    )
    emit(runtime, "r", ev.InputRequested(kind="question", turn_id="t", at=2))
    chat = read_run(ScriptedAdapter(), "r", runtime, path, ended=True)
    assert chat.state == "ended"
    assert chat.pending_dialog is None and chat.pending_approval is None
    assert [m.text for m in chat.messages] == ["go"]
    assert chat.evidence[0].source == "core:lifecycle"


def test_ended_run_forwards_a_transcript_dialog_unchanged(tmp_path: object) -> None:
    from agentspool.core.seam import PendingDialog

    dialog = PendingDialog(kind="question", tool_use_id="q", prompt="Which?")
    path = _transcript(
        tmp_path,
        Line(event=ev.TurnStarted(turn_id="t", at=1)),
        Line(
            event=ev.InputRequested(
                kind="question", turn_id="t", tool_use_id="q", dialog=dialog, at=2
            )
        ),
    )
    chat = read_run(ScriptedAdapter(), "r", "", path, ended=True)
    assert (chat.state, chat.pending_dialog) == ("ended", dialog)
