"""One read is one run handle (ADR 0042): the run id checked once, the spool refreshed
once, the transcript checked once — counted on a warm run, the read a watcher repeats."""

from __future__ import annotations

import collections
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.adapters import registry
from agentspool.adapters.common.spooled import SpoolBackedAdapter
from agentspool.adapters.testing import load_kit
from agentspool.spool import layout
from agentspool.spool.read import SpoolReader
from agentspool.spool.write import EVENTS_FILE


def _counting(counts: collections.Counter[str], key: str, func: Callable[..., Any]) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return func(*args, **kwargs)

    return counted


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    found: collections.Counter[str] = collections.Counter()
    monkeypatch.setattr(
        layout, "run_id_problem", _counting(found, "run id checked", layout.run_id_problem)
    )
    read = SpoolReader.read

    def refresh(self: SpoolReader) -> Any:
        found["spool refreshed" if self.name == EVENTS_FILE else "ledger read"] += 1
        return read(self)

    monkeypatch.setattr(SpoolReader, "read", refresh)
    return found


@pytest.fixture(params=registry.builtin_names())
def armed(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[SpoolBackedAdapter[Any, Any], str, str]:
    name = str(request.param)
    runtime = str(tmp_path / "rt")
    layout.ensure_run_dir(runtime, "run-1")
    kit = load_kit(name)
    path = kit.transcript(str(tmp_path), 2)
    kit.open_prompt(runtime, "run-1", path)
    adapter = registry.load(name)
    assert isinstance(adapter, SpoolBackedAdapter)
    adapter.read_chat("run-1", runtime, None)  # warm: the views exist, as in a watcher
    kit.append_turn(path)
    return adapter, runtime, path


def test_one_read_chat_checks_the_run_id_once_and_refreshes_the_spool_once(
    armed: tuple[SpoolBackedAdapter[Any, Any], str, str],
    counts: collections.Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    adapter, runtime, path = armed
    monkeypatch.setattr(
        adapter,
        "_transcript_exists",
        _counting(counts, "transcript checked", adapter._transcript_exists),
    )
    chat = adapter.read_chat("run-1", runtime, None)
    assert chat.transcript_path == path
    assert counts == {"run id checked": 1, "spool refreshed": 1, "transcript checked": 1}


def test_one_public_read_chat_refreshes_the_spool_once(
    armed: tuple[SpoolBackedAdapter[Any, Any], str, str], counts: collections.Counter[str]
) -> None:
    adapter, runtime, path = armed
    chat = agentspool.read_chat(adapter.name, "run-1", runtime)
    assert chat.transcript_path == path
    assert counts["spool refreshed"] == 1
    # The run dir's ledger (core's, for the run's end and declarations) names the run
    # too: that is the one other check.
    assert counts["run id checked"] == 2
    assert os.path.isdir(os.path.join(runtime, "run-1"))
