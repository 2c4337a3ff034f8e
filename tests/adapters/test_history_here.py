"""A provider with nothing on this machine is not loaded for the history (ADR 0062):
``registry.history_here`` asks where its CLI keeps what the history reads (the
subpackage's ``_home``, standard library only) without importing the adapter. The index
still reads a provider the store holds sessions of, so that a home removed since marks
them gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters import registry
from agentspool.core.history import _discover

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"

_IMPORT_HOME = """
import json, sys
from agentspool.adapters import registry
registry.history_here(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("name", sorted(registry.BUILTIN))
def test_asking_whether_a_provider_has_history_loads_none_of_it(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_HOME, name],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = set(json.loads(done.stdout))
    package = f"agentspool.adapters.{registry.BUILTIN[name].package}"
    assert {m for m in modules if m.startswith(package)} == {package, f"{package}._home"}
    assert "msgspec" not in modules


@pytest.mark.parametrize("name", sorted(registry.BUILTIN))
def test_a_provider_has_history_here_once_its_home_exists(name: str) -> None:
    """The conftest's private homes are named, not made: nothing is there yet, and the
    adapter lists nothing either (what makes passing it over safe)."""
    assert not registry.history_here(name)
    assert _discover(registry.load(name)) == []
    home = Path(registry.BUILTIN[name].where())
    home.parent.mkdir(parents=True, exist_ok=True)
    if name == "opencode":
        home.write_bytes(b"")  # its session database
    else:
        home.mkdir()
    assert registry.history_here(name)


def test_an_installed_adapter_is_always_asked() -> None:
    assert registry.history_here("no-such-provider-installed")


def test_a_provider_whose_home_is_gone_has_its_sessions_marked_gone() -> None:
    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    transcripts = sorted(CAPTURES.glob("claude-code/*/transcript/*.jsonl"))[:3]
    for n, transcript in enumerate(transcripts):
        folder = config / "projects" / f"-work-{n}"
        folder.mkdir(parents=True)
        shutil.copy(transcript, folder / transcript.name)
    first = agentspool.index_history()
    assert (first.new, first.gone) == (len(transcripts), 0)
    shutil.rmtree(config)
    assert not registry.history_here("claude-code")
    again = agentspool.index_history()
    assert again.gone == len(transcripts)
    with agentspool.open_history() as store:
        assert all(s.gone for s in store.sessions("claude-code"))
