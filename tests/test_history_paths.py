"""The default history store is where platformdirs says the user's data dir is: the Linux
rule ``default_store_path`` writes out (to spare the import) gives platformdirs' answer
for every way the environment can name it."""

from __future__ import annotations

import os
import sys

import platformdirs
import pytest

import agentspool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux rule")


@pytest.mark.parametrize("xdg", [None, "", "   ", "/srv/data", "relative/data", "/srv/data/"])
@pytest.mark.parametrize("home", ["absolute", "relative/home"])
def test_the_default_store_is_in_platformdirs_data_dir(monkeypatch, tmp_path, xdg, home) -> None:
    monkeypatch.delenv("AGENTSPOOL_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path) if home == "absolute" else home)
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    expected = os.path.join(
        platformdirs.user_data_dir("agentspool", appauthor=False), "history.sqlite"
    )
    assert agentspool.default_store_path() == expected


def test_the_data_dir_variable_wins(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTSPOOL_DATA_DIR", str(tmp_path / "mine"))
    assert agentspool.default_store_path() == str(tmp_path / "mine" / "history.sqlite")
