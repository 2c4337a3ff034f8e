"""A payload the spool cut to head + tail (ADR 0001) still names its session and tool, for
a CLI that spells its fields in camelCase as for one in snake_case: Copilot CLI's real
hook writes a ten-megabyte tool result, and its translator reads the cut record's
``sessionId`` and ``toolName`` (the salvage once matched only lowercase keys)."""

from __future__ import annotations

import json
import shlex

from hook_runs import fire

import agentspool
from agentspool.adapters.claude_code._signals import decode as claude_decode
from agentspool.adapters.copilot._signals import decode as copilot_decode
from agentspool.spool.read import SpoolReader

SESSION = "5c3f7d2e-0b1a-4c5d-9e8f-123456789abc"


def _cut_record(provider: str, event: str, payload: dict[str, object], runtime_dir: str):
    spawn = agentspool.setup(provider, "run-1", runtime_dir)
    with open(spawn.settings_path, encoding="utf-8") as fh:
        settings = json.load(fh)
    if provider == "copilot":
        command = settings["hooks"][event][0]["bash"]
    else:
        command = settings["hooks"][event][0]["hooks"][0]["command"]
    fire(shlex.split(command), payload)
    [record] = SpoolReader(spawn.run_dir).read()
    assert record.truncated
    return record


def test_a_cut_copilot_payload_keeps_its_camel_case_ids(runtime_dir: str) -> None:
    payload = {
        "sessionId": SESSION,
        "timestamp": 1764700000000,
        "cwd": "/home/u",
        "toolName": "bash",
        "toolArgs": json.dumps({"command": "cat big.log"}),
        "toolResult": {"resultType": "success", "textResultForLlm": "x" * (10 << 20)},
    }
    hook = copilot_decode(_cut_record("copilot", "postToolUse", payload, runtime_dir))
    assert hook is not None
    assert (hook.session_id, hook.tool_name, hook.cwd) == (SESSION, "bash", "/home/u")


def test_a_cut_claude_code_payload_keeps_its_snake_case_ids(runtime_dir: str) -> None:
    payload = {
        "session_id": SESSION,
        "transcript_path": "/home/u/t.jsonl",
        "cwd": "/home/u",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_response": {"stdout": "x" * (10 << 20)},
        "tool_use_id": "toolu_1",
    }
    hook = claude_decode(_cut_record("claude-code", "PostToolUse", payload, runtime_dir))
    assert hook is not None
    assert (hook.session_id, hook.tool_name, hook.tool_use_id) == (SESSION, "Bash", "toolu_1")
