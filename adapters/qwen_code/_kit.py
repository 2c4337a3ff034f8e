"""Conformance kit for the Qwen Code adapter: chat-file records and hook payloads shaped
as 0.24.4 writes them (docs/providers/qwen-code.md §2-§3; compare
tests/live/captures/qwen-code/tui-session/)."""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from agentspool.spool.layout import run_dir
from agentspool.spool.write import append_record

SESSION = "d066f0b4-c14d-4a70-a0d6-290230346598"
USAGE = {
    "promptTokenCount": 120,
    "candidatesTokenCount": 12,
    "thoughtsTokenCount": 0,
    "totalTokenCount": 132,
    "cachedContentTokenCount": 64,
}
COMMAND = {"command": "echo hi > out.txt", "description": "Run a command"}


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z"


class Kit:
    def __init__(self) -> None:
        self._clock = time.time() - 600
        self._parent: str | None = None

    def _record(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._clock += 0.5
        record_id = str(uuid.uuid4())
        record = {
            "uuid": record_id,
            "parentUuid": self._parent,
            "sessionId": SESSION,
            "timestamp": _stamp(self._clock),
            "type": kind,
            "cwd": "/work",
            "version": "0.24.4",
            "gitBranch": "master",
            **fields,
        }
        self._parent = record_id
        return record

    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(directory, ".qwen", "projects", "-work", "chats", f"{SESSION}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").close()
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: the prompt, the model's shell call, its result, the answer."""
        call_id = f"call_{uuid.uuid4().hex[:8]}_0"
        call = {"functionCall": {"id": call_id, "name": "run_shell_command", "args": COMMAND}}
        response = {"id": call_id, "name": "run_shell_command", "response": {"output": "hi"}}
        model = {"model": "mock-model", "usageMetadata": USAGE}
        records = [
            self._record(
                "user",
                provenance="real_user",
                message={"role": "user", "parts": [{"text": "please run echo hi"}]},
            ),
            self._record(
                "assistant",
                provenance="assistant_output",
                message={"role": "model", "parts": [call]},
                **model,
            ),
            self._record(
                "tool_result",
                provenance="tool_result",
                message={"role": "user", "parts": [{"functionResponse": response}]},
                toolCallResult={
                    "callId": call_id,
                    "status": "success",
                    "resultDisplay": "hi",
                    "executionStatus": "success",
                },
            ),
            self._record(
                "assistant",
                provenance="assistant_output",
                message={"role": "model", "parts": [{"text": "The file was written."}]},
                **model,
            ),
        ]
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        with open(path, "ab") as fh:
            fh.write(data)
        return data

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        common = {
            "session_id": SESSION,
            "transcript_path": transcript_path,
            "cwd": "/work",
            "permission_mode": "default",
        }
        prompt_id = f"{SESSION}########7"
        hooks: list[tuple[str, dict[str, Any]]] = [
            ("SessionStart", {"source": "startup", "model": "mock-model"}),
            (
                "UserPromptSubmit",
                {"prompt_id": prompt_id, "prompt": "run it", "submitted_prompt": "run it"},
            ),
            (
                "PermissionRequest",
                {"prompt_id": prompt_id, "tool_name": "run_shell_command", "tool_input": COMMAND},
            ),
        ]
        for event, extra in hooks:
            self._clock += 0.5
            stamp = _stamp(self._clock)
            payload = {**common, "hook_event_name": event, "timestamp": stamp, **extra}
            append_record(run_dir(runtime_dir, run_id), event, json.dumps(payload).encode())
