"""``agentspool usage`` counts Gemini CLI sessions from their chat files, as the CLI
recorded the tokens (docs/providers/gemini-cli.md §4.6): ``cached`` is part of
``input``, thoughts are output; a re-appended record counts once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import agentspool

CAPTURES = Path(__file__).resolve().parents[2] / "live" / "captures" / "gemini-cli"


def _place(scenario: str, project: str) -> Path:
    """The capture's chat file where Gemini CLI keeps it, its project recorded."""
    tmp = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "work"
    (tmp / "chats").mkdir(parents=True, exist_ok=True)
    (tmp / ".project_root").write_text(project)
    [chat] = (CAPTURES / scenario / "chats").iterdir()
    return Path(shutil.copy(chat, tmp / "chats"))


def test_usage_by_session_and_project() -> None:
    path = _place("tui-approve", "/srv/project")
    report = agentspool.usage(by="session", providers=["gemini-cli"], timezone="UTC")
    [row] = report.rows
    assert (row.provider, row.path, row.models) == ("gemini-cli", str(path), ["gemini-3.8-flash"])
    # Two answers (the call's record re-appended with its toolCalls counts once), each:
    # 120 prompt tokens of which 64 cached, 12 output and 3 of thoughts.
    assert (row.input_tokens, row.cache_read_tokens, row.cache_write_tokens) == (112, 128, 0)
    assert row.output_tokens == 30
    [by_project] = agentspool.usage(by="project", providers=["gemini-cli"], index=False).rows
    assert by_project.key == "/srv/project"
    assert by_project.total_tokens == row.total_tokens == 112 + 128 + 30
