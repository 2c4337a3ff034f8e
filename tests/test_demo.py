"""``agentspool demo``: recorded sessions replayed through the real hooks (ADR 0021).

The hermetic tests read each replayed run with ``read_chat`` after every step — the real
adapters reading what the real hook commands (spawned by the stand-in agent, as the CLI
spawns them) and the transcript and status-file writes left. The screen tests run the
installed command in a private tmux server with no agent CLI on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from importlib import resources
from pathlib import Path

import pytest
from harness import tmux

import agentspool
from agentspool.cli.main import main

VENV_BIN = os.path.dirname(sys.executable)
AGENTSPOOL = os.path.join(VENV_BIN, "agentspool")

# Each run's states in order, as read after every step (a wait names what it waits on).
EXPECTED = {
    "demo-claude-permission": [
        "idle",
        "working",
        "needs_input approve Bash",
        "working",
        "needs_input",
        "ended",
    ],
    "demo-claude-question": [
        "idle",
        "working",
        "question question: Which color do you prefer?",
        "working",
        "needs_input",
        "ended",
    ],
    "demo-codex-approval": [
        "idle",
        "working",
        "needs_input approve Bash",
        "working",
        "needs_input",
        "ended",
    ],
}


def _shown(chat: agentspool.Chat) -> str:
    if chat.pending_approval is not None:
        return f"{chat.state} approve {chat.pending_approval.tool_name}"
    if chat.pending_dialog is not None:
        return f"{chat.state} {chat.pending_dialog.kind}: {chat.pending_dialog.prompt}"
    return chat.state


def _processes_under(root: str) -> list[int]:
    """Pids whose working dir lies under ``root`` (the stand-in agents and their hooks)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            found.append(int(entry))
    return found


def test_the_replay_reaches_every_state_through_read_chat() -> None:
    seen: dict[str, list[str]] = {}
    live_agents: list[int] = []

    def on_step(step: agentspool.DemoStep) -> None:
        chat = agentspool.read_chat(step.run.provider, step.run.run_id, demo.runtime_dir)
        states = seen.setdefault(step.run.run_id, [])
        if not states or states[-1] != _shown(chat):
            states.append(_shown(chat))
        if not live_agents:
            live_agents.extend(_processes_under(demo.root))

    with agentspool.DemoReplay(speed=20) as demo:
        root = demo.root
        assert [run.provider for run in demo.runs] == ["claude-code", "claude-code", "codex"]
        assert demo.play(None, on_step) is False

    assert seen == EXPECTED
    assert live_agents, "the stand-in agents were running during the replay"
    assert not os.path.exists(root)
    assert _processes_under(root) == []


def test_the_hooks_wrote_the_evidence_the_runs_were_read_from() -> None:
    """Not a shortcut around the hooks: every run's spool holds the recorded hook events."""
    with agentspool.DemoReplay(speed=50) as demo:
        demo.play()
        for run in demo.runs:
            found = agentspool.explain(run.provider, run.run_id, demo.runtime_dir)
            sources = {step.event.source for step in found.steps}
            assert any(s.startswith("hook:") for s in sources), sources
            assert any(s.startswith("transcript") for s in sources), sources
            assert found.chat.transcript_path.startswith(demo.root)


def test_ctrl_c_mid_replay_stops_the_agents_and_removes_everything() -> None:
    steps = 0

    def interrupt(step: agentspool.DemoStep) -> None:
        nonlocal steps
        steps += 1
        if steps == 12:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), agentspool.DemoReplay(speed=20) as demo:
        root = demo.root
        demo.play(None, interrupt)
    assert not os.path.exists(root)
    assert _processes_under(root) == []


def test_no_view_prints_each_state_change_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--no-view", "--speed", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    permission = [line.split(None, 2)[2] for line in lines if "demo-claude-permission" in line]
    # what the person must do, not the wire word (issue 21): the approval and the end of
    # the turn are told apart
    assert permission == [
        "your turn",
        "working",
        "approve Bash: echo hi > out.txt",
        "working",
        "your turn",
        "ended",
    ]
    codex = [line.split(None, 2)[2] for line in lines if "demo-codex-approval" in line]
    assert "approve Bash: touch approved.txt" in codex and codex[-1] == "ended"
    question = [line.split(None, 2)[2] for line in lines if "demo-claude-question" in line]
    assert "answer: Which color do you prefer?" in question


def test_json_prints_one_object_per_state_change(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--json", "--speed", "20"]) == 0
    changes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {c["run_id"] for c in changes} == set(EXPECTED)
    assert {"question", "needs_input", "idle", "working", "ended"} == {c["state"] for c in changes}
    assert all(sorted(c) == ["provider", "run_id", "state", "waits"] for c in changes)


def test_speed_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--speed", "0"])
    assert exit_info.value.code == 2
    assert "not a positive number" in capsys.readouterr().err


def test_the_shipped_scripts_are_small_and_name_no_machine_path() -> None:
    data = resources.files("agentspool.demo").joinpath("data")
    texts = {p.name: p.read_text() for p in data.iterdir() if p.name.endswith(".jsonl")}
    assert sorted(texts) == [
        "claude-permission.jsonl",
        "claude-question.jsonl",
        "codex-approval.jsonl",
    ]
    assert sum(len(t) for t in texts.values()) < 100_000
    for name, text in texts.items():
        leaked = re.findall(r"(?<![}\w.])/(?:tmp|home|root|work|Users)/", text)
        assert leaked == [], name


def _demo_pane(tmp_path: Path, *args: str) -> tuple[tmux.Pane, str]:
    """``agentspool demo`` in a private tmux server: PATH is the venv and /usr/bin:/bin
    (no ``claude``, no ``codex``), TMPDIR private so what it leaves behind is visible."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{VENV_BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(temp),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }
    assert shutil.which("claude", path=env["PATH"]) is None
    assert shutil.which("codex", path=env["PATH"]) is None
    # The shell outlives a Ctrl-C (a trap is reset to the default in the demo) to say how it ended.
    command = f"trap : INT; {AGENTSPOOL} demo {' '.join(args)}; echo demo exited $?"
    return tmux.start(["/bin/sh", "-c", command], cwd=str(home), env=env), str(temp)


def _scrolled(pane: tmux.Pane) -> str:
    """The screen with the lines just scrolled off: a full-screen view (watch) leaves
    the cursor low, so the shell's last words can scroll past the top."""
    return pane._tmux("capture-pane", "-p", "-S", "-60", "-t", pane.target).stdout


def test_the_demo_shows_every_state_on_screen_and_leaves_nothing(tmp_path: Path) -> None:
    pane, temp = _demo_pane(tmp_path)
    seen: set[tuple[str, str]] = set()
    agents_seen = False
    try:
        deadline = time.monotonic() + 120
        screen = ""
        while "demo exited" not in screen and time.monotonic() < deadline:
            screen = _scrolled(pane)
            for line in screen.splitlines():
                run = re.search(
                    r"\bdemo-(?:claude-permission|claude-question|codex-approval)\b", line
                )
                # the words after the run id: what the person must do (issue 21)
                said = re.search(
                    r"\s(your turn|working|approve Bash: \S+|answer: Which color|ended)\b",
                    line[run.end() :] if run else "",
                )
                if run and said:
                    seen.add((run.group(0), said.group(1)))
            agents_seen = agents_seen or bool(_processes_under(temp))
            time.sleep(0.1)
        assert "demo exited 0" in screen, screen
    finally:
        pane.kill()
    states = {state for _, state in seen}
    assert {"your turn", "working", "answer: Which color", "ended"} <= states, seen
    assert ("demo-claude-permission", "approve Bash: echo") in seen, sorted(seen)
    assert ("demo-codex-approval", "approve Bash: touch") in seen, sorted(seen)
    # every run's end is on screen, Codex's too: its end is only its process gone (issue 21)
    for run in ("demo-claude-permission", "demo-claude-question", "demo-codex-approval"):
        assert (run, "ended") in seen, sorted(seen)
    assert agents_seen
    assert os.listdir(temp) == []
    assert _processes_under(temp) == []


def test_ctrl_c_on_the_view_exits_130_and_leaves_nothing(tmp_path: Path) -> None:
    pane, temp = _demo_pane(tmp_path)
    try:
        pane.wait_for("working", timeout=60)
        assert _processes_under(temp)
        pane.send_keys("C-c")
        screen = pane.wait_until(
            lambda _: "demo exited" in _scrolled(pane) or "Pane is dead" in _, timeout=30
        )
        screen = _scrolled(pane)
        assert "demo exited 130" in screen, screen
    finally:
        pane.kill()
    assert os.listdir(temp) == []
    assert _processes_under(temp) == []


def test_a_closed_terminal_still_removes_everything(tmp_path: Path) -> None:
    """tmux's kill-server hangs up on the demo (SIGHUP), as closing a terminal does."""
    pane, temp = _demo_pane(tmp_path)
    try:
        pane.wait_for("working", timeout=60)
        assert os.listdir(temp) != []
    finally:
        pane.kill()
    deadline = time.monotonic() + 20
    while (os.listdir(temp) or _processes_under(temp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert os.listdir(temp) == []
    assert _processes_under(temp) == []
