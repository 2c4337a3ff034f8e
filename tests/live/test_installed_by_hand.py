"""Tier 2: a session a person starts by hand, observed through installed hooks.

``agentspool install`` arms the hooks in the CLI's own settings (a private HOME); the real
CLI then starts in tmux with no agentspool argument at all. ``agentspool ls --json`` and
``agentspool explain`` — run as that person would, in the same environment — must show
the run through prompt → permission prompt → approve → idle → exit; ``uninstall`` then
gives back the settings file byte for byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import anthropic_server as api
from harness import claude, codex, gemini
from harness import gemini_server as gs
from harness import responses_server as rs

import agentspool

pytestmark = pytest.mark.live

COMMAND = "echo installed > out.txt"


def _agentspool(env: dict[str, str], *args: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "agentspool.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if "--json" in args else proc.stdout


def _wait_run(
    env: dict[str, str], what: str, predicate: Callable[[dict[str, Any]], bool], timeout=45.0
) -> dict[str, Any]:
    """Poll ``agentspool ls --json --all`` until the one armed run (a run id: the hooks
    named it) satisfies ``predicate``. Sessions no hook saw (the warm-up) have none."""
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = [r for r in _agentspool(env, "ls", "--json", "--all") if r["run_id"]]
        if len(runs) == 1 and predicate(runs[0]):
            return runs[0]
        time.sleep(0.2)
    pytest.fail(f"{what}: never listed; last ls: {json.dumps(runs, indent=1)[:3000]}")


@pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)")
def test_claude_started_by_hand_is_listed_and_explained(tmp_path: Path) -> None:
    home = claude.make_home(
        tmp_path / "claude",
        user_settings={"env": {"IS_DEMO": "1"}, "permissions": {"deny": ["WebFetch"]}},
    )
    config = home.home / ".claude"
    settings = config / "settings.json"
    # A first run lets the CLI make its own one-time edits to settings.json (it moves
    # options from ~/.claude.json there): what the user's file looks like from then on.
    with api.AnthropicServer([api.text("Hello.")]) as srv:
        assert claude.run_print("hi", home=home, server_url=srv.url).returncode == 0
    before = settings.read_bytes()

    report = agentspool.install("claude-code", "user", directory=str(config))
    assert [f.path for f in report.files] == [str(settings)]

    scenario = [
        api.tool_use("Bash", {"command": COMMAND, "description": "Write a file"}),
        api.text("Wrote the file."),
    ]
    with api.AnthropicServer(scenario) as srv:
        env = claude.build_env(home, srv.url)
        tui = claude.start_tui(home, srv.url)  # no agentspool argument at all
        try:
            tui.wait_ready()
            started = _wait_run(env, "started", lambda r: r["state"] == "idle")
            pid = tui.pid()
            assert (started["provider"], started["pid"]) == ("claude-code", pid)
            assert started["run_id"].startswith(f"claude-code-{pid}-")
            assert started["cwd"] == str(home.cwd)
            run_id = started["run_id"]

            tui.submit("please write the file")
            tui.wait_for("Do you want to proceed?")
            waiting = _wait_run(
                env, "permission prompt", lambda r: r["pending_approval"] is not None
            )
            assert waiting["state"] == "needs_input"
            assert waiting["pending_approval"]["tool_name"] == "Bash"
            assert waiting["pending_approval"]["tool_input"]["command"] == COMMAND
            assert waiting["title"] == "please write the file"
            explained = _agentspool(env, "explain", "claude-code", "--run-id", run_id, "--json")
            sources = [s["event"]["source"] for s in explained["steps"]]
            assert "hook:PermissionRequest" in sources and "hook:UserPromptSubmit" in sources

            tui.press("Enter")  # "1. Yes" is preselected
            tui.wait_for("Wrote the file.")
            idle = _wait_run(
                env,
                "idle after the turn",
                lambda r: r["state"] == "needs_input" and r["pending_approval"] is None,
            )
            assert idle["session_id"] and Path(idle["transcript_path"]).is_file()
            assert (home.cwd / "out.txt").read_text() == "installed\n"
            text = _agentspool(env, "explain", "claude-code", "--run-id", run_id)
            assert "hook:Stop" in text and "hook:PostToolUse" in text

            tui.submit("/exit")
            gone = _wait_run(env, "exited", lambda r: r["state"] == "ended")
            assert gone["run_id"] == run_id
            assert _agentspool(env, "ls", "--json") == []  # ended runs only with --all
        finally:
            tui.close()

    agentspool.uninstall("claude-code", "user", directory=str(config))
    assert settings.read_bytes() == before


@pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)")
def test_codex_started_by_hand_is_listed_and_explained(tmp_path: Path) -> None:
    command = "touch approved.txt"
    srv = rs.ResponsesServer(
        [rs.exec_command(command, escalated=True), rs.text("Touched the file.")]
    ).start()
    home = codex.make_home(srv.base_url, root=tmp_path / "codex")
    try:
        config = home.codex_home / "config.toml"
        hooks = home.codex_home / "hooks.json"
        # The TUI counts its model notice's showings in config.toml until it has shown it
        # enough: a user past that point, so the CLI itself leaves the file alone.
        config.write_bytes(config.read_bytes().replace(b'"gpt-6.1-sol" = 1', b'"gpt-6.1-sol" = 99'))
        before = config.read_bytes()
        assert not hooks.exists()
        agentspool.install("codex", "user", directory=str(home.codex_home))
        env = codex.build_env(home)

        # The TUI as a person starts it: Codex's own arguments only (no --settings, no
        # -c hooks, no agentspool environment). The installed hooks are trusted (no
        # review modal) and fire.
        pane = codex.start_tui(home, extra_args=["-a", "on-request", "-s", "read-only"])
        assert codex.HOOKS_REVIEW_MARKER not in pane.screen()
        codex.submit(pane, f"run {command}")
        pane.wait_for(codex.APPROVAL_MARKER, timeout=45)
        waiting = _wait_run(env, "approval", lambda r: r["pending_approval"] is not None)
        pid = codex.codex_pid(pane)
        assert (waiting["provider"], waiting["pid"], waiting["state"]) == (
            "codex",
            pid,
            "needs_input",
        )
        assert waiting["run_id"].startswith(f"codex-{pid}-")
        assert waiting["pending_approval"]["tool_input"]["command"] == command
        assert waiting["cwd"] == str(home.cwd)
        assert waiting["title"] == f"run {command}"
        run_id = waiting["run_id"]
        explained = _agentspool(env, "explain", "codex", "--run-id", run_id, "--json")
        sources = [s["event"]["source"] for s in explained["steps"]]
        assert "hook:PermissionRequest" in sources and "hook:UserPromptSubmit" in sources

        pane.send_keys("y")
        pane.wait_for("Touched the file.", timeout=45)
        codex.wait_idle(pane)
        idle = _wait_run(
            env,
            "idle after the turn",
            lambda r: r["state"] == "needs_input" and r["pending_approval"] is None,
        )
        assert Path(idle["transcript_path"]).is_file()
        assert (home.cwd / "approved.txt").exists()
        assert "hook:Stop" in _agentspool(env, "explain", "codex", "--run-id", run_id)

        codex.submit(pane, "/quit")
        gone = _wait_run(env, "exited", lambda r: r["state"] == "ended")
        assert gone["run_id"] == run_id

        agentspool.uninstall("codex", "user", directory=str(home.codex_home))
        assert config.read_bytes() == before
        assert not hooks.exists()
    finally:
        home.cleanup()
        srv.stop()


@pytest.mark.skipif(not gemini.GEMINI_BIN.exists(), reason="gemini not installed (make install)")
def test_gemini_started_by_hand_is_listed_and_explained(tmp_path: Path) -> None:
    """Gemini CLI's installed hooks are also how wrapped runs are armed (ADR 0028); here
    no wrapper: the run is the gemini process itself (the node process the CLI restarted
    itself as, which runs the hooks)."""
    command = "touch approved.txt"
    srv = gs.GeminiServer([gs.shell(command), gs.text("Touched the file.")]).start()
    home = gemini.make_home(tmp_path / "gemini", srv.base_url)
    try:
        before = home.settings_path.read_bytes()
        agentspool.install("gemini-cli", "user", directory=str(home.gemini_dir))
        env = gemini.build_env(home)

        pane = gemini.start_tui(home)  # no agentspool environment at all
        gemini.submit(pane, f"please run {command}")
        pane.wait_for(gemini.APPROVAL_MARKER, timeout=60)
        waiting = _wait_run(env, "approval", lambda r: r["pending_approval"] is not None)
        [pid] = gemini.gemini_pids(pane)
        assert (waiting["provider"], waiting["pid"], waiting["state"]) == (
            "gemini-cli",
            pid,
            "needs_input",
        )
        assert waiting["run_id"].startswith(f"gemini-cli-{pid}-")
        assert waiting["pending_approval"]["tool_input"] == {"command": command}
        assert (waiting["cwd"], waiting["title"]) == (str(home.cwd), f"please run {command}")
        run_id = waiting["run_id"]
        explained = _agentspool(env, "explain", "gemini-cli", "--run-id", run_id, "--json")
        sources = [s["event"]["source"] for s in explained["steps"]]
        assert "hook:Notification" in sources and "hook:BeforeAgent" in sources

        gemini.answer(pane, ["Enter"], gemini.APPROVAL_MARKER)
        pane.wait_for("Touched the file.", timeout=60)
        pane.wait_until(gemini.is_idle_screen, timeout=30)
        idle = _wait_run(
            env,
            "idle after the turn",
            lambda r: r["state"] == "needs_input" and r["pending_approval"] is None,
        )
        assert Path(idle["transcript_path"]).is_file()
        assert "hook:AfterAgent" in _agentspool(env, "explain", "gemini-cli", "--run-id", run_id)

        gemini.submit(pane, "/quit")
        gone = _wait_run(env, "exited", lambda r: r["state"] == "ended")
        assert gone["run_id"] == run_id

        agentspool.uninstall("gemini-cli", "user", directory=str(home.gemini_dir))
        assert home.settings_path.read_bytes() == before
    finally:
        home.cleanup()
        srv.stop()
