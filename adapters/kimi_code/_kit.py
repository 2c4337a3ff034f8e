"""Conformance kit for the Kimi Code adapter: wire records and hook payloads shaped as
2.1.0 writes them (docs/providers/kimi-code.md §2-§3; compare
tests/live/captures/kimi-code/tui-session/)."""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from agentspool.spool.layout import run_dir
from agentspool.spool.write import append_record

SESSION = "session_e0834718-df2b-4ad6-9a00-b7633c9c29ad"
USAGE = {"inputOther": 56, "output": 12, "inputCacheRead": 64, "inputCacheCreation": 0}


class Kit:
    def __init__(self) -> None:
        self._clock = (time.time() - 600) * 1000
        self._turns = 0

    def _at(self) -> int:
        self._clock += 250
        return int(self._clock)

    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(
            directory, ".kimi-code", "sessions", "wd_work_e5246656a1ce", SESSION, "agents",
            "main", "wire.jsonl",
        )  # fmt: skip
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            meta = {"type": "metadata", "protocol_version": "1.5", "created_at": self._at()}
            fh.write(json.dumps(meta) + "\n")
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: the prompt, a shell call and its result, the answer."""
        turn, self._turns = self._turns, self._turns + 1
        call = f"call_{uuid.uuid4().hex[:8]}"
        prompt = f"msg_{uuid.uuid4().hex[:26].upper()}"
        step, call_uuid = str(uuid.uuid4()), str(uuid.uuid4())

        def loop(event: dict[str, Any]) -> dict[str, Any]:
            return {"type": "context.append_loop_event", "agentId": "main", "event": event}

        usage: dict[str, Any] = {"type": "usage.record", "agentId": "main"}
        usage |= {"model": "__kimi_env_model__"}
        usage |= {"usage": USAGE, "usageScope": "turn"}
        records: list[dict[str, Any]] = [
            {
                "type": "turn.prompt",
                "agentId": "main",
                "input": [{"type": "text", "text": "please run echo hi"}],
                "origin": {"kind": "user"},
                "promptId": prompt,
                "turnId": turn,
            },
            {
                "type": "context.append_message",
                "agentId": "main",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "please run echo hi"}],
                    "id": prompt,
                    "toolCalls": [],
                    "origin": {"kind": "user"},
                },
            },
            usage,
            loop(
                {
                    "type": "tool.call",
                    "uuid": call_uuid,
                    "turnId": str(turn),
                    "step": 1,
                    "stepUuid": step,
                    "toolCallId": call,
                    "name": "Bash",
                    "args": {"command": "echo hi"},
                }
            ),
            loop(
                {
                    "type": "tool.result",
                    "parentUuid": call_uuid,
                    "toolCallId": call,
                    "result": {"output": "hi\n", "durationMs": 12},
                }
            ),
            usage,
            loop(
                {
                    "type": "content.part",
                    "uuid": str(uuid.uuid4()),
                    "turnId": str(turn),
                    "step": 2,
                    "stepUuid": str(uuid.uuid4()),
                    "part": {"type": "text", "text": "Done."},
                }
            ),
            {"type": "turn.ended", "agentId": "main", "turnId": turn, "reason": "completed"},
        ]
        data = "".join(json.dumps({**r, "time": self._at()}) + "\n" for r in records).encode()
        with open(path, "ab") as fh:
            fh.write(data)
        return data

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        """The hooks of an approval; no payload names the wire, the session id and the
        CLI's home do: the home is the kit's, named where a reader finds it (this
        process's ``KIMI_CODE_HOME``; the suite's own fixtures restore it)."""
        home = transcript_path.split(os.sep + "sessions" + os.sep, maxsplit=1)[0]
        os.environ["KIMI_CODE_HOME"] = home
        common = {"session_id": SESSION, "cwd": "/work", "client_type": "kimi_code_cli"}
        approval = {
            "id": f"approval_{uuid.uuid4()}",
            "agent_id": "main",
            "turn_id": 7,
            "tool_call_id": "call_open",
            "tool_name": "Bash",
            "action": "Running: echo hi > out.txt",
            "display": {"kind": "command", "command": "echo hi > out.txt", "cwd": "/work"},
            "tool_input": {"command": "echo hi > out.txt"},
        }
        hooks: list[tuple[str, dict[str, Any]]] = [
            ("SessionStart", {"source": "startup", "model": "mock-model", "profile": "agent"}),
            ("PermissionRequest", {"session_title": "run it", **approval}),
        ]
        for event, extra in hooks:
            payload = {"hook_event_name": event, **common, **extra}
            append_record(run_dir(runtime_dir, run_id), event, json.dumps(payload).encode())
