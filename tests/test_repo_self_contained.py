"""Nothing in the repository cites a file outside it.

A successor gets this repository and nothing else: a citation of private research
notes, of a design brief that lives elsewhere, of a sibling folder (``../shared/…``) or of
the author's workspace (``/work/…``) points at text they cannot read. Facts about the
agent CLIs live in ``docs/providers/``, decisions in ``docs/adr/``.

Every tracked file is checked, except the raw data of the captures
(``tests/live/captures/<provider>/<scenario>/…``: what the real CLIs wrote, temp paths
and all). The captures' READMEs and recording scripts are checked.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/live/captures/<provider>/<scenario>/…: deeper files are raw capture data.
CAPTURE_DATA_DEPTH = 5

RESEARCH = re.compile(r"\bresearch(?:/|\s*§|\s+notes?\b)", re.IGNORECASE)
DESIGN = re.compile(r"\bDESIGN\.md\b", re.IGNORECASE)
# A run of "../" that starts a path (not the tail of ".../" or of "a/../").
PARENT_PATH = re.compile(r"(?<![\w.~/-])((?:\.\./)+[\w.-]*)")
# An absolute path starts a word: after a line start, a space, a quote, a bracket…
_PATH_START = r"(?:^|(?<=[\s\"'`(\[{=,:;]))"


def _outside_roots() -> list[str]:
    """Absolute roots outside the checkout: the workspace the project is developed in,
    and the folder holding this checkout (where notes beside it would live)."""
    roots = ["/work/"]
    parent = os.path.dirname(REPO)
    # A checkout cloned into a temp dir (CI) has a parent every tool writes under: paths
    # like /tmp/cap-<scenario>-XXXX/ in the captures' notes are about the CLIs, not notes.
    shared = {"/", "", "/tmp", "/var/tmp", tempfile.gettempdir().rstrip("/")}
    if str(parent).rstrip("/") not in shared:
        roots.append(str(parent).rstrip("/") + "/")
    return roots


ABSOLUTE = re.compile(
    _PATH_START + "(" + "|".join(re.escape(r) for r in _outside_roots()) + ")",
    re.MULTILINE,
)


def offences(path: str, text: str) -> list[str]:
    """One ``path:line: what`` entry per citation of something outside the repository."""
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        if RESEARCH.search(line):
            found.append(f"{where}: cites research notes: {line.strip()}")
        if DESIGN.search(line):
            found.append(f"{where}: cites DESIGN.md: {line.strip()}")
        if ABSOLUTE.search(line):
            found.append(f"{where}: cites an absolute path outside the repo: {line.strip()}")
        for match in PARENT_PATH.finditer(line):
            target = os.path.normpath(os.path.join(os.path.dirname(path), match.group(1)))
            if target == ".." or target.startswith("../"):
                found.append(f"{where}: relative path leaves the repo: {match.group(1)}")
    return found


def _tracked_files() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "-C", REPO, "ls-files", "-z"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no tracked-file list to check")
    files = [p for p in listed.decode().split("\0") if p]
    this = os.path.relpath(os.path.abspath(__file__), REPO)
    return [
        p
        for p in files
        if p != this
        and not (p.startswith("tests/live/captures/") and len(p.split("/")) > CAPTURE_DATA_DEPTH)
    ]


def test_no_tracked_file_cites_anything_outside_the_repository() -> None:
    found: list[str] = []
    checked = 0
    for path in _tracked_files():
        try:
            with open(os.path.join(REPO, path), "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            continue  # deleted in the work tree, not yet in the index
        if b"\0" in data:
            continue  # binary
        checked += 1
        found += offences(path, data.decode("utf-8", "replace"))
    assert checked > 50, f"only {checked} files checked: is the file list right?"
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("adapters/x.py", "Facts: research/claude-code-2.1.328.md §2.4."),
        ("adapters/x.py", "# no dialog is shown (research §2.4)"),
        ("tests/live/harness/README.md", "see the research notes)."),
        ("docs/adr/0001-x.md", 'adapters (DESIGN.md "The parts")'),
        ("docs/adr/0001-x.md", "as ../../shared/research/style.md says"),
        ("README.md", "[brief](../DESIGN-notes.txt)"),
        ("tests/x.py", "Run: cd /work/main && make test"),
        ("tests/x.py", "    `/work/shared/notes.md`"),
        *(
            [("tests/x.py", f'"{_outside_roots()[-1]}elsewhere/notes.md"')]
            if len(_outside_roots()) > 1
            else []
        ),
    ],
)
def test_each_kind_of_outside_citation_is_caught(path: str, line: str) -> None:
    assert offences(path, line), line


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("adapters/x.py", "Facts: docs/providers/claude-code.md §3.5."),
        ("tests/live/harness/README.md", "| `../test_harness_claude.py` | smoke tests |"),
        ("tests/spool/test_layout.py", '["..", "../x", "a/b"]'),
        ("tests/live/harness/codex.py", "# the node launcher's exe is .../node"),
        ("tests/live/harness/claude.py", "<root>/work/            the session's cwd"),
        ("benchmarks/hooks.py", '"cwd": "/home/user/src/app",'),
        ("docs/adr/0002-x.md", "research into the trade-offs is recorded here"),
    ],
)
def test_paths_inside_the_repository_and_plain_words_pass(path: str, line: str) -> None:
    assert offences(path, line) == []
