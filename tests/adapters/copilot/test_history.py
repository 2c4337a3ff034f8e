"""Copilot CLI sessions in the history index: every captured ``events.jsonl`` laid out
where the CLI keeps it (``<COPILOT_HOME>/session-state/<id>/``), indexed, then counted,
shown and searched as ``agentspool index`` / ``usage`` / ``show`` / ``search`` do."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agentspool.adapters.copilot import Copilot
from agentspool.cli.main import main
from agentspool.core.history import index_history
from agentspool.core.store import SessionStore
from tests.adapters.copilot.conftest import CAPTURES


@pytest.fixture
def laid() -> dict[str, Path]:
    """Session id → its captured transcript, each copied where Copilot keeps it."""
    sessions = {}
    base = Path(os.environ["COPILOT_HOME"], "session-state")
    for path in sorted(CAPTURES.glob("*/session-state/*/events.jsonl")):
        target = base / path.parent.name / path.name
        target.parent.mkdir(parents=True)
        shutil.copyfile(path, target)
        sessions[path.parent.name] = path
    return sessions


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> object:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _own_sums(path: Path) -> dict[str, int]:
    """The CLI's own sums of the session's model calls (``session.shutdown``)."""
    shutdown = [json.loads(line) for line in path.read_text().splitlines() if "shutdown" in line]
    [metrics] = shutdown[-1]["data"]["modelMetrics"].values()
    return metrics["usage"]


def test_usage_per_session_equals_the_cli_own_sums(
    laid: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Copilot's ``inputTokens`` already hold the cached ones (docs/providers/copilot.md
    §3): ``usage`` keeps them apart, so its input is the rest."""
    report = _json(["usage", "--by", "session", "--provider", "copilot"], capsys)
    assert isinstance(report, dict)
    rows = {row["key"]: row for row in report["rows"]}
    assert set(rows) == set(laid)
    for session, path in laid.items():
        own, row = _own_sums(path), rows[session]
        assert (row["input_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (
            own["inputTokens"] - own["cacheReadTokens"],
            own["cacheReadTokens"],
            own["outputTokens"],
        ), session
        assert row["models"] == ["mock-model"]


def test_an_index_resumes_where_it_stopped(laid: dict[str, Path], tmp_path: Path) -> None:
    """A session's file grown after it was indexed is read from where the index stopped;
    its records are the fresh parse's."""
    session, source = next(iter(laid.items()))
    target = Path(os.environ["COPILOT_HOME"], "session-state", session, "events.jsonl")
    lines = source.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    target.write_bytes(b"".join(lines[:half]))
    with SessionStore(str(tmp_path / "history.sqlite")) as store:
        index_history(store, [Copilot()])
        with open(target, "ab") as fh:
            fh.writelines(lines[half:])
        grown = index_history(store, [Copilot()])
        assert grown.appended == 1, grown
        (found,) = store.find_sessions(str(target))
        assert store.records(found.id) == Copilot().read_chat("r", "", str(target)).messages


def test_show_and_search_find_a_copilot_session(
    laid: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    session = next(s for s, p in laid.items() if p.parts[-4] == "tui-approve")
    detail = _json(["show", session], capsys)
    assert isinstance(detail, dict)
    texts = json.dumps(detail["conversation"])
    assert "please write out.txt" in texts and "Done: wrote out.txt." in texts
    hits = _json(["search", "wrote", "--provider", "copilot"], capsys)
    assert isinstance(hits, list) and hits
    assert {h["session"]["provider"] for h in hits} == {"copilot"}
    assert session in {h["session"]["session_id"] for h in hits}
