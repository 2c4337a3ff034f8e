"""Conformance kit for ``ScriptedAdapter``."""

from __future__ import annotations

import os
import uuid

from agentspool.adapters import events as ev
from agentspool.adapters.fake import Line, emit, write_line
from agentspool.adapters.seam import Message


class Kit:
    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(directory, "fake-transcript.jsonl")
        write_line(path, Line(event=ev.SessionStarted(epoch="fake-session", at=1.0)))
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        before = os.path.getsize(path)
        turn = uuid.uuid4().hex
        write_line(path, Line(event=ev.TurnStarted(turn_id=turn, at=2.0)))
        write_line(
            path, Line(message=Message(id=f"{turn}-u", kind="text", role="user", text="hello"))
        )
        write_line(
            path, Line(message=Message(id=f"{turn}-a", kind="text", role="assistant", text="hi"))
        )
        write_line(path, Line(event=ev.TurnStopped(turn_id=turn, at=3.0)))
        with open(path, "rb") as fh:
            fh.seek(before)
            return fh.read()

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        emit(
            runtime_dir,
            run_id,
            ev.InputRequested(kind="approval", tool_use_id="t1", tool_name="Bash", at=4.0),
        )
