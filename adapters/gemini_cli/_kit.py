"""Conformance kits for the Gemini CLI adapter: chat-file records and hook payloads shaped
as 0.61.0 writes them (docs/providers/gemini-cli.md §3-§4; compare
tests/live/captures/gemini-cli/tui-approve/); ``DocumentKit``, the older releases' chat
file, one JSON document written whole at every change (§7)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

from agentspool.adapters.common.kits import append_jsonl, spool_hooks
from agentspool.adapters.common.stamps import StampClock

SESSION = "dfd823e2-b3e0-43b0-999f-08e94fc1929e"
CONTEXT_ID = "d04923d38bb0f6017037e74183378ef4"
TOKENS = {"input": 120, "output": 12, "cached": 64, "thoughts": 3, "tool": 0, "total": 135}
MODEL = "gemini-3.8-flash"


def _chat_file(directory: str, name: str) -> str:
    """Where the CLI keeps the project's chat files (``<home>/.gemini/tmp/<project>/chats/``)."""
    path = os.path.join(directory, ".gemini", "tmp", "work", "chats", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def _header(start: str) -> dict[str, Any]:
    """The fields a chat file opens with (both formats)."""
    return {
        "sessionId": SESSION,
        "projectHash": "050788ed575b35d092d3fb650453c4c0513305d7a59a948c73ee5e45d88aa4ee",
        "startTime": start,
        "lastUpdated": start,
    }


class Kit:
    def __init__(self) -> None:
        self._clock = StampClock(0.5)
        self._now = self._clock.tick

    def transcript(self, directory: str, turns: int) -> str:
        path = _chat_file(directory, f"session-2026-12-01T10-07-{SESSION[:8]}.jsonl")
        start = self._now()
        meta = {**_header(start), "kind": "main"}
        context = {
            "id": CONTEXT_ID,
            "timestamp": start,
            "type": "user",
            "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}],
        }
        with open(path, "w") as fh:
            fh.write(json.dumps(meta) + "\n")
            fh.write(json.dumps({"$set": {"messages": [context], "lastUpdated": start}}) + "\n")
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn: the prompt, the model's call (its record re-appended whole once the
        call completed, ``toolCalls`` added), the function response, the answer."""
        call_id = f"run_shell_command__run_shell_command_{uuid.uuid4().int % 10**13}_0"
        asked = str(uuid.uuid4())
        prompt_at, asked_at = self._now(), self._now()
        answer: dict[str, Any] = {
            "id": asked,
            "timestamp": asked_at,
            "type": "gemini",
            "content": "",
            "thoughts": [],
            "tokens": TOKENS,
            "model": MODEL,
        }
        response = {"output": "<untrusted_context>\nOutput: hi\n</untrusted_context>"}
        done_at = self._now()
        call = {
            "id": call_id,
            "name": "run_shell_command",
            "args": {"command": "echo hi"},
            "result": [
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": "run_shell_command",
                        "response": response,
                    }
                }
            ],
            "status": "success",
            "timestamp": done_at,
            "resultDisplay": "hi",
            "description": "echo hi",
            "displayName": "Shell",
            "renderOutputAsMarkdown": False,
        }
        records: list[dict[str, Any]] = [
            {
                "id": str(uuid.uuid4()),
                "timestamp": prompt_at,
                "type": "user",
                "content": [{"text": "say hi"}],
            },
            {"$set": {"lastUpdated": prompt_at}},
            answer,
            {"$set": {"lastUpdated": asked_at}},
            {**answer, "toolCalls": [call]},
            {
                "id": str(uuid.uuid4()),
                "timestamp": done_at,
                "type": "user",
                "content": [
                    {
                        "functionResponse": {
                            "id": call_id,
                            "name": "run_shell_command",
                            "response": response,
                        }
                    }
                ],
            },
            {
                "id": str(uuid.uuid4()),
                "timestamp": self._now(),
                "type": "gemini",
                "content": "hi",
                "thoughts": [],
                "tokens": TOKENS,
                "model": MODEL,
            },
        ]
        return append_jsonl(path, records)

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        common = {"session_id": SESSION, "transcript_path": transcript_path, "cwd": "/work"}
        command = {"command": "touch approved.txt"}
        hooks: list[tuple[str, dict[str, Any]]] = [
            ("SessionStart", {"source": "startup"}),
            ("BeforeAgent", {"prompt": "please touch approved.txt"}),
            ("BeforeTool", {"tool_name": "run_shell_command", "tool_input": command}),
            (
                "Notification",
                {
                    "notification_type": "ToolPermission",
                    "message": "Tool Confirm Shell Command requires execution",
                    "details": {
                        "type": "exec",
                        "title": "Confirm Shell Command",
                        "command": "touch approved.txt",
                        "rootCommand": "touch",
                    },
                },
            ),
        ]
        spool_hooks(
            runtime_dir,
            run_id,
            (
                (event, {**common, "hook_event_name": event, "timestamp": self._now(), **extra})
                for event, extra in hooks
            ),
        )


class DocumentKit(Kit):
    """The same turns in the older chat file: ``{sessionId, projectHash, startTime,
    lastUpdated, messages}``, written whole again at each change (§7.1)."""

    def transcript(self, directory: str, turns: int) -> str:
        path = _chat_file(directory, f"session-2026-01-05T09-00-{SESSION[:8]}.json")
        self._write(path, {**_header(self._now()), "messages": []})
        for _ in range(turns):
            self.append_turn(path)
        return path

    def _write(self, path: str, document: dict[str, Any]) -> bytes:
        data = json.dumps(document, indent=2).encode()
        with open(path, "wb") as fh:
            fh.write(data)
        return data

    def append_turn(self, path: str) -> bytes:
        """The turn written whole; what the file gained past the bytes it kept (a cut of
        those bytes is a torn rewrite)."""
        with open(path, "rb") as fh:
            before = fh.read()
        for _ in self.append_turn_in_steps(path):
            pass
        with open(path, "rb") as fh:
            after = fh.read()
        kept = 0
        while kept < min(len(before), len(after)) and before[kept] == after[kept]:
            kept += 1
        return after[kept:]

    def append_turn_in_steps(self, path: str) -> Iterator[None]:
        """One turn as the older CLI writes it, the whole file each time: the prompt; the
        model's answer calling a tool; that record again with its completed call; the
        model's text answer."""
        with open(path, "rb") as fh:
            document = json.loads(fh.read())
        messages: list[dict[str, Any]] = document["messages"]
        call_id = f"run_shell_command-{uuid.uuid4().int % 10**13}-0"
        prompt_at = self._now()
        messages.append(
            {"id": str(uuid.uuid4()), "timestamp": prompt_at, "type": "user", "content": "say hi"}
        )
        self._save(path, document, prompt_at)
        yield
        asked_at = self._now()
        answer: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "timestamp": asked_at,
            "type": "gemini",
            "content": "",
            "thoughts": [
                {"subject": "Greeting", "description": "Run echo.", "timestamp": asked_at}
            ],
            "tokens": TOKENS,
            "model": MODEL,
        }
        messages.append(answer)
        self._save(path, document, asked_at)
        yield
        done_at = self._now()
        response = {
            "functionResponse": {
                "id": call_id,
                "name": "run_shell_command",
                "response": {"output": "hi"},
            }
        }
        call = {
            "id": call_id,
            "name": "run_shell_command",
            "args": {"command": "echo hi"},
            "result": [response],
            "status": "success",
            "timestamp": done_at,
            "resultDisplay": "hi",
            "displayName": "Shell",
            "description": "Runs a shell command.",
            "renderOutputAsMarkdown": False,
        }
        messages[-1] = {**answer, "toolCalls": [call]}
        self._save(path, document, done_at)
        yield
        said_at = self._now()
        messages.append(
            {
                "id": str(uuid.uuid4()),
                "timestamp": said_at,
                "type": "gemini",
                "content": "hi",
                "thoughts": [],
                "tokens": TOKENS,
                "model": MODEL,
            }
        )
        self._save(path, document, said_at)
        yield

    def _save(self, path: str, document: dict[str, Any], at: str) -> None:
        document["lastUpdated"] = at
        self._write(path, document)
