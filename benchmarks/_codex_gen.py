"""Generate a large Codex rollout with the real record shapes (0.169.0, docs/providers/codex.md §6).

Per turn, the records and sizes the real CLI writes (tests/live/captures/codex/):
settings and turn-context snapshots (~2.5-2.8 KB each), the prompt, a reasoning item, a
command call whose output is repeated by its ``item_completed``, usage records, the
answer. Tool output is sized like a coding session (multi-KB).
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

THREAD = "01a229c1-2e8b-79d3-86e5-00000000beef"


def _stamp(i: int) -> str:
    return f"2026-11-29T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"


_SETTINGS = "workspace-write read-only network disabled /srv/project " * 80


class _Writer:
    def __init__(self) -> None:
        self.ordinal = 0

    def line(self, i: int, kind: str, payload: dict[str, object], **extra: object) -> str:
        record = {
            "timestamp": _stamp(i),
            "ordinal": self.ordinal,
            "type": kind,
            "payload": payload,
            **extra,
        }
        self.ordinal += 1
        return json.dumps(record, separators=(",", ":")) + "\n"


def _meta(writer: _Writer) -> str:
    return writer.line(
        0,
        "session_meta",
        {
            "session_id": THREAD,
            "id": THREAD,
            "timestamp": _stamp(0),
            "cwd": "/srv/project",
            "originator": "codex-tui",
            "cli_version": "0.169.0",
            "source": "cli",
            "thread_source": "user",
            "model_provider": "local",
            "history_mode": "paginated",
            "base_instructions": {"text": "You are Codex. " * 2000},
        },
    )


def _opening(writer: _Writer, i: int, turn: str) -> list[str]:
    """The settings snapshot, ``task_started`` and the turn context."""
    return [
        writer.line(
            i,
            "event_msg",
            {
                "type": "thread_settings_applied",
                "thread_id": THREAD,
                "thread_settings": {
                    "model": "gpt-5-codex",
                    "approval_policy": "on-request",
                    # Real snapshots repeat the whole permission profile: ~2.5 KB.
                    "permission_profile": _SETTINGS[:2300],
                },
            },
        ),
        writer.line(
            i,
            "event_msg",
            {
                "type": "task_started",
                "turn_id": turn,
                "root_turn_id": turn,
                "started_at": i,
                "model_context_window": 258400,
                "collaboration_mode_kind": "default",
                "turn_attribution": {"turn_id": turn, "turn_trigger": "user"},
            },
        ),
        writer.line(
            i,
            "turn_context",
            {
                "turn_id": turn,
                "root_turn_id": turn,
                "cwd": "/srv/project",
                "approval_policy": "on-request",
                "model": "gpt-5-codex",
                "summary": "auto",
                # Real turn contexts carry the sandbox policy and collaboration mode:
                # ~2.8 KB per turn.
                "sandbox_policy": _SETTINGS[:2500],
            },
        ),
    ]


def _prompt(
    writer: _Writer,
    i: int,
    turn: str,
    *,
    words: str,
    passthrough: dict[str, Any],
    meta: dict[str, Any],
) -> list[str]:
    """The prompt (its response item and UI event) and the reasoning."""
    return [
        writer.line(
            i,
            "response_item",
            {
                "type": "message",
                "id": f"msg_u{i}",
                "role": "user",
                "content": [{"type": "input_text", "text": f"please {words}"}],
                **passthrough,
            },
            **meta,
        ),
        writer.line(
            i,
            "event_msg",
            {
                "type": "item_completed",
                "thread_id": THREAD,
                "turn_id": turn,
                "item": {
                    "type": "UserMessage",
                    "id": str(uuid.uuid4()),
                    "content": [{"type": "text", "text": words}],
                },
            },
        ),
        writer.line(
            i,
            "response_item",
            {
                "type": "reasoning",
                "id": f"rs_{i}",
                "summary": [{"type": "summary_text", "text": words}],
                "encrypted_content": "gAAAA" + "x" * 2000,
                **passthrough,
            },
            **meta,
        ),
    ]


def _command(
    writer: _Writer,
    i: int,
    turn: str,
    *,
    call: str,
    words: str,
    passthrough: dict[str, Any],
    meta: dict[str, Any],
    usage: dict[str, int],
) -> list[str]:
    """An ``exec_command`` call, its response priced, its run and its output."""
    return [
        writer.line(
            i,
            "response_item",
            {
                "type": "function_call",
                "status": "completed",
                "id": f"fc_{call}",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": f"grep -r {words[:30]!r} ."}),
                "call_id": call,
                **passthrough,
            },
            **meta,
        ),
        writer.line(
            i,
            "token_usage_record",
            {
                "thread_id": THREAD,
                "turn_id": turn,
                "session_id": THREAD,
                "root_turn_id": turn,
                "response_id": f"resp_{i}_a",
                "usage": usage,
                "turn_token_usage": usage,
                "thread_token_usage": usage,
            },
        ),
        writer.line(
            i,
            "event_msg",
            {
                "type": "item_completed",
                "thread_id": THREAD,
                "turn_id": turn,
                "item": {
                    "type": "CommandExecution",
                    "id": call,
                    "command": ["/bin/bash", "-lc", "grep"],
                    "status": "completed",
                    "exit_code": 0,
                    "aggregated_output": words * 20,
                },
            },
        ),
        writer.line(
            i,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": "Process exited with code 0\nOutput:\n" + words * 20,
                **passthrough,
            },
            **meta,
        ),
    ]


def _closing(
    writer: _Writer,
    i: int,
    turn: str,
    *,
    words: str,
    passthrough: dict[str, Any],
    meta: dict[str, Any],
    usage: dict[str, int],
) -> list[str]:
    """The answer, its usage (record and ``token_count``), ``task_complete``."""
    return [
        writer.line(
            i,
            "response_item",
            {
                "type": "message",
                "status": "completed",
                "id": f"msg_a{i}",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done. " + words[:200]}],
                **passthrough,
            },
            **meta,
        ),
        writer.line(
            i,
            "token_usage_record",
            {
                "thread_id": THREAD,
                "turn_id": turn,
                "session_id": THREAD,
                "root_turn_id": turn,
                "response_id": f"resp_{i}_b",
                "usage": usage,
            },
        ),
        writer.line(
            i,
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage},
                "rate_limits": {"primary": {"used_percent": 1.0, "window_minutes": 300}},
            },
        ),
        writer.line(
            i,
            "event_msg",
            {
                "type": "task_complete",
                "turn_id": turn,
                "root_turn_id": turn,
                "last_agent_message": "Done.",
                "started_at": i,
                "completed_at": i + 1,
                "duration_ms": 1000,
            },
        ),
    ]


def turn_lines(writer: _Writer, i: int, rng: random.Random) -> str:
    turn = str(uuid.UUID(int=rng.getrandbits(128)))
    call = f"call_{i}_0"
    words = " ".join(
        rng.choice(["alpha", "beta", "gamma", "delta", "file", "test", "fix"])
        for _ in range(rng.randint(20, 120))
    )
    passthrough = {"internal_chat_message_metadata_passthrough": {"turn_id": turn}}
    meta = {"metadata": {"history_sequence": i, "sampled_through_sequence": i}}
    usage = {
        "input_tokens": rng.randint(1000, 60000),
        "cached_input_tokens": rng.randint(0, 900),
        "cache_write_input_tokens": 0,
        "output_tokens": rng.randint(10, 900),
        "reasoning_output_tokens": rng.randint(0, 300),
        "total_tokens": 0,
    }
    return "".join(
        [
            *_opening(writer, i, turn),
            *_prompt(writer, i, turn, words=words, passthrough=passthrough, meta=meta),
            *_command(
                writer,
                i,
                turn,
                call=call,
                words=words,
                passthrough=passthrough,
                meta=meta,
                usage=usage,
            ),
            *_closing(
                writer, i, turn, words=words, passthrough=passthrough, meta=meta, usage=usage
            ),
        ]
    )


def write(path: str, size: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    writer = _Writer()
    with open(path, "w") as fh:
        written = fh.write(_meta(writer))
        i = 1
        while written < size:
            written += fh.write(turn_lines(writer, i, rng))
            i += 1
    return written


def extra_turn(seed: int = 99) -> bytes:
    writer = _Writer()
    writer.ordinal = 10**7 + seed
    return (
        turn_lines(writer, 10**6 + seed, random.Random(seed)).encode()[:2000].rsplit(b"\n", 1)[0]
        + b"\n"
    )
