"""The public surface: one import path (``agentspool``) for everything a caller needs,
``None`` meaning "the default" everywhere, and a transcript-only read spelled
``live=False``."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

import agentspool

PINNED = [
    "Activity",
    "Adapter",
    "AgentspoolError",
    "AmbiguousSessionError",
    "Capabilities",
    "Chat",
    "ChatState",
    "CompressedRolloutError",
    "Declaration",
    "DeclarationError",
    "DeltaParseError",
    "DemoReplay",
    "DemoRun",
    "DemoStep",
    "DialogOption",
    "DialogQuestion",
    "Evidence",
    "Explanation",
    "IndexReport",
    "InstallReport",
    "InstallScope",
    "InstalledFile",
    "Message",
    "NotRegularFileError",
    "PendingApproval",
    "PendingDialog",
    "Replay",
    "RunChange",
    "RunEvent",
    "RunFollower",
    "RunIdError",
    "RunNotFoundError",
    "RunPoll",
    "RunSummary",
    "RuntimeDirError",
    "SearchHit",
    "Session",
    "SessionDetail",
    "SessionNotFoundError",
    "SessionStore",
    "SessionView",
    "SettingsError",
    "Spawn",
    "StoreError",
    "StoredSession",
    "SubagentGroup",
    "SweepReport",
    "TaskState",
    "TidyReport",
    "TidyRun",
    "ToolInvocation",
    "TranscriptGoneError",
    "Transition",
    "Trust",
    "UnknownProviderError",
    "UnsupportedError",
    "Usage",
    "UsageGrouping",
    "UsageRecord",
    "UsageReport",
    "UsageRow",
    "__version__",
    "assemble_session_detail",
    "declare",
    "default_store_path",
    "explain",
    "find_session",
    "index_history",
    "install",
    "list_runs",
    "locate_transcript",
    "open_history",
    "poll_runs",
    "providers",
    "read_chat",
    "replay",
    "run",
    "run_key",
    "run_provider",
    "search_history",
    "setup",
    "show_session",
    "spool_sig",
    "sweep_spools",
    "tidy",
    "uninstall",
    "untrust",
    "usage",
]


def test_all_is_pinned_and_printed_by_a_fresh_interpreter() -> None:
    assert sorted(agentspool.__all__) == PINNED
    out = subprocess.run(
        [sys.executable, "-c", "import agentspool; print(sorted(agentspool.__all__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == f"{PINNED}\n"


def test_every_name_resolves_and_every_function_says_what_it_does() -> None:
    for name in PINNED:
        value = getattr(agentspool, name)
        if inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_every_exception_is_one_tree() -> None:
    errors = [getattr(agentspool, n) for n in PINNED if n.endswith("Error")]
    assert all(issubclass(e, agentspool.AgentspoolError) for e in errors)
    assert len(errors) == 15


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        agentspool.nope  # noqa: B018


def test_read_chat_with_two_arguments_uses_the_default_runtime_dir(
    runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", runtime_dir)
    agentspool.setup("claude-code", "some-run")
    assert os.path.isdir(os.path.join(runtime_dir, "some-run"))
    chat = agentspool.read_chat("claude-code", "some-run")
    assert (chat.state, chat.transcript_path, chat.messages) == ("idle", "", [])


def _permission_request(claude_run, silent, transcript: str) -> None:
    payload = {
        "session_id": "s1",
        "transcript_path": transcript,
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "make test"},
    }
    silent(claude_run.run(json.dumps(payload).encode(), "PermissionRequest"))


def test_live_false_reads_the_transcript_alone(claude_run, silent, tmp_path) -> None:
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    _permission_request(claude_run, silent, str(transcript))
    live = agentspool.read_chat("claude-code", claude_run.run_id, claude_run.runtime_dir)
    assert live.transcript_path == str(transcript)  # located from the hook
    assert live.state == "needs_input" and live.pending_approval is not None
    assert live.pending_approval.tool_input == {"command": "make test"}
    alone = agentspool.read_chat(
        "claude-code", claude_run.run_id, claude_run.runtime_dir, live=False
    )
    assert alone.transcript_path == str(transcript)
    assert (alone.state, alone.pending_approval) == ("idle", None)


def test_ended_reads_ended_and_never_the_spool(claude_run, silent, tmp_path) -> None:
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("")
    _permission_request(claude_run, silent, str(transcript))
    chat = agentspool.read_chat(
        "claude-code", claude_run.run_id, claude_run.runtime_dir, ended=True
    )
    assert (chat.state, chat.pending_approval) == ("ended", None)


def test_trust_config_is_refused_once_for_every_adapter_without_a_gate(runtime_dir) -> None:
    without = [p for p in agentspool.providers() if not _adapter(p).capabilities.hook_trust]
    assert without, "no adapter without a trust gate to check"
    for provider in without:
        with pytest.raises(agentspool.UnsupportedError, match="no hook trust gate"):
            agentspool.setup(provider, "r", runtime_dir, trust="config")
    assert os.listdir(runtime_dir) == []  # refused before anything was written


def _adapter(provider: str) -> agentspool.Adapter:
    from agentspool.adapters import registry

    return registry.load(provider)
