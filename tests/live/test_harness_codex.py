"""Smoke tests of the Tier-2 Codex harness: the real codex 0.169.0 against the scripted server.

Run (repository root): .venv/bin/python -m pytest -p no:cacheprovider --import-mode=importlib \
        -o pythonpath=tests/live tests/live/test_harness_codex.py
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from harness import codex, hooklog
from harness import responses_server as rs

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not codex.CODEX_BIN.exists() or shutil.which("tmux") is None,
        reason="needs tests/live/node_modules (npm ci) and tmux",
    ),
]


@pytest.fixture
def server() -> Iterator[rs.ResponsesServer]:
    with rs.ResponsesServer() as srv:
        yield srv


@pytest.fixture
def home(server: rs.ResponsesServer) -> Iterator[codex.CodexHome]:
    h = codex.make_home(server.base_url)
    try:
        yield h
    finally:
        h.cleanup()  # kills every tmux server / process started for it, removes the dir


def test_exec_gets_scripted_text_and_hooks_fire(
    server: rs.ResponsesServer, home: codex.CodexHome
) -> None:
    server.add(rs.text("Hello from the scripted server."))
    proc = codex.run_exec(home, "say hello", extra_args=codex.logging_hook_args(home.hook_log))
    assert proc.returncode == 0, proc.stderr
    assert "Hello from the scripted server." in proc.stdout
    events = codex.hook_events(home.hook_log)
    for ev in ("SessionStart", "UserPromptSubmit", "PreModelRequest", "Stop", "SessionEnd"):
        assert ev in events, events
    assert events[-1] == "SessionEnd"
    stop = next(r for r in hooklog.read_hook_log(home.hook_log) if r["event"] == "Stop")
    assert stop["payload"]["last_assistant_message"] == "Hello from the scripted server."
    assert [r.kind for r in server.responses_requests()] == ["main"]
    (rollout,) = codex.rollouts(home)
    assert stop["payload"]["transcript_path"] == str(rollout)
    assert codex.rollout_event_types(rollout)[-1] == "event_msg/task_complete"


def test_exec_hooks_trusted_by_config_entries_without_bypass(
    server: rs.ResponsesServer, home: codex.CodexHome
) -> None:
    """Computed trusted_hash entries make -c hooks run without the bypass flag."""
    server.add(rs.text("untrusted run"), rs.text("trusted run"))
    args = codex.logging_hook_args(home.hook_log, bypass_trust=False)
    assert codex.run_exec(home, "one", extra_args=args).returncode == 0
    assert codex.hook_events(home.hook_log) == []  # untrusted -c hooks are skipped silently in exec

    codex.write_hook_trust(home, codex.logging_hook_commands(home.hook_log))
    listed = codex.hooks_list(home, extra_args=args)
    assert {h["trustStatus"] for h in listed["hooks"]} == {"trusted"}, listed
    assert len(listed["hooks"]) == len(codex.HOOK_EVENTS)
    assert codex.run_exec(home, "two", extra_args=args).returncode == 0
    events = codex.hook_events(home.hook_log)
    for ev in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert ev in events, events


def test_tui_reaches_prompt_and_shows_approval(
    server: rs.ResponsesServer, home: codex.CodexHome
) -> None:
    server.add(rs.exec_command("touch approved.txt", escalated=True), rs.text("Created it."))
    pane = codex.start_tui(
        home,
        extra_args=["-a", "on-request", "-s", "read-only", *codex.logging_hook_args(home.hook_log)],
    )
    assert codex.composer_text(pane.screen()) == codex.COMPOSER_PLACEHOLDER
    codex.submit(pane, "create approved.txt")
    pane.wait_for(codex.APPROVAL_MARKER, timeout=30)
    perm = codex.wait_hook(home.hook_log, "PermissionRequest")[0]["payload"]
    assert perm["tool_input"]["command"] == "touch approved.txt"
    assert not (home.cwd / "approved.txt").exists()

    pane.send_keys("y")
    codex.wait_hook(home.hook_log, "Stop", timeout=30)
    codex.wait_idle(pane)
    assert (home.cwd / "approved.txt").exists()
    assert "Created it." in pane.screen()
    assert "PostToolUse" in codex.hook_events(home.hook_log)
    # title generation is a side call and must not have consumed a scripted reply
    assert [r.reply_label for r in server.responses_requests("main")] == [
        "exec_command(escalated)",
        "text",
    ]
