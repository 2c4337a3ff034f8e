"""One read is one run handle (ADR 0042): the run id checked once, the spool refreshed
once, the transcript checked once — counted on a warm run, the read a watcher repeats.

Last, the same read of a spool the real hook wrote (issue 20): the hook runs as the CLI
runs it (the command ``setup`` bakes, a payload on stdin), and the functions counted are
the real ones, wrapped wherever a module holds them — the run dir computed once too."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.adapters import registry
from agentspool.adapters.common.commands import hook_command
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


# Provider → (hook module, the hooks of a prompt opening, the payload's ids).
HOOKS: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "claude-code": (
        "claude_code",
        ["SessionStart", "UserPromptSubmit"],
        {"session_id": "5e55a1d0-0000-4000-8000-00000000c0de", "prompt_id": "p1"},
    ),
    "codex": (
        "codex",
        ["SessionStart", "UserPromptSubmit"],
        {"session_id": "01a229b9-9fc2-7942-86e4-00000000c0de", "turn_id": "t1"},
    ),
}


def _wrap_everywhere(
    monkeypatch: pytest.MonkeyPatch, counts: collections.Counter[str], key: str, func: Any
) -> None:
    """``func`` counted in its own module and in every loaded module that imported it."""
    wrapped = _counting(counts, key, func)
    for name, module in list(sys.modules.items()):
        if name.startswith("agentspool") and getattr(module, func.__name__, None) is func:
            monkeypatch.setattr(module, func.__name__, wrapped)


@pytest.fixture(params=sorted(HOOKS))
def hooked(
    request: pytest.FixtureRequest, tmp_path: Path, silent: Callable[..., None]
) -> tuple[SpoolBackedAdapter[Any, Any], str, str]:
    name = str(request.param)
    module, events, ids = HOOKS[name]
    runtime = str(tmp_path / "rt")
    spawn = agentspool.setup(name, "run-1", runtime)
    kit = load_kit(name)
    path = kit.transcript(str(tmp_path), 2)
    for event in events:
        payload = {**ids, "transcript_path": path, "cwd": "/work", "hook_event_name": event}
        silent(
            subprocess.run(
                hook_command(module, event),
                shell=True,
                input=json.dumps(payload).encode(),
                env={"PATH": "/usr/bin:/bin", **spawn.env},
                capture_output=True,
                check=False,
                timeout=60,
            )
        )
    assert [r.event for r in SpoolReader(spawn.run_dir).read()] == events
    adapter = registry.load(name)
    assert isinstance(adapter, SpoolBackedAdapter)
    adapter.read_chat("run-1", runtime, None)  # warm: the views exist, as in a watcher
    kit.append_turn(path)
    return adapter, runtime, path


def test_one_read_chat_does_each_step_once(
    hooked: tuple[SpoolBackedAdapter[Any, Any], str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter, runtime, path = hooked
    counts: collections.Counter[str] = collections.Counter()
    _wrap_everywhere(monkeypatch, counts, "run id validated", layout.run_id_problem)
    _wrap_everywhere(monkeypatch, counts, "run dir computed", layout.run_dir)
    read = SpoolReader.read

    def refresh(self: SpoolReader) -> Any:
        counts["spool refreshed" if self.name == EVENTS_FILE else "other spool file"] += 1
        return read(self)

    monkeypatch.setattr(SpoolReader, "read", refresh)
    monkeypatch.setattr(
        adapter,
        "_transcript_exists",
        _counting(counts, "transcript checked", adapter._transcript_exists),
    )
    chat = adapter.read_chat("run-1", runtime, None)
    assert chat.transcript_path == path
    assert chat.state == "working"  # the prompt the hook saw opened a turn
    assert counts == {
        "run id validated": 1,
        "run dir computed": 1,
        "spool refreshed": 1,
        "transcript checked": 1,
    }
