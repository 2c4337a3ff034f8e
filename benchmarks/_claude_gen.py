"""Generate a large Claude Code transcript with the real record shapes (2.1.328, §9).

The mix follows what the real CLI writes (tests/live/captures/claude-code/): every API
request adds a ~35 KB ``prompt_snapshot`` attachment, a request blob and a request record,
which make up most of a real transcript's bytes; the conversation is sized like a coding
session (multi-KB tool results), so it is *heavier* in conversation than the captures
(~17 % of bytes against ~4 %). Keys are in the CLI's own order.
"""

from __future__ import annotations

import json
import random
import uuid

SESSION = "b3c4d5e6-0000-4000-8000-0000000000be"


def _stamp(i: int) -> str:
    return f"2026-11-29T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"


_FILLER = "You are Claude Code, an interactive CLI tool that helps users with software. " * 600


def _attachment(
    base: dict[str, object], parent: str, i: int, kind: str, size: int
) -> dict[str, object]:
    return {
        **base,
        "type": "attachment",
        "uuid": str(uuid.uuid4()),
        "parentUuid": parent,
        "timestamp": _stamp(i),
        "attachment": {"type": kind, "content": _FILLER[:size]},
    }


def _request(
    base: dict[str, object], parent: str, i: int, rng: random.Random
) -> list[dict[str, object]]:
    snapshot = _attachment(base, parent, i, "prompt_snapshot", rng.randint(30000, 40000))
    blob = {
        "type": "api-request-blob",
        "sessionId": SESSION,
        "hash": uuid.uuid4().hex,
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": _FILLER[: rng.randint(800, 10000)]}],
        },
    }
    request = {
        "type": "api-request",
        "sessionId": SESSION,
        "id": str(uuid.uuid4()),
        "timestamp": _stamp(i),
        "version": "2.1.328",
        "querySource": "repl_main_thread",
        "params": {"model": "claude-sonnet-4-5", "max_tokens": 32000},
        "tail": [uuid.uuid4().hex for _ in range(12)],
    }
    return [snapshot, blob, request]


# The fields every conversation record of the session carries.
_BASE: dict[str, object] = {
    "isSidechain": False,
    "sessionId": SESSION,
    "cwd": "/srv/project",
    "version": "2.1.328",
    "gitBranch": "main",
    "userType": "external",
    "entrypoint": "cli",
}


def turn_lines(i: int, rng: random.Random) -> list[dict[str, object]]:
    prompt_id, user = (
        str(uuid.UUID(int=rng.getrandbits(128))),
        str(uuid.UUID(int=rng.getrandbits(128))),
    )
    a1, a2, tr, a3 = (str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(4))
    base = _BASE
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
    lines = _prompt(base, i, user, prompt_id, words)
    lines += _request(base, user, i, rng)
    said = [{"type": "text", "text": words}]
    lines.append(
        _answer(
            base,
            i,
            a1,
            user,
            message_id=msg_id,
            stop_reason="tool_use",
            usage=usage,
            content=said,
            block=0,
        )
    )
    call = {
        "type": "tool_use",
        "id": tool_id,
        "name": "Bash",
        "input": {"command": f"grep -r {words[:40]!r} .", "description": "Search"},
    }
    lines.append(
        _answer(
            base,
            i,
            a2,
            a1,
            message_id=msg_id,
            stop_reason="tool_use",
            usage=usage,
            content=[call],
            block=1,
        )
    )
    for kind in ("last-prompt", "mode", "permission-mode", "atis-latch"):
        lines.append({"type": kind, "sessionId": SESSION, "leafUuid": a2})
    lines.append(_tool_result(base, i, (tr, a2, prompt_id, tool_id), words * 20))
    lines += _request(base, tr, i, rng)
    msg2 = f"msg_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
    done = [{"type": "text", "text": "Done. " + words[:200]}]
    lines.append(
        _answer(
            base,
            i,
            a3,
            tr,
            message_id=msg2,
            stop_reason="end_turn",
            usage=usage,
            content=done,
            request="req_y",
        )
    )
    return lines + _turn_end(base, i, a3)


def _prompt(
    base: dict[str, object], i: int, user: str, prompt_id: str, words: str
) -> list[dict[str, object]]:
    """The prompt, and the context attachments each turn writes after it."""
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
    # Per turn, as 2.1.328 writes them (sizes from tests/live/captures/claude-code/):
    # context attachments, and per API request a prompt snapshot (~35 KB, the bulk of a
    # real transcript's bytes), a request blob and the request record.
    kinds = [
        ("environment", 1400),
        ("date", 500),
        ("session_context", 400),
        ("remote_session_change", 1250),
    ]
    if i == 0:
        kinds += [
            ("model", 750),
            ("deferred_tools_delta", 1300),
            ("skill_listing", 13600),
            ("agent_listing_delta", 6000),
        ]
    return lines + [_attachment(base, user, i, kind, size) for kind, size in kinds]


def _answer(
    base: dict[str, object],
    i: int,
    uid: str,
    parent: str,
    *,
    message_id: str,
    stop_reason: str,
    usage: dict[str, object],
    content: list[dict[str, object]],
    request: str = "req_x",
    block: int | None = None,
) -> dict[str, object]:
    """An assistant line: one content block of response ``message_id``."""
    index = {} if block is None else {"apiBlockIndex": block}
    return {
        **base,
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "timestamp": _stamp(i),
        "requestId": request,
        **index,
        "message": {
            "id": message_id,
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "type": "message",
            "stop_reason": stop_reason,
            "usage": usage,
            "content": content,
        },
    }


def _tool_result(
    base: dict[str, object], i: int, ids: tuple[str, str, str, str], output: str
) -> dict[str, object]:
    uid, call, prompt_id, tool_id = ids
    return {
        **base,
        "type": "user",
        "uuid": uid,
        "parentUuid": call,
        "promptId": prompt_id,
        "timestamp": _stamp(i),
        "sourceToolAssistantUUID": call,
        "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": output,
                    "is_error": False,
                }
            ],
        },
    }


def _turn_end(base: dict[str, object], i: int, last: str) -> list[dict[str, object]]:
    """The Stop hook's summary and ``turn_duration``."""
    return [
        {
            **base,
            "type": "system",
            "subtype": "stop_hook_summary",
            "uuid": str(uuid.uuid4()),
            "parentUuid": last,
            "timestamp": _stamp(i),
            "hookCount": 1,
            "hookInfos": [{"command": "x", "durationMs": 9}],
        },
        {
            **base,
            "type": "system",
            "subtype": "turn_duration",
            "uuid": str(uuid.uuid4()),
            "parentUuid": last,
            "timestamp": _stamp(i),
            "durationMs": 4000,
            "isMeta": False,
        },
    ]


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
