"""What the providers' conformance kits share: a transcript's records appended as the
CLI writes them, and a run's hooks spooled as the hook would."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentspool.spool.layout import run_dir
from agentspool.spool.write import append_record

Payload = dict[str, Any]


def append_jsonl(path: str, records: Iterable[Payload]) -> bytes:
    """The records appended to ``path``, one JSON line each; the bytes written."""
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    with open(path, "ab") as fh:
        fh.write(data)
    return data


def spool_hooks(runtime_dir: str, run_id: str, hooks: Iterable[tuple[str, Payload]]) -> None:
    """Each hook's payload appended to the run's spool, as the hook appends it."""
    for event, payload in hooks:
        append_record(run_dir(runtime_dir, run_id), event, json.dumps(payload).encode())


def bash_approval(
    common: Payload, prompt: str, tool_input: Payload, asked: Payload, tool_use_id: str
) -> list[tuple[str, Payload]]:
    """A prompt whose shell command waits on an approval, in the hooks Claude Code and
    Codex both fire: ``UserPromptSubmit``, ``PreToolUse``, ``PermissionRequest`` (its
    input ``asked``)."""
    return [
        ("UserPromptSubmit", {**common, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        (
            "PreToolUse",
            {
                **common,
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": tool_input,
                "tool_use_id": tool_use_id,
            },
        ),
        (
            "PermissionRequest",
            {
                **common,
                "hook_event_name": "PermissionRequest",
                "tool_name": "Bash",
                "tool_input": asked,
            },
        ),
    ]
