"""The full-screen ``agentspool watch``, driven in a private tmux server like a person at
a terminal: real hooks write the evidence of several runs, the screen is read back
(capture-pane) and keys are sent (send-keys)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from harness import tmux
from harness.watching import start_watch

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")

SHOWN_WITHIN = 2.5
"""Seconds from a hook's exit (or a key) to the screen showing it: the list is drawn
once a second, so up to one second, plus the read and the redraw on a loaded machine."""
WAIT_SHOWN_WITHIN = 1.0
"""A run that starts waiting on the operator is drawn at the next tick (twice a second)
(issue 13: within a second)."""

QUESTION = {
    "tool_name": "AskUserQuestion",
    "tool_use_id": "toolu_q",
    "tool_input": {
        "questions": [
            {
                "question": "Which database?",
                "header": "db",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}],
            }
        ]
    },
}


def _rows(screen: str) -> list[str]:
    """The list's rows, top to bottom."""
    return [line for line in screen.splitlines() if line.startswith("claude-code ")]


def _state_of(name: str, state: str):
    row = re.compile(rf"claude-code\s+{name}\s+{state}\s")
    return lambda screen: any(row.match(line) for line in _rows(screen))


@pytest.fixture
def pane(runtime_dir, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    started = start_watch(runtime_dir, home=str(home), width=160, height=40)
    yield started
    started.kill()


def test_watch_shows_each_state_and_a_questions_options(
    runtime_dir, make_claude_run, tmp_path, pane
) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    runs, bases = {}, {}
    for name in ("alpha", "beta", "gamma"):
        run = make_claude_run(runtime_dir, name)
        base = {"session_id": f"s-{name}", "transcript_path": str(transcript), "cwd": "/w"}
        run.fire("SessionStart", base)
        runs[name], bases[name] = run, base

    screen = pane.wait_for("3 runs", timeout=30)  # the app is up, every run listed
    # a session started, no turn yet: the CLI waits on its first prompt
    assert all(_state_of(name, "your turn")(screen) for name in ("alpha", "beta", "gamma"))

    for name in ("alpha", "beta", "gamma"):
        prompt = {**bases[name], "prompt_id": "p1", "prompt": f"task {name}"}
        runs[name].fire("UserPromptSubmit", prompt)
    for name in ("alpha", "beta", "gamma"):
        pane.wait_until(_state_of(name, "working"), timeout=SHOWN_WITHIN)

    approval = {**bases["beta"], "prompt_id": "p1", "tool_name": "Bash"}
    runs["beta"].fire("PermissionRequest", {**approval, "tool_input": {"command": "ls"}})
    pane.wait_until(_state_of("beta", "approve Bash: ls"), timeout=WAIT_SHOWN_WITHIN)

    asked = {**bases["gamma"], **QUESTION, "prompt_id": "p1"}
    runs["gamma"].fire("PreToolUse", asked)
    runs["gamma"].fire("PermissionRequest", asked)
    pane.wait_until(_state_of("gamma", "answer: Which database[?]"), timeout=WAIT_SHOWN_WITHIN)
    # Most urgent first: a run that starts waiting is drawn where it stands at once, and
    # moves up when the list is drawn again, at the next second.
    pane.wait_until(lambda s: [r.split()[1] for r in _rows(s)][:2] == ["gamma", "beta"], 2.0)

    # The list keeps the selected run; the question is at the top: go there (k, up).
    for _ in range(3):
        pane.send_keys("k")
    screen = pane.wait_for("1. Postgres", timeout=SHOWN_WITHIN)
    assert "question: Which database?" in screen and "2. SQLite" in screen
    assert "answer: Which database?" in _rows(screen)[0]  # what it waits on, in its row

    pane.send_keys("j")  # the next run down: beta, waiting on its approval
    screen = pane.wait_for("waiting for approval", timeout=SHOWN_WITHIN)
    assert "Bash: ls" in screen and "1. Postgres" not in screen

    pane.send_keys("Enter")  # every folded event for the selected run
    screen = pane.wait_for("events folded", timeout=SHOWN_WITHIN)
    assert "PermissionRequest" in screen or "InputRequested" in screen

    pane.send_keys("/")
    # typed before the input line has focus, the "q" of "question" would quit the app
    pane.wait_for("filter: words matching", timeout=SHOWN_WITHIN)
    pane.send_text("question")
    pane.send_keys("Enter")
    screen = pane.wait_for("filter: question", timeout=SHOWN_WITHIN)
    assert [row.split()[1] for row in _rows(screen)] == ["gamma"]

    pane.send_keys("q")
    pane.wait_until(lambda _: _dead(pane), timeout=10)


def _dead(pane: tmux.Pane) -> bool:
    out = subprocess.run(
        ["tmux", "-L", pane.socket, "display-message", "-p", "-t", pane.target, "#{pane_dead}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() == "1"
