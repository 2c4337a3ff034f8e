"""Conformance kit for the Codex adapter: rollout records shaped like 0.169.0 writes them
(docs/providers/codex.md §6; compare tests/live/captures/codex/)."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from agentspool.adapters.common.kits import bash_approval, spool_hooks
from agentspool.adapters.common.stamps import StampClock, iso_stamp

THREAD = "01a229b9-9fc2-7942-86e4-00000000c0de"


def _opening(turn: str) -> list[tuple[str, dict[str, Any]]]:
    """A turn begun: ``task_started``, then its ``turn_context``."""
    return [
        (
            "event_msg",
            {
                "type": "task_started",
                "turn_id": turn,
                "root_turn_id": turn,
                "collaboration_mode_kind": "default",
            },
        ),
        (
            "turn_context",
            {
                "turn_id": turn,
                "root_turn_id": turn,
                "cwd": "/work",
                "approval_policy": "never",
            },
        ),
    ]


def _exchange(turn: str, call: str, meta: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The prompt, an ``exec_command`` call and its output, the reply."""
    return [
        (
            "response_item",
            {
                "type": "message",
                "id": f"msg_u_{turn}",
                "role": "user",
                "content": [{"type": "input_text", "text": "say hi"}],
                **meta,
            },
        ),
        (
            "response_item",
            {
                "type": "function_call",
                "status": "completed",
                "id": f"fc_{call}",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "echo hi"}),
                "call_id": call,
                **meta,
            },
        ),
        (
            "response_item",
            {
                "type": "function_call_output",
                "id": f"fco_{turn}",
                "call_id": call,
                "output": "Chunk ID: 8faacd\nWall time: 0.0000 seconds\n"
                "Process exited with code 0\nOriginal token count: 1\nOutput:\nhi\n",
                **meta,
            },
        ),
        (
            "response_item",
            {
                "type": "message",
                "id": f"msg_a_{turn}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hi"}],
                **meta,
            },
        ),
    ]


def _closing(turn: str) -> list[tuple[str, dict[str, Any]]]:
    """The response priced (``token_usage_record``), then ``task_complete``."""
    return [
        (
            "token_usage_record",
            {
                "thread_id": THREAD,
                "turn_id": turn,
                "session_id": THREAD,
                "root_turn_id": turn,
                "response_id": f"resp_{turn}",
                "usage": {
                    "input_tokens": 120,
                    "cached_input_tokens": 20,
                    "cache_write_input_tokens": 0,
                    "output_tokens": 30,
                    "reasoning_output_tokens": 5,
                    "total_tokens": 150,
                },
            },
        ),
        (
            "event_msg",
            {
                "type": "task_complete",
                "turn_id": turn,
                "root_turn_id": turn,
                "last_agent_message": "hi",
            },
        ),
    ]


class Kit:
    def __init__(self) -> None:
        self._clock = StampClock(0.5)
        self._ordinal = 0

    def _line(self, kind: str, payload: dict[str, Any]) -> str:
        line = {
            "timestamp": self._clock.tick(),
            "ordinal": self._ordinal,
            "type": kind,
            "payload": payload,
        }
        self._ordinal += 1
        return json.dumps(line) + "\n"

    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(
            directory, "sessions", "2026", "11", "29", f"rollout-2026-11-29T23-52-40-{THREAD}.jsonl"
        )
        os.makedirs(os.path.dirname(path), exist_ok=True)
        meta = {
            "session_id": THREAD,
            "id": THREAD,
            "timestamp": iso_stamp(self._clock.at),
            "cwd": "/work",
            "originator": "codex_exec",
            "cli_version": "0.169.0",
            "source": "exec",
            "thread_source": "user",
            "model_provider": "local",
        }
        with open(path, "w") as fh:
            fh.write(self._line("session_meta", meta))
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One exec turn: prompt, an ``exec_command`` ``function_call`` and its
        ``function_call_output`` (joined by ``call_id``), the reply, usage, completion —
        shapes from captures/codex/b_exec_commands."""
        turn = str(uuid.uuid4())
        call = f"call_{uuid.uuid4().hex[:12]}"
        meta = {"internal_chat_message_metadata_passthrough": {"turn_id": turn}}
        records = [*_opening(turn), *_exchange(turn, call, meta), *_closing(turn)]
        data = "".join(self._line(kind, payload) for kind, payload in records).encode()
        with open(path, "ab") as fh:
            fh.write(data)
        return data

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        turn = str(uuid.uuid4())
        common = {
            "session_id": THREAD,
            "turn_id": turn,
            "transcript_path": transcript_path,
            "cwd": "/work",
            "model": "gpt-5-codex",
            "permission_mode": "default",
        }
        command = {"command": "touch approved.txt"}
        asked = {**command, "description": "needs escalation"}
        spool_hooks(
            runtime_dir, run_id, bash_approval(common, "touch a file", command, asked, "call_kit")
        )
