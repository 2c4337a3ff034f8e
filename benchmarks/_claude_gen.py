"""Generate a large Claude Code transcript with the real record shapes (2.1.328, §9)."""

from __future__ import annotations

import json
import random
import uuid

SESSION = "b3c4d5e6-0000-4000-8000-0000000000be"


def _stamp(i: int) -> str:
    return f"2026-11-29T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"


def turn_lines(i: int, rng: random.Random) -> list[dict[str, object]]:
    prompt_id, user = (
        str(uuid.UUID(int=rng.getrandbits(128))),
        str(uuid.UUID(int=rng.getrandbits(128))),
    )
    a1, a2, tr, a3 = (str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(4))
    base = {
        "isSidechain": False,
        "sessionId": SESSION,
        "cwd": "/work/project",
        "version": "2.1.328",
        "gitBranch": "main",
        "userType": "external",
        "entrypoint": "cli",
    }
    words = " ".join(
        rng.choice(["alpha", "beta", "gamma", "delta", "file", "test", "fix"])
        for _ in range(rng.randint(20, 120))
    )
    msg_id = f"msg_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
    usage = {
        "input_tokens": rng.randint(10, 500),
        "output_tokens": rng.randint(10, 900),
        "cache_creation_input_tokens": rng.randint(0, 2000),
        "cache_read_input_tokens": rng.randint(0, 50000),
        "service_tier": "standard",
    }
    tool_id = f"toolu_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
    lines: list[dict[str, object]] = [
        {
            "type": "file-history-snapshot",
            "messageId": user,
            "snapshot": {"trackedFileBackups": {}, "timestamp": _stamp(i)},
            "isSnapshotUpdate": False,
        },
        {
            **base,
            "type": "user",
            "uuid": user,
            "parentUuid": None,
            "promptId": prompt_id,
            "timestamp": _stamp(i),
            "permissionMode": "default",
            "promptSource": "typed",
            "message": {"role": "user", "content": f"please {words}"},
        },
    ]
    for kind in ("environment", "model", "deferred_tools_delta", "skill_listing", "date"):
        lines.append(
            {
                **base,
                "type": "attachment",
                "uuid": str(uuid.uuid4()),
                "parentUuid": user,
                "timestamp": _stamp(i),
                "attachment": {"type": kind, "rendered": words * 2},
            }
        )
    lines.append(
        {
            "type": "api-request-blob",
            "hash": uuid.uuid4().hex,
            "message": {"role": "user", "content": [{"type": "text", "text": words * 8}]},
        }
    )
    if i % 10 == 0:
        lines.append(
            {
                "type": "api-request-shape",
                "shapeHash": uuid.uuid4().hex,
                "shape": {"system": "You are Claude Code. " * 3000},
            }
        )
    lines.append(
        {
            "type": "api-request",
            "id": str(uuid.uuid4()),
            "querySource": "repl_main_thread",
            "params": {"model": "claude-sonnet-4-5", "max_tokens": 32000},
            "tail": [uuid.uuid4().hex for _ in range(8)],
        }
    )
    lines.append(
        {
            **base,
            "type": "assistant",
            "uuid": a1,
            "parentUuid": user,
            "timestamp": _stamp(i),
            "requestId": "req_x",
            "apiBlockIndex": 0,
            "message": {
                "id": msg_id,
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "type": "message",
                "stop_reason": "tool_use",
                "usage": usage,
                "content": [{"type": "text", "text": words}],
            },
        }
    )
    lines.append(
        {
            **base,
            "type": "assistant",
            "uuid": a2,
            "parentUuid": a1,
            "timestamp": _stamp(i),
            "requestId": "req_x",
            "apiBlockIndex": 1,
            "message": {
                "id": msg_id,
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "type": "message",
                "stop_reason": "tool_use",
                "usage": usage,
                "content": [
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Bash",
                        "input": {"command": f"grep -r {words[:40]!r} .", "description": "Search"},
                    }
                ],
            },
        }
    )
    for kind in ("last-prompt", "mode", "permission-mode", "atis-latch"):
        lines.append({"type": kind, "sessionId": SESSION, "leafUuid": a2})
    lines.append(
        {
            **base,
            "type": "user",
            "uuid": tr,
            "parentUuid": a2,
            "promptId": prompt_id,
            "timestamp": _stamp(i),
            "sourceToolAssistantUUID": a2,
            "toolUseResult": {"stdout": words * 20, "stderr": "", "interrupted": False},
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": tool_id,
                        "type": "tool_result",
                        "content": words * 20,
                        "is_error": False,
                    }
                ],
            },
        }
    )
    msg2 = f"msg_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
    lines.append(
        {
            **base,
            "type": "assistant",
            "uuid": a3,
            "parentUuid": tr,
            "timestamp": _stamp(i),
            "requestId": "req_y",
            "message": {
                "id": msg2,
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "type": "message",
                "stop_reason": "end_turn",
                "usage": usage,
                "content": [{"type": "text", "text": "Done. " + words[:200]}],
            },
        }
    )
    lines.append(
        {
            **base,
            "type": "system",
            "subtype": "stop_hook_summary",
            "uuid": str(uuid.uuid4()),
            "parentUuid": a3,
            "timestamp": _stamp(i),
            "hookCount": 1,
            "hookInfos": [{"command": "x", "durationMs": 9}],
        }
    )
    lines.append(
        {
            **base,
            "type": "system",
            "subtype": "turn_duration",
            "uuid": str(uuid.uuid4()),
            "parentUuid": a3,
            "timestamp": _stamp(i),
            "durationMs": 4000,
            "isMeta": False,
        }
    )
    return lines


# Key order of 2.1.328's records, as seen in tests/live/captures/claude-code/.
_LEADING = {
    "user": ("parentUuid", "isSidechain", "promptId", "type", "message"),
    "assistant": ("parentUuid", "isSidechain", "message", "requestId", "apiBlockIndex", "type"),
    "attachment": ("parentUuid", "isSidechain", "attachment", "type"),
    "system": ("parentUuid", "isSidechain", "type", "subtype"),
}


def _real_order(line: dict[str, object]) -> dict[str, object]:
    """Bookkeeping records open with "type"; chain records open as _LEADING says."""
    leading = _LEADING.get(str(line["type"]), ("type",))
    head = {k: line[k] for k in leading if k in line}
    return {**head, **{k: v for k, v in line.items() if k not in head}}


def write(path: str, size: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    written = 0
    i = 0
    with open(path, "w") as fh:
        while written < size:
            chunk = "".join(
                json.dumps(_real_order(line), separators=(",", ":")) + "\n"
                for line in turn_lines(i, rng)
            )
            fh.write(chunk)
            written += len(chunk)
            i += 1
    return written


def extra_turn(seed: int = 99) -> bytes:
    rng = random.Random(seed)
    return "".join(
        json.dumps(_real_order(line), separators=(",", ":")) + "\n"
        for line in turn_lines(10**6, rng)[:2]
    ).encode()
