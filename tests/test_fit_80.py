"""At 80x24, as a person's default terminal (issue 21, item 4): ``ls``, ``usage`` by each
grouping, ``show`` and ``watch`` fit, and no cell is cut mid-number — every figure the
``--json`` holds is on screen whole, every run id whole."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import usage_corpus as corpus
from harness import tmux
from harness.watching import start_watch

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")

RUN_ID = "claude-code-4194301-17330000000000"  # as long as a hand-started run's id (34)
CUT_NUMBER = re.compile(r"[\d,.$]…")


def _env(home: Path) -> dict[str, str]:
    keep = (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "AGENTSPOOL_RUNTIME_DIR",
        "AGENTSPOOL_DATA_DIR",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
    )
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **{k: os.environ[k] for k in keep},
    }


def _screen(tmp_path: Path, *argv: str) -> str:
    """``agentspool ARGV`` drawn on an 80x24 terminal: what it printed, scrollback too."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    command = " ".join(["agentspool", *argv]) + "; echo __done__"
    pane = tmux.start(
        ["/bin/sh", "-c", command], cwd=str(home), env=_env(home), width=80, height=24
    )
    try:
        pane.wait_until(lambda _: "__done__" in _all(pane), timeout=60)
        return _all(pane).split("__done__")[0]
    finally:
        pane.kill()


def _all(pane: tmux.Pane) -> str:
    return pane._tmux("capture-pane", "-p", "-S", "-500", "-t", pane.target).stdout


def _fits(screen: str) -> None:
    assert all(len(line) <= 80 for line in screen.splitlines()), screen
    # a session id too alike another's to be told by its start is marked cut (…) at
    # the start of its line, as documented; no figure is
    figures = re.sub(r"(?m)^[0-9a-f-]+… ", "", screen)
    assert not CUT_NUMBER.search(figures), screen


@pytest.mark.parametrize("by", ["day", "session", "model", "project"])
def test_usage_fits_with_every_figure_whole(by, tmp_path) -> None:
    corpus.write_claude(os.environ["CLAUDE_CONFIG_DIR"])
    corpus.write_codex(os.environ["CODEX_HOME"])
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "agentspool.cli.main", "usage", "--by", by, "--json"],
            capture_output=True,
            check=True,
        ).stdout
    )
    screen = _screen(tmp_path, "usage", "--by", by, "--no-index")
    _fits(screen)
    lines = screen.splitlines()
    for row in [*report["rows"], report["total"]]:
        figures = [f"{row[k]:,}" for k in ("input_tokens", "output_tokens", "total_tokens")]
        figures += [f"{row[k]:,}" for k in ("cache_read_tokens", "cache_write_tokens")]
        assert any(all(f" {f}" in line for f in figures) for line in lines), (row, screen)
    assert "Provider" in screen or by in ("day", "project")
    if by == "model":
        assert "claude-code" in screen and "codex" in screen  # never one letter a line


def test_ls_show_and_watch_fit(runtime_dir, make_claude_run, silent, tmp_path) -> None:
    os.environ["AGENTSPOOL_RUNTIME_DIR"] = runtime_dir
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    run = make_claude_run(runtime_dir, RUN_ID)
    other = make_claude_run(runtime_dir, "short")
    base = {"session_id": "s1", "transcript_path": str(transcript)}
    for hooked in (run, other):
        silent(hooked.run(json.dumps({**base, "prompt_id": "p1"}).encode(), "UserPromptSubmit"))
    asked = {"tool_name": "Bash", "tool_input": {"command": "make deploy " + "x" * 80}}
    silent(run.run(json.dumps({**base, "prompt_id": "p1", **asked}).encode(), "PermissionRequest"))

    screen = _screen(tmp_path, "ls")
    _fits(screen)
    rows = [line for line in screen.splitlines() if line.startswith("claude-code")]
    assert len(rows) == 2 and any(RUN_ID in row for row in rows), screen
    # the columns line up: the state starts at the same place in every row
    starts = {
        row.index(word) for row, word in zip(sorted(rows), ("approve", "working"), strict=True)
    }
    assert len(starts) == 1, screen

    capture = next((Path(__file__).parent / "live" / "captures" / "codex").glob("*/rollout-*"))
    shown = _screen(tmp_path, "show", str(capture))
    _fits(shown)
    assert re.search(r"input [\d,]+ · output [\d,]+", shown), shown

    home = tmp_path / "home"
    pane = start_watch(runtime_dir, home=str(home), width=80, height=24)
    try:
        drawn = pane.wait_until(lambda s: RUN_ID in s and "approve Bash" in s, timeout=30)
    finally:
        pane.kill()
    _fits(drawn)
