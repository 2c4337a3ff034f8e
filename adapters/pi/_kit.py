"""Conformance kit for the Pi adapter: session-file entries and extension records shaped
as 0.73.1 and agentspool's extension write them (docs/providers/pi.md §2-§3; compare
tests/live/captures/pi/tui-approve/)."""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from agentspool.adapters.common.kits import append_jsonl, spool_hooks
from agentspool.adapters.common.stamps import iso_stamp

SESSION = "01a237c6-8340-74df-838b-c2c9167438ce"
CWD = "/work"
USAGE = {"input": 56, "output": 12, "cacheRead": 64, "cacheWrite": 0, "totalTokens": 132}


class Kit:
    def __init__(self) -> None:
        self._clock = time.time() - 600
        self._last: str | None = None
        self._prompts = 0

    def _entry(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._clock += 0.25
        entry_id = uuid.uuid4().hex[:8]
        entry = {
            "type": kind,
            "id": entry_id,
            "parentId": self._last,
            "timestamp": iso_stamp(self._clock),
            **fields,
        }
        self._last = entry_id
        return entry

    def _message(self, role: str, **fields: Any) -> dict[str, Any]:
        message = {"role": role, **fields, "timestamp": int(self._clock * 1000)}
        return self._entry("message", message=message)

    def _reply(self, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return self._message(
            "assistant",
            content=content,
            api="openai-completions",
            provider="mock",
            model="mock-model",
            usage=USAGE,
            stopReason=stop,
            responseId=f"chatcmpl-{uuid.uuid4().hex[:8]}",
        )

    def transcript(self, directory: str, turns: int) -> str:
        folder = os.path.join(directory, ".pi", "agent", "sessions", "--work--")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"2026-12-02T17-21-26-337Z_{SESSION}.jsonl")
        header = {
            "type": "session",
            "version": 3,
            "id": SESSION,
            "timestamp": iso_stamp(self._clock),
            "cwd": CWD,
        }
        with open(path, "w") as fh:
            fh.write(json.dumps(header) + "\n")
        append_jsonl(
            path,
            [
                self._entry("model_change", provider="mock", modelId="mock-model"),
                self._entry("thinking_level_change", thinkingLevel="off"),
            ],
        )
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: the prompt, a ``bash`` call (approved and run), the answer."""
        self._prompts += 1
        call = f"call_{uuid.uuid4().hex[:8]}"
        command = {"command": "echo hi"}
        records = [
            self._message("user", content=[{"type": "text", "text": f"say hi {self._prompts}"}]),
            self._reply(
                [{"type": "toolCall", "id": call, "name": "bash", "arguments": command}], "toolUse"
            ),
            self._message(
                "toolResult",
                toolCallId=call,
                toolName="bash",
                content=[{"type": "text", "text": "hi\n"}],
                isError=False,
            ),
            self._reply([{"type": "text", "text": "hi"}], "stop"),
        ]
        return append_jsonl(path, records)

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        """The extension's records of a prompt whose ``bash`` call waits on its dialog."""
        self._clock += 0.25
        call = f"call_{uuid.uuid4().hex[:8]}"
        command = {"command": "echo hi > out.txt"}
        common = {"sessionId": SESSION}
        start = {
            "reason": "startup",
            "previousSessionFile": "",
            "sessionFile": transcript_path,
            "cwd": CWD,
            "pid": 0,
            "start": 0,
        }
        tool = {"toolCallId": call, "toolName": "bash"}
        spool_hooks(
            runtime_dir,
            run_id,
            [
                ("session_start", {**common, **start}),
                ("agent_start", common),
                ("tool_execution_start", {**common, **tool, "args": command}),
                ("permission_asked", {**common, **tool, "input": command}),
            ],
        )
