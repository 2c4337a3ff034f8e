"""Conformance kit for the Copilot CLI adapter: ``events.jsonl`` records and hook payloads
shaped as 1.0.102 writes them (docs/providers/copilot.md §2-§3; compare
tests/live/captures/copilot/tui-approve/)."""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from agentspool.spool.layout import run_dir
from agentspool.spool.write import append_record

SESSION = "18bb5f16-097e-49c1-ac89-9e63848c335a"
CWD = "/work"
USAGE = {"model": "mock-model", "inputTokens": 120, "outputTokens": 12, "cacheReadTokens": 64}
USAGE_RECORD = {**USAGE, "cacheWriteTokens": 0, "isByok": True, "providerType": "openai"}


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z"


class Kit:
    def __init__(self) -> None:
        self._clock = time.time() - 600
        self._last = ""
        self._prompts = 0

    def _record(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        self._clock += 0.25
        record_id = str(uuid.uuid4())
        record = {
            "type": kind,
            "data": data,
            "id": record_id,
            "timestamp": _stamp(self._clock),
            "parentId": self._last or None,
        }
        self._last = record_id
        return record

    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(directory, ".copilot", "session-state", SESSION, "events.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        start = self._record(
            "session.start",
            {
                "sessionId": SESSION,
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": "1.0.102",
                "startTime": _stamp(self._clock),
                "selectedModel": "mock-model",
                "context": {"cwd": CWD, "gitRoot": CWD, "branch": "master"},
                "alreadyInUse": False,
                "remoteSteerable": False,
            },
        )
        with open(path, "w") as fh:
            fh.write(json.dumps(start) + "\n")
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: the prompt, a model call asking for ``bash`` (approved and run), the
        answer."""
        self._prompts += 1
        interaction, call = str(uuid.uuid4()), f"call_{uuid.uuid4().hex[:8]}"
        command = {"command": "echo hi", "description": "Say hi"}
        records = [
            self._record(
                "user.message",
                {
                    "content": f"say hi {self._prompts}",
                    "messageId": str(uuid.uuid4()),
                    "interactionId": interaction,
                },
            ),
            *self._model_call(
                "0", interaction, "", [{"toolCallId": call, "name": "bash", "arguments": command}]
            ),
            self._record(
                "tool.execution_start",
                {"toolCallId": call, "toolName": "bash", "arguments": command, "turnId": "0"},
            ),
            self._record(
                "permission.requested",
                {
                    "requestId": str(uuid.uuid4()),
                    "permissionRequest": {
                        "kind": "shell",
                        "toolCallId": call,
                        "fullCommandText": "echo hi",
                    },
                    "agentMode": "interactive",
                    "permissionMode": "manual",
                },
            ),
            self._record(
                "permission.completed",
                {
                    "requestId": str(uuid.uuid4()),
                    "toolCallId": call,
                    "result": {"kind": "approved"},
                    "decisionSource": "human_response",
                },
            ),
            self._record(
                "tool.execution_complete",
                {"toolCallId": call, "success": True, "result": {"content": "hi"}, "turnId": "0"},
            ),
            self._record("assistant.turn_end", {"turnId": "0"}),
            *self._model_call("1", interaction, "hi", []),
            self._record("assistant.turn_end", {"turnId": "1"}),
        ]
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        with open(path, "ab") as fh:
            fh.write(data)
        return data

    def _model_call(
        self, turn: str, interaction: str, content: str, requests: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """One model call of a turn: its start, its usage, its message (``content``,
        asking for the tools ``requests`` names)."""
        return [
            self._record("assistant.turn_start", {"turnId": turn, "interactionId": interaction}),
            self._record("session.usage_record", {"usage": USAGE_RECORD}),
            self._record(
                "assistant.message",
                {
                    "messageId": str(uuid.uuid4()),
                    "model": "mock-model",
                    "content": content,
                    "toolRequests": requests,
                    "interactionId": interaction,
                    "turnId": turn,
                    "apiCallId": f"chatcmpl-{uuid.uuid4().hex[:8]}",
                },
            ),
        ]

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        self._clock += 0.25
        common = {"sessionId": SESSION, "cwd": CWD}
        # The completed turn's agentStop names the transcript (the only hook that does).
        stop = {"transcriptPath": transcript_path, "stopReason": "end_turn"}
        hooks: list[tuple[str, dict[str, Any]]] = [
            ("agentStop", {**stop, "stop_hook_active": False}),
            ("userPromptSubmitted", {"prompt": "please write out.txt"}),
            (
                "permissionRequest",
                {
                    "hookName": "permissionRequest",
                    "toolName": "bash",
                    "toolInput": {"command": "echo hi > out.txt"},
                    "permissionSuggestions": [],
                },
            ),
        ]
        for event, extra in hooks:
            payload = {**common, "timestamp": int(time.time() * 1000), **extra}
            append_record(run_dir(runtime_dir, run_id), event, json.dumps(payload).encode())
