"""Tier 2: ``agentspool serve --notify`` over a real Claude Code run (issue 24).

The real ``claude`` TUI, armed by ``agentspool.setup`` as a wrapper starts it, runs in
tmux against the scripted model server and is driven through a permission prompt, a
question (``AskUserQuestion``) and the end of its turn. A real ``serve`` on 127.0.0.1
hands each wait to apprise's real ``json://`` notifier, twice: one receiver records,
the other hangs up on the first message and answers 500 to its first retry. The
recording receiver gets exactly one message per wait — the command, the question's
text, "your turn" — the first of them without waiting for the other receiver's
retries; the failing receiver gets the same messages once each after its retries, the
next ones included: its failure stopped nothing.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import claude
from receivers import Post, Receiver
from serving import Served

import agentspool

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not claude.available(), reason="claude not installed (make install)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
]
COMMAND = "echo hi > out.txt"
QUESTION = "Which color do you prefer?"
CLI_DEADLINE = 90.0
"""What a CLI may take to get there on a loaded machine (a deadline, not a bound)."""
SETTLE = 4.0
"""How long past the last wait no further message may arrive: several serve polls."""


def _json_url(receiver: Receiver) -> str:
    return f"json://127.0.0.1:{receiver.port}/agentspool"


def _first_lines(posts: list[Post]) -> list[str]:
    """What each message says to do: its body's first line (``serve.notify``)."""
    return [post.json()["message"].splitlines()[0] for post in posts]


def _wait_screen(tui: claude.ClaudeTui, text: str) -> None:
    tui.wait_for(text, timeout=CLI_DEADLINE)


def _answer_question(tui: claude.ClaudeTui) -> None:
    """Enter on option 1; a review step ("Submit answers"), if shown, confirmed."""
    tui.press("Enter")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        screen = tui.screen()
        if "Submit answers" in screen or "Review your answers" in screen:
            tui.press("Enter")
            return
        if "Enter to select" not in screen:  # the form closed: answered
            return
        time.sleep(0.2)
    pytest.fail(f"question not answered:\n{tui.screen()}")


def test_one_message_per_wait_and_a_failing_receiver_stops_nothing(
    tmp_path: Path, runtime_dir: str
) -> None:
    run_id = "live-notify-" + os.urandom(3).hex()
    spawn = agentspool.setup("claude-code", run_id, runtime_dir)
    home = claude.make_home(tmp_path / "claude")
    anthropic = api.AnthropicServer(
        [
            api.tool_use("Bash", {"command": COMMAND, "description": "Write hi"}, delay=1.0),
            api.tool_use(
                "AskUserQuestion",
                {
                    "questions": [
                        {
                            "question": QUESTION,
                            "header": "Color",
                            "options": [
                                {"label": "Red", "description": "A warm color"},
                                {"label": "Blue", "description": "A cool color"},
                            ],
                            "multiSelect": False,
                        }
                    ]
                },
                delay=1.0,
            ),
            api.text("All done.", delay=1.0),
        ]
    ).start()
    tui: claude.ClaudeTui | None = None
    with Receiver() as good, Receiver(refuse=["close", "500"]) as failing:
        notify = ["--notify", _json_url(failing), "--notify", _json_url(good)]
        try:
            with Served(["--runtime-dir", runtime_dir, *notify]):
                tui = claude.start_tui(
                    home, anthropic.url, extra_args=spawn.args, extra_env=dict(spawn.env)
                )
                tui.wait_ready(timeout=CLI_DEADLINE)
                tui.submit("write hi to out.txt, then ask me a color")

                _wait_screen(tui, "Do you want to proceed?")
                (approval,) = good.wait_for(1, CLI_DEADLINE)
                assert _first_lines([approval]) == [f"approve Bash: {COMMAND}"]
                assert (
                    approval.json()["title"] == f"claude-code waits on you: approve Bash: {COMMAND}"
                )
                assert f"run: {run_id} (claude-code)" in approval.json()["message"]
                tui.press("Enter")  # "1. Yes" is preselected

                _wait_screen(tui, QUESTION)
                assert len(good.wait_for(2, CLI_DEADLINE)) == 2
                _answer_question(tui)
                _wait_screen(tui, "All done.")
                good.wait_for(3, CLI_DEADLINE)
                failing.wait_for(3, CLI_DEADLINE)
                time.sleep(SETTLE)  # more polls of the same waits: no more messages
        finally:
            if tui is not None:
                tui.close()
            anthropic.stop()
        assert (home.cwd / "out.txt").read_text() == "hi\n"

        expected = [f"approve Bash: {COMMAND}", f"answer: {QUESTION}", "your turn"]
        assert _first_lines(good.posts) == expected
        assert "options: Red, Blue" in good.posts[1].json()["message"].splitlines()
        # The failing receiver refused the first message twice (a hang-up, a 500), got it
        # on the retry that followed, and every later one once: nothing was held back
        # for good, and nothing was sent to either receiver twice.
        assert failing.refused == 2
        assert _first_lines(failing.posts) == expected
        assert good.posts[0].at < failing.posts[0].at
