"""Tier 2: ``agentspool watch`` beside the real CLIs, in one terminal (issue 13).

One tmux server, a window per program, as a person runs them: ``agentspool watch`` full
screen, the real ``claude`` TUI and the real ``codex`` TUI, each armed by
``agentspool.setup`` and its spawn arguments exactly as a wrapper starts them (the
harness's way: the run ids are known up front and nothing is written to the CLIs' own
settings; runs started by hand after ``install`` are ``test_installed_by_hand.py``), plus
a third run written by the real hook commands. Claude Code is driven to a question
(``AskUserQuestion``), Codex to an approval prompt, against the scripted model servers.

Both panes are read by one ``capture-pane`` call per poll, so the CLI's screen and
watch's are compared at the same instant: watch's row must show the run waiting within
``WITHIN`` seconds of the CLI first showing its dialog. The CLIs get generous deadlines
to get there; the bound is on watch. Then the Claude run is selected with keys and the
detail pane must show the question and every option.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import claude, codex, tmux
from harness import responses_server as rs
from harness.watching import start_watch

import agentspool

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)"),
    pytest.mark.skipif(not codex.CODEX_BIN.exists(), reason="codex not installed (make install)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
]

WITHIN = 1.0
"""Issue 13: the screen shows each wait within 1 s of the CLI showing it."""
CLI_DEADLINE = 90.0
"""Seconds a CLI may take to reach its dialog on a loaded machine (not the bound)."""
QUESTION = {
    "questions": [
        {
            "question": "Which color do you prefer?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm color"},
                {"label": "Blue", "description": "A cool color"},
                {"label": "Green", "description": "A calm color"},
            ],
            "multiSelect": False,
        }
    ]
}
OPTIONS = [o["label"] for o in QUESTION["questions"][0]["options"]]
COMMAND = "touch approved.txt"


def _row(provider: str, run_id: str, state: str) -> Callable[[str], bool]:
    """Whether watch's list shows the run in ``state``."""
    row = re.compile(rf"^{re.escape(provider)}\s+{re.escape(run_id)}\s+{state}\s", re.M)
    return lambda screen: row.search(screen) is not None


def _claude_asks(screen: str) -> bool:
    return "Which color do you prefer?" in screen and "Enter to select" in screen


def _codex_asks(screen: str) -> bool:
    return codex.APPROVAL_MARKER in screen and COMMAND in screen


def _first_seen(
    cli: tmux.Pane,
    watch: tmux.Pane,
    cli_shows: Callable[[str], bool],
    watch_shows: Callable[[str], bool],
) -> tuple[float, float]:
    """Poll both screens together until each shows what it must: when each first did
    (monotonic seconds, the middle of the capture that saw it)."""
    cli_at = watch_at = 0.0
    deadline = time.monotonic() + CLI_DEADLINE
    screens = ["", ""]
    while time.monotonic() < deadline:
        before = time.monotonic()
        screens = tmux.screens(cli, watch)
        at = (before + time.monotonic()) / 2
        if not cli_at and cli_shows(screens[0]):
            cli_at = at
            deadline = at + WITHIN + 10.0  # past the bound: only to say by how much
        if not watch_at and watch_shows(screens[1]):
            watch_at = at
        if cli_at and watch_at:
            return cli_at, watch_at
        time.sleep(0.02)
    pytest.fail(
        f"cli shown: {bool(cli_at)}, watch shown: {bool(watch_at)}\n"
        f"cli screen:\n{screens[0]}\nwatch screen:\n{screens[1]}"
    )


def _listed(screen: str) -> list[str]:
    """The run ids of watch's list, top to bottom."""
    rows = [line.split() for line in screen.splitlines()]
    return [row[1] for row in rows if len(row) > 1 and row[0] in ("claude-code", "codex")]


@pytest.fixture
def servers() -> Iterator[tuple[api.AnthropicServer, rs.ResponsesServer]]:
    anthropic = api.AnthropicServer(
        [api.tool_use("AskUserQuestion", QUESTION), api.text("You picked a color.")]
    ).start()
    responses = rs.ResponsesServer(
        [rs.exec_command(COMMAND, escalated=True), rs.text("The file was created.")]
    ).start()
    try:
        yield anthropic, responses
    finally:
        anthropic.stop()
        responses.stop()


def test_watch_shows_a_claude_question_and_a_codex_approval_within_a_second(
    tmp_path: Path, runtime_dir: str, servers, make_claude_run, silent
) -> None:
    anthropic, responses = servers
    home = tmp_path / "watcher"
    home.mkdir()
    watch = start_watch(runtime_dir, home=str(home), width=160, height=50)
    codex_home = codex.make_home(responses.base_url, root=tmp_path / "codex")
    tui: claude.ClaudeTui | None = None
    try:
        watch.wait_for("no live runs", timeout=60)

        claude_id, codex_id = "live-claude-q", "live-codex-a"
        claude_spawn = agentspool.setup("claude-code", claude_id, runtime_dir)
        codex_spawn = agentspool.setup("codex", codex_id, runtime_dir)
        claude_home = claude.make_home(tmp_path / "claude")
        tui = claude.start_tui(
            claude_home,
            anthropic.url,
            extra_args=claude_spawn.args,
            extra_env=dict(claude_spawn.env),
            server=watch,
        )
        codex_pane = codex.start_tui(
            codex_home,
            extra_args=["-a", "on-request", "-s", "read-only", *codex_spawn.args],
            extra_env=codex_spawn.env,
            server=watch,
            wait_ready=False,
        )
        # the third run: the real hook commands, as a Claude Code run between prompts
        other = make_claude_run(runtime_dir, "hooked-idle")
        transcript = tmp_path / "other.jsonl"
        transcript.write_text("")
        base = {"session_id": "s-other", "transcript_path": str(transcript), "cwd": "/w"}
        silent(other.run(json.dumps(base).encode(), "SessionStart"))

        tui.wait_ready(timeout=CLI_DEADLINE)
        tui.pid(timeout=CLI_DEADLINE)  # known, so that closing it can make sure it is gone
        codex.wait_tui_ready(codex_pane, timeout=CLI_DEADLINE)
        screen = watch.wait_for("3 runs", timeout=30)
        assert _row("claude-code", "hooked-idle", "your turn")(screen), screen

        tui.submit("ask me a color")
        cli_at, watch_at = _first_seen(
            tui.pane, watch, _claude_asks, _row("claude-code", claude_id, "answer: Which color")
        )
        claude_lag = watch_at - cli_at

        codex.submit(codex_pane, f"run {COMMAND}")
        cli_at, watch_at = _first_seen(
            codex_pane, watch, _codex_asks, _row("codex", codex_id, "approve Bash:")
        )
        codex_lag = watch_at - cli_at
        print(f"watch after the CLI: claude question {claude_lag:+.3f} s, codex {codex_lag:+.3f} s")
        assert claude_lag <= WITHIN and codex_lag <= WITHIN, (claude_lag, codex_lag)

        # Most urgent first once sorted: the question, the approval, then the idle run.
        screen = watch.wait_until(
            lambda s: _listed(s) == [claude_id, codex_id, "hooked-idle"], timeout=5
        )
        assert f"approve Bash: {COMMAND}" in screen  # what the Codex run waits on, in its row

        watch.send_keys("Home")  # the top row: the Claude run's question
        screen = watch.wait_until(
            lambda s: f"{claude_id} — claude-code: answer: Which color" in s, timeout=10
        )
        assert "question: Which color do you prefer?" in screen, screen
        for number, label in enumerate(OPTIONS, 1):
            assert f"{number}. {label}" in screen, screen

        watch.send_keys("j")  # the next row: the Codex run, waiting on its approval
        screen = watch.wait_until(
            lambda s: f"{codex_id} — codex: approve Bash: {COMMAND} (needs_input)" in s, timeout=10
        )
        assert f"waiting for approval of Bash: {COMMAND}" in screen, screen
        # the CLIs still show their dialogs: watch saw them, it answered nothing
        assert _claude_asks(tui.screen()) and _codex_asks(codex_pane.screen())

        # issue 21: the Codex run's turn ends, then its process: watch shows both
        codex_pane.send_keys("y")
        watch.wait_until(_row("codex", codex_id, "your turn"), timeout=CLI_DEADLINE)
        pid = codex.codex_pid(codex_pane)
        assert pid is not None
        os.kill(pid, signal.SIGTERM)  # no hook fires: the end is the process gone
        watch.wait_until(_row("codex", codex_id, "ended"), timeout=30)
    finally:
        codex_home.cleanup()  # codex and its children, then the server: every window
        if tui is not None:
            tui.close()  # claude got SIGHUP with its window; gone, or SIGKILLed
        watch.kill()
