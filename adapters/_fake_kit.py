"""Conformance kit for ``ScriptedAdapter``."""

from __future__ import annotations

import os
import uuid
from typing import Any

from agentspool.adapters.fake import Line, emit, locate, write_line
from agentspool.core import events as ev
from agentspool.core.seam import Message, Usage


class Kit:
    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(directory, "fake-transcript.jsonl")
        write_line(path, Line(event=ev.SessionStarted(epoch="fake-session", at=1.0)))
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: prompt, a tool call and its result, the reply. The text before the
        call and the call are one API message (``message_id``) that repeats its usage on
        both records, as a provider's content blocks can: it counts once."""
        before = os.path.getsize(path)
        turn = uuid.uuid4().hex
        call = f"call-{turn}"
        usage = Usage(input_tokens=12, output_tokens=3, cached_input_tokens=4)
        shell: dict[str, Any] = {"tool_name": "Bash", "tool_use_id": call}
        first: dict[str, Any] = {"message_id": f"{turn}-m1", "usage": usage}
        lines = [
            Line(event=ev.TurnStarted(turn_id=turn, at=2.0)),
            Line(message=Message(id=f"{turn}-u", kind="text", role="user", text="hello")),
            Line(
                message=Message(
                    id=f"{turn}-t", kind="text", role="assistant", text="checking", **first
                )
            ),
            Line(
                message=Message(
                    id=f"{turn}-c",
                    kind="tool_call",
                    role="assistant",
                    tool_input={"command": "echo hi"},
                    presentation="shell",
                    **shell,
                    **first,
                )
            ),
            Line(event=ev.ToolStarted(turn_id=turn, tool_use_id=call, at=2.1)),
            Line(
                message=Message(id=f"{turn}-r", kind="tool_result", role="tool", text="hi", **shell)
            ),
            Line(event=ev.ToolFinished(turn_id=turn, tool_use_id=call, at=2.2)),
            Line(
                message=Message(
                    id=f"{turn}-a",
                    kind="text",
                    role="assistant",
                    text="hi",
                    message_id=f"{turn}-m2",
                    usage=Usage(input_tokens=20, output_tokens=1),
                )
            ),
            Line(event=ev.TurnStopped(turn_id=turn, at=3.0)),
        ]
        for line in lines:
            write_line(path, line)
        with open(path, "rb") as fh:
            fh.seek(before)
            return fh.read()

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        locate(runtime_dir, run_id, transcript_path)
        emit(
            runtime_dir,
            run_id,
            ev.InputRequested(kind="approval", tool_use_id="t1", tool_name="Bash", at=4.0),
        )
