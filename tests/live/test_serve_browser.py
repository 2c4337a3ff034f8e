"""Tier 2: ``agentspool serve``'s page in a real browser beside a real Claude Code run.

Headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright; no browser is
downloaded) opens the page of a real ``serve`` on 127.0.0.1; the real ``claude`` TUI,
armed by ``agentspool.setup`` as a wrapper starts it, runs against the scripted model
server in tmux and is driven to a permission prompt, approved, and ends its turn. The
page must show the run go working → approve Bash: <the command> → your turn without
reloading (its updates come from the event stream), and the run's detail must show the
command waiting on approval. Screenshots are kept under the test's temp dir
(``screenshots/``) as CI artifacts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import claude
from serving import Served

import agentspool

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium not installed"),
]
COMMAND = "echo hi > out.txt"
CLI_DEADLINE_MS = 90_000
"""What a CLI may take to get there on a loaded machine (a deadline, not a bound)."""
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def browser_page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        # a fresh profile each time: launch_persistent_context is how Playwright takes
        # a --user-data-dir
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        try:
            yield context.new_page()
        finally:
            context.close()


def test_the_page_follows_a_real_claude_run_without_reloading(
    tmp_path: Path, runtime_dir: str
) -> None:
    from playwright.sync_api import expect

    shots = tmp_path / "screenshots"
    shots.mkdir()
    # Each reply waits 3 s: the run is seen working before each of them.
    anthropic = api.AnthropicServer(
        [
            api.tool_use("Bash", {"command": COMMAND, "description": "Write hi"}, delay=3.0),
            api.text("Done after tool.", delay=3.0),
        ]
    ).start()
    run_id = "live-serve-" + os.urandom(3).hex()
    spawn = agentspool.setup("claude-code", run_id, runtime_dir)
    home = claude.make_home(tmp_path / "claude")
    tui: claude.ClaudeTui | None = None
    try:
        with Served(["--runtime-dir", runtime_dir]) as served, browser_page() as page:
            tui = claude.start_tui(
                home, anthropic.url, extra_args=spawn.args, extra_env=dict(spawn.env)
            )
            tui.wait_ready(timeout=CLI_DEADLINE_MS / 1000)
            page.goto(served.url)
            page.evaluate("window.loadedOnce = true")  # gone if the page reloads
            expect(page.locator("#live")).to_have_text("live")
            row = page.locator(f'#runs tbody tr[data-key="claude-code:{run_id}"]')
            waits = row.locator(".waits")
            expect(waits).to_have_text("idle", timeout=CLI_DEADLINE_MS)

            tui.submit("write hi to out.txt")
            expect(waits).to_have_text("working", timeout=CLI_DEADLINE_MS)
            page.screenshot(path=str(shots / "1-working.png"))
            expect(waits).to_have_text(f"approve Bash: {COMMAND}", timeout=CLI_DEADLINE_MS)
            assert row.get_attribute("data-state") == "needs_input"
            page.screenshot(path=str(shots / "2-approval.png"))
            tui.wait_for("Do you want to proceed?")  # the CLI shows its own dialog too

            row.click()  # the run's detail: the command waiting on approval
            detail = page.locator("#run-view")
            expect(detail.locator(".approval strong")).to_have_text("approve Bash")
            expect(detail.locator(".approval pre.command")).to_have_text(COMMAND)
            expect(detail.locator(".msg").last).to_be_visible()  # its last messages
            page.screenshot(path=str(shots / "3-detail.png"))
            page.evaluate("location.hash = '#/'")

            tui.press("Enter")  # "1. Yes" is preselected
            expect(waits).to_have_text("your turn", timeout=CLI_DEADLINE_MS)
            page.screenshot(path=str(shots / "4-your-turn.png"))
            tui.wait_for("Done after tool.")
            assert page.evaluate("window.loadedOnce") is True  # never reloaded
            assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
        assert (home.cwd / "out.txt").read_text() == "hi\n"
    finally:
        if tui is not None:
            tui.close()
        anthropic.stop()
        print(f"screenshots: {shots}")
