"""Qwen Code's, Kimi Code's and Pi's real captures where the CLIs keep them (the test's
private ``QWEN_HOME``, ``KIMI_CODE_HOME`` and ``PI_CODING_AGENT_DIR``), through the history
commands: ``index`` finds them, ``usage`` per session equals the CLI's own figures (Qwen
Code: its answers' ``usageMetadata``; Kimi Code: its ``usage.record``s; Pi: its footer),
``search`` and ``show`` find the conversation."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agentspool.cli.main import main

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"
QWEN_SESSION = "d066f0b4-c14d-4a70-a0d6-290230346598"
KIMI_SESSION = "session_e0834718-df2b-4ad6-9a00-b7633c9c29ad"


@pytest.fixture
def laid() -> None:
    qwen = CAPTURES / "qwen-code" / "tui-session" / "chats"
    chats = Path(os.environ["QWEN_HOME"], "projects", "-work", "chats")
    chats.mkdir(parents=True)
    for path in qwen.glob("*.jsonl"):
        shutil.copy(path, chats / path.name)
    kimi = CAPTURES / "kimi-code" / "tui-session" / "chats"
    shutil.copytree(kimi, os.environ["KIMI_CODE_HOME"])


def _usage(provider: str, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    argv = ["usage", "--by", "session", "--provider", provider, "--json", "--timezone", "UTC"]
    assert main(argv) == 0
    return {row["key"]: row for row in json.loads(capsys.readouterr().out)["rows"]}


def test_usage_per_session_is_the_clis_own_figures(laid, capsys) -> None:
    qwen = _usage("qwen-code", capsys)
    # six answers of promptTokenCount 120 (cachedContentTokenCount 64 inside), 12 output;
    # the table's input is what the cache did not hold
    assert qwen[QWEN_SESSION]["input_tokens"] == 6 * (120 - 64)
    assert qwen[QWEN_SESSION]["cache_read_tokens"] == 384
    assert qwen[QWEN_SESSION]["output_tokens"] == 72
    kimi = _usage("kimi-code", capsys)
    # seven usage.records of inputOther 56 + inputCacheRead 64, output 12
    assert kimi[KIMI_SESSION]["input_tokens"] == 7 * 56
    assert kimi[KIMI_SESSION]["cache_read_tokens"] == 448
    assert kimi[KIMI_SESSION]["output_tokens"] == 84
    assert len(kimi) == len(qwen) == 2  # /clear: a second session each


def test_index_search_and_show_find_both_conversations(laid, capsys) -> None:
    assert main(["index", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["new"] == 4 and report["failed"] == 0
    assert main(["search", "color", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert {h["session"]["provider"] for h in hits} == {"qwen-code", "kimi-code"}
    assert main(["show", QWEN_SESSION[:12], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    texts = [m["text"] for m in shown["conversation"]]
    assert "please run echo hi" in texts and "Red it is." in texts
    assert main(["show", KIMI_SESSION[:16], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert "Not run, then." in [m["text"] for m in shown["conversation"]]


PI_APPROVE = "01a237c7-b3da-7363-a36e-da84af5ba262"
"""tui-approve's session: two answers, Pi's footer reading ``↑112 ↓24 R128``."""


@pytest.fixture
def pi_laid() -> None:
    """Pi's captures where Pi keeps sessions: ``<agent dir>/sessions/--<cwd>--/``."""
    for sessions in sorted((CAPTURES / "pi").glob("*/sessions")):
        folder = Path(os.environ["PI_CODING_AGENT_DIR"], "sessions", "--work--")
        folder.mkdir(parents=True, exist_ok=True)
        for path in sessions.glob("*.jsonl"):
            shutil.copy(path, folder / path.name)


def test_pi_usage_per_session_is_its_footers(pi_laid, capsys) -> None:
    pi = _usage("pi", capsys)
    # Pi's footer: ↑ input (the cache left out), ↓ output, R cache reads
    assert (pi[PI_APPROVE]["input_tokens"], pi[PI_APPROVE]["output_tokens"]) == (112, 24)
    assert pi[PI_APPROVE]["cache_read_tokens"] == 128
    assert len(pi) == 6  # one per capture, and /new's second


def test_pi_index_search_and_show_find_the_conversation(pi_laid, capsys) -> None:
    assert main(["index", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["new"] == 6 and report["failed"] == 0
    assert main(["search", "out.txt", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert PI_APPROVE in {h["session"]["session_id"] for h in hits}
    assert main(["show", PI_APPROVE[:16], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    texts = [m["text"] for m in shown["conversation"]]
    assert "please write out.txt" in texts and "Done: wrote out.txt." in texts
