"""The decision records keep the shape a successor relies on.

Each ADR says whether it still holds: a ``## Status`` section whose first line starts
with one of the words below (an ADR amended or superseded names the one that did it).
Numbers are unique, so "ADR 0031" always names one file.
"""

from __future__ import annotations

import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADR_DIR = os.path.join(REPO, "docs", "adr")
STATUS_WORDS = ("Accepted", "Proposed", "Superseded", "Deprecated")
_ADR_NAME = re.compile(r"^(\d{4})-[a-z0-9-]+\.md$")


def _adrs() -> list[str]:
    return sorted(
        name for name in os.listdir(ADR_DIR) if name.endswith(".md") and name[0].isdigit()
    )


def _status(text: str) -> str:
    lines = text.splitlines()
    start = lines.index("## Status") + 1
    for line in lines[start:]:
        if line.strip():
            return line.strip()
    return ""


@pytest.mark.parametrize("name", _adrs())
def test_every_adr_has_a_status(name: str) -> None:
    with open(os.path.join(ADR_DIR, name), encoding="utf-8") as f:
        text = f.read()
    assert "## Status" in text.splitlines(), f"{name}: no '## Status' section"
    assert _status(text).startswith(STATUS_WORDS), f"{name}: status {_status(text)!r}"


def test_adr_numbers_are_unique() -> None:
    names = _adrs()
    assert all(_ADR_NAME.match(n) for n in names), [n for n in names if not _ADR_NAME.match(n)]
    numbers = [int(n[:4]) for n in names]
    assert len(set(numbers)) == len(numbers), sorted(n for n in numbers if numbers.count(n) > 1)


def test_the_version_is_the_last_released_changelog_section() -> None:
    """The CHANGELOG is kept in released sections, newest first, under ``[Unreleased]``;
    the package says the version of the last one."""
    import tomllib

    import agentspool

    with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as f:
        headings = [line for line in f.read().splitlines() if line.startswith("## ")]
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert headings[0] == "## [Unreleased]"
    released = [
        re.fullmatch(r"## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}", h) for h in headings[1:]
    ]
    assert all(released), headings
    versions = [m.group(1) for m in released if m]
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    assert versions[0] == version == agentspool.__version__
