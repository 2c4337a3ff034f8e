"""Conformance kit for the Claude Code adapter: records shaped like 2.1.328 writes them
(docs/providers/claude-code.md §4; compare tests/live/captures/claude-code/)."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from agentspool.adapters.common.kits import append_jsonl, bash_approval, spool_hooks
from agentspool.adapters.common.stamps import StampClock

SESSION = "5e55a1d0-0000-4000-8000-00000000c0de"


_BASE: dict[str, Any] = {
    "isSidechain": False,
    "sessionId": SESSION,
    "cwd": "/work",
    "version": "2.1.328",
    "userType": "external",
}


class _Turn:
    """The ids one turn's records name each other by."""

    def __init__(self) -> None:
        self.prompt_id, self.user = str(uuid.uuid4()), str(uuid.uuid4())
        self.call, self.result, self.reply = (str(uuid.uuid4()) for _ in range(3))
        self.tool_use_id = "toolu_" + uuid.uuid4().hex[:24]


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 0,
    }


def _prompt(turn: _Turn, stamp: str) -> dict[str, Any]:
    return {
        **_BASE,
        "type": "user",
        "uuid": turn.user,
        "parentUuid": None,
        "promptId": turn.prompt_id,
        "timestamp": stamp,
        "message": {"role": "user", "content": "say hi"},
    }


def _answer(uid: str, parent: str, stamp: str, stop_reason: str, **message: Any) -> dict[str, Any]:
    """An assistant line: one content block of response ``msg_<uid>``."""
    return {
        **_BASE,
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "timestamp": stamp,
        "requestId": "req_" + uid[:8],
        "message": {
            "id": "msg_" + uid[:12],
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "stop_reason": stop_reason,
            **message,
        },
    }


def _tool_call(turn: _Turn, stamp: str) -> dict[str, Any]:
    block = {
        "type": "tool_use",
        "id": turn.tool_use_id,
        "name": "Bash",
        "input": {"command": "echo hi", "description": "Say hi"},
    }
    return _answer(turn.call, turn.user, stamp, "tool_use", content=[block], usage=_usage(8, 20))


def _tool_result(turn: _Turn, stamp: str) -> dict[str, Any]:
    block = {"tool_use_id": turn.tool_use_id, "type": "tool_result", "content": "hi"}
    return {
        **_BASE,
        "type": "user",
        "uuid": turn.result,
        "parentUuid": turn.call,
        "promptId": turn.prompt_id,
        "timestamp": stamp,
        "message": {"role": "user", "content": [{**block, "is_error": False}]},
        "toolUseResult": {
            "stdout": "hi",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
        "sourceToolAssistantUUID": turn.call,
    }


def _reply(turn: _Turn, stamp: str) -> dict[str, Any]:
    content = [{"type": "text", "text": "hi"}]
    return _answer(turn.reply, turn.result, stamp, "end_turn", content=content, usage=_usage(10, 2))


class Kit:
    def __init__(self) -> None:
        self._clock = StampClock(1)
        self._tick = self._clock.tick

    def transcript(self, directory: str, turns: int) -> str:
        path = os.path.join(directory, ".claude", "projects", "-work", f"{SESSION}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(json.dumps({"type": "mode", "mode": "normal", "sessionId": SESSION}) + "\n")
        for _ in range(turns):
            self.append_turn(path)
        return path

    def append_turn(self, path: str) -> bytes:
        """One turn as the TUI writes it: the prompt, an assistant ``tool_use`` line (one
        content block per line), the user ``tool_result`` line that answers it (with
        ``promptId``, ``sourceToolAssistantUUID`` and ``toolUseResult``), the closing
        reply and ``turn_duration`` — shapes from captures/claude-code/tui-permission-approve.
        """
        turn = _Turn()
        lines = [
            {
                "type": "file-history-snapshot",
                "messageId": turn.user,
                "snapshot": {},
                "isSnapshotUpdate": False,
            },
            _prompt(turn, self._tick()),
            _tool_call(turn, self._tick()),
            _tool_result(turn, self._tick()),
            _reply(turn, self._tick()),
            {
                **_BASE,
                "type": "system",
                "subtype": "turn_duration",
                "uuid": str(uuid.uuid4()),
                "parentUuid": turn.reply,
                "timestamp": self._tick(),
                "durationMs": 900,
                "messageCount": 4,
                "isMeta": False,
            },
        ]
        return append_jsonl(path, lines)

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        prompt_id = str(uuid.uuid4())
        common = {
            "session_id": SESSION,
            "transcript_path": transcript_path,
            "cwd": "/work",
            "prompt_id": prompt_id,
            "permission_mode": "default",
        }
        tool_input = {"command": "echo hi > out.txt", "description": "Write a file"}
        hooks = bash_approval(common, "write a file", tool_input, tool_input, "toolu_kit")
        spool_hooks(runtime_dir, run_id, hooks)
