"""Generate a large, conversation-heavy Claude Code transcript (2.1.328 record shapes).

``_claude_gen`` follows the captures' mix, where prompt snapshots and request blobs carry
most of the bytes. A long working session is the other way round: an agentic turn runs
many tool calls, and each ``user`` tool-result record carries the result twice (the
``tool_result`` block the model sees and ``toolUseResult``, the CLI's structured copy:
Bash's stdout, Read's file content, Edit's whole original file and patch). Here tool
results and assistant blocks are ~75 % of the bytes.

Per turn: the prompt with its context attachments and one prompt snapshot, then 6-24
API requests, each an ``api-request`` record and blob, a thinking block now and then, a
short text block now and then, and one tool call of Bash, Read, Edit or Grep with its
result. Sizes follow an everyday coding session: a Read returns a source file of
40-400 numbered lines, Bash a few lines to a few hundred, Grep a list of paths or
matching lines, Edit a snippet back while ``toolUseResult`` holds the file it edited.
Record and key order are the CLI's (``_claude_gen._real_order``); text is written as
the CLI writes it (UTF-8, not ``\\u`` escapes). Lines are JSON-escaped source code, so
the decode meets the quotes, backslashes and newlines real results are full of.
"""

from __future__ import annotations

import json
import random
import uuid

from _claude_gen import SESSION, _attachment, _real_order, _stamp

_CODE = [
    "from __future__ import annotations",
    "import os",
    "from pathlib import Path",
    "",
    "def load_config(path: str) -> dict[str, str]:",
    '    """Read the key=value file at ``path``; blank lines and # comments skipped."""',
    "    result: dict[str, str] = {}",
    '    with open(path, encoding="utf-8") as fh:',
    "        for line in fh:",
    "            line = line.strip()",
    '            if not line or line.startswith("#"):',
    "                continue",
    '            key, _, value = line.partition("=")',
    "            result[key.strip()] = value.strip()",
    "    return result",
    "",
    "class Worker:",
    "    def __init__(self, name: str, retries: int = 3) -> None:",
    "        self.name = name",
    "        self.retries = retries",
    "        self._seen: set[str] = set()",
    "",
    "    def run(self, items: list[str]) -> int:",
    "        done = 0",
    "        for item in items:",
    "            if item in self._seen:",
    "                continue",
    "            self._seen.add(item)",
    '            print(f"{self.name}: processing {item!r}")',
    "            done += 1",
    "        return done",
    "",
    '    pattern = re.compile(r"^(\\w+)\\s*=\\s*\\"([^\\"]*)\\"$")',
    '        raise ValueError(f"unexpected token {tok!r} at line {lineno}")',
    '    assert parse("a = \'b\'") == {"a": "b"}',
    "    # TODO: handle the Windows path separator (\\\\) here as well",
]
_BASH_OUT = [
    "============================= test session starts ==============================",
    "platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0",
    "collected 214 items",
    "tests/test_config.py ........................                            [ 11%]",
    "tests/test_worker.py ..........F.....                                    [ 19%]",
    "FAILED tests/test_worker.py::test_retries - AssertionError: assert 2 == 3",
    "src/app/config.py:41:5: E501 line too long (104 > 100 characters)",
    'Traceback (most recent call last):\n  File "src/app/main.py", line 12, in <module>',
    "drwxr-xr-x  5 dev dev  4096 Nov 29 10:02 src",
    "-rw-r--r--  1 dev dev  2210 Nov 29 10:02 pyproject.toml",
    " M src/app/config.py\n?? tests/test_new.py",
    "Success: no issues found in 38 source files",
]
_PATHS = [
    "src/app/config.py",
    "src/app/worker.py",
    "src/app/main.py",
    "src/app/cli/commands.py",
    "tests/test_config.py",
    "tests/test_worker.py",
    "docs/usage.md",
]
_PROSE = (
    "The failing test expects three retries, but the worker stops after the second because "
    "the counter starts at one. I'll read the worker, fix the off-by-one in the loop and run "
    "the tests again to make sure nothing else depends on the old behaviour. "
)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128)))


def _code(rng: random.Random, lines: int) -> list[str]:
    start = rng.randrange(len(_CODE))
    return [_CODE[(start + k) % len(_CODE)] for k in range(lines)]


def _tool(rng: random.Random) -> tuple[str, dict[str, object], str, object]:
    """One call: (name, input, the tool_result text, toolUseResult)."""
    path = "/srv/project/" + rng.choice(_PATHS)
    kind = rng.choices(["Bash", "Read", "Edit", "Grep"], weights=[4, 3, 2, 2])[0]
    if kind == "Read":
        lines = _code(rng, rng.randint(40, 400))
        numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, 1))
        file = {
            "filePath": path,
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        }
        return kind, {"file_path": path}, numbered, {"type": "text", "file": file}
    if kind == "Edit":
        original = "\n".join(_code(rng, rng.randint(60, 300)))
        old, new = _CODE[4], _CODE[4].replace("path", "config_path")
        snippet = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(_code(rng, 12), 30))
        text = (
            f"The file {path} has been updated. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{snippet}"
        )
        patch = [{"oldStart": 30, "oldLines": 7, "newStart": 30, "newLines": 7, "lines": [old]}]
        result = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": patch,
            "userModified": False,
            "replaceAll": False,
        }
        return kind, {"file_path": path, "old_string": old, "new_string": new}, text, result
    if kind == "Grep":
        if rng.random() < 0.5:
            names = rng.sample(_PATHS, rng.randint(1, len(_PATHS)))
            text = f"Found {len(names)} files\n" + "\n".join(names)
            result = {"mode": "files_with_matches", "filenames": names, "numFiles": len(names)}
        else:
            matches = [
                f"{rng.choice(_PATHS)}:{rng.randint(1, 400)}:{line}"
                for line in _code(rng, rng.randint(5, 60))
            ]
            text = "\n".join(matches)
            result = {"mode": "content", "filenames": [], "content": text, "numLines": len(matches)}
        return kind, {"pattern": "load_config", "path": "/srv/project"}, text, result
    out = "\n".join(rng.choice(_BASH_OUT) for _ in range(rng.choice([1, 3, 12, 40, 150])))
    command = rng.choice(["pytest -q", "ruff check .", "git status --short", "ls -la"])
    result = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
    return kind, {"command": command, "description": "Run " + command}, out, result


def turn_lines(i: int, rng: random.Random) -> list[dict[str, object]]:
    base = {
        "isSidechain": False,
        "sessionId": SESSION,
        "cwd": "/srv/project",
        "version": "2.1.328",
        "gitBranch": "main",
        "userType": "external",
        "entrypoint": "cli",
    }
    prompt_id, user = _uid(rng), _uid(rng)
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
            "message": {"role": "user", "content": "please fix the failing worker test"},
        },
    ]
    for kind, size in (("environment", 1400), ("date", 500), ("session_context", 400)):
        lines.append(_attachment(base, user, i, kind, size))
    lines.append(_attachment(base, user, i, "prompt_snapshot", rng.randint(30000, 40000)))
    parent = user
    requests = rng.randint(6, 24)
    for r in range(requests):
        parent = _request(
            lines, base, i, rng, parent=parent, prompt_id=prompt_id, last=r == requests - 1
        )
    for subtype, extra in (
        ("stop_hook_summary", {"hookCount": 1, "hookInfos": [{"command": "x", "durationMs": 9}]}),
        ("turn_duration", {"durationMs": 4000, "isMeta": False}),
    ):
        lines.append(
            {
                **base,
                "type": "system",
                "subtype": subtype,
                "uuid": _uid(rng),
                "parentUuid": parent,
                "timestamp": _stamp(i),
                **extra,
            }
        )
    return lines


def _request(
    lines: list[dict[str, object]],
    base: dict[str, object],
    i: int,
    rng: random.Random,
    *,
    parent: str,
    prompt_id: str,
    last: bool,
) -> str:
    """One API request: its record, the response's content blocks (a line each), the
    tool's result; the uuid of the last line written is returned (the next one's parent)."""
    msg_id = f"msg_{_uid(rng).replace('-', '')[:24]}"
    usage = {
        "input_tokens": rng.randint(1, 50),
        "output_tokens": rng.randint(20, 900),
        "cache_creation_input_tokens": rng.randint(0, 4000),
        "cache_read_input_tokens": rng.randint(10000, 90000),
        "service_tier": "standard",
    }
    lines.append(
        {
            "type": "api-request",
            "sessionId": SESSION,
            "id": _uid(rng),
            "timestamp": _stamp(i),
            "version": "2.1.328",
            "querySource": "repl_main_thread",
            "params": {"model": "claude-sonnet-4-5", "max_tokens": 32000},
            "tail": [uuid.UUID(int=rng.getrandbits(128)).hex for _ in range(12)],
        }
    )
    blocks, call, tool_id = _response_blocks(rng, last)
    message = {
        "id": msg_id,
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "type": "message",
        "stop_reason": "end_turn" if last else "tool_use",
        "usage": usage,
    }
    for index, block in enumerate(blocks):
        uid = _uid(rng)
        lines.append(
            {
                **base,
                "type": "assistant",
                "uuid": uid,
                "parentUuid": parent,
                "timestamp": _stamp(i),
                "requestId": "req_" + msg_id[4:],
                "apiBlockIndex": index,
                "message": {**message, "content": [block]},
            }
        )
        parent = uid
    for kind in ("last-prompt", "mode", "permission-mode", "atis-latch"):
        lines.append({"type": kind, "sessionId": SESSION, "leafUuid": parent})
    if call is None:
        return parent
    result = {"tool_use_id": tool_id, "type": "tool_result", "content": call[2], "is_error": False}
    result_uid = _uid(rng)
    lines.append(
        {
            **base,
            "type": "user",
            "uuid": result_uid,
            "parentUuid": parent,
            "promptId": prompt_id,
            "timestamp": _stamp(i),
            "sourceToolAssistantUUID": parent,
            "toolUseResult": call[3],
            "message": {"role": "user", "content": [result]},
        }
    )
    return result_uid


def _response_blocks(
    rng: random.Random, last: bool
) -> tuple[list[dict[str, object]], tuple[str, dict[str, object], str, object] | None, str]:
    """A response's content blocks (thinking, text, a tool call), the call, its id."""
    blocks: list[dict[str, object]] = []
    if rng.random() < 0.4:
        thought = _PROSE * rng.randint(1, 8)
        blocks.append({"type": "thinking", "thinking": thought, "signature": "Eq" * 200})
    if last or rng.random() < 0.5:
        blocks.append({"type": "text", "text": _PROSE[: rng.randint(60, len(_PROSE))]})
    call = None if last else _tool(rng)
    tool_id = ""
    if call is not None:
        tool_id = f"toolu_{_uid(rng).replace('-', '')[:24]}"
        blocks.append({"type": "tool_use", "id": tool_id, "name": call[0], "input": call[1]})
    return blocks, call, tool_id


def _encode(lines: list[dict[str, object]]) -> str:
    return "".join(
        json.dumps(_real_order(line), separators=(",", ":"), ensure_ascii=False) + "\n"
        for line in lines
    )


NOT_TALK = frozenset(
    {"api-request", "attachment", "last-prompt", "mode", "permission-mode", "atis-latch"}
)
"""The records of a turn that are no conversation: what ``write(talk_only=True)`` leaves
out."""


def write(path: str, size: int, seed: int = 7, *, talk_only: bool = False) -> int:
    """``talk_only``: every line a conversation record (prompts, assistant blocks, tool
    results, the turn's system lines): no request record, attachment or bookkeeping line,
    as in a session of mostly conversation. Per byte the harshest shape for a reader that
    builds records: the fewest lines skipped unread."""
    rng = random.Random(seed)
    written = 0
    i = 0
    with open(path, "wb") as fh:
        while written < size:
            lines = turn_lines(i, rng)
            if talk_only:
                lines = [x for x in lines if x["type"] not in NOT_TALK]
            chunk = _encode(lines).encode()
            fh.write(chunk)
            written += len(chunk)
            i += 1
    return written


def extra_turn(seed: int = 99) -> bytes:
    return _encode(turn_lines(10**6, random.Random(seed))[:2]).encode()


def conversation_share(path: str) -> float:
    """The part of the file's bytes in assistant blocks and tool results."""
    total = talk = 0
    with open(path, "rb") as fh:
        for raw in fh:
            total += len(raw)
            record = json.loads(raw)
            content = (record.get("message") or {}).get("content")
            if record["type"] == "assistant" or (
                record["type"] == "user" and isinstance(content, list)
            ):
                talk += len(raw)
    return talk / total
