"""Real users' transcripts: usage equal to ccusage's, every file read whole (issue 19).

Reads the corpus ``$AGENTSPOOL_REALWORLD`` names (real transcripts from public
repositories of many CLI versions, with ccusage 20.0.24's numbers on exactly those
files); skipped, with the reason shown, when it is not there. The rules learned from it
are guarded without it by the adapters' own small fixtures; this test is the proof on
the files people really have.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from realworld import FIELDS, PROVIDERS, Workspace, compare_usage, corpus_root, our_key, workspace

import agentspool
from agentspool.cli.main import main as cli_main

CORPUS = corpus_root()
pytestmark = pytest.mark.skipif(
    CORPUS is None,
    reason="AGENTSPOOL_REALWORLD does not name the real-world corpus (home/, expected/)",
)


@pytest.fixture(scope="module")
def ws() -> Iterator[Workspace]:
    assert CORPUS is not None
    with workspace(CORPUS) as made:
        yield made


@pytest.fixture(scope="module")
def usage(ws: Workspace):
    return compare_usage(ws)


def _entries() -> list[tuple[str, str]]:
    if CORPUS is None:
        return []
    import csv

    with (CORPUS / "MANIFEST.tsv").open(newline="") as fh:
        return [(row["provider"], row["path"]) for row in csv.DictReader(fh, delimiter="\t")]


# Sessions where agentspool knowingly differs from ccusage 20.0.24, each because ccusage
# is demonstrably wrong there (docs/adr/0025-usage.md names every case): agentspool's own
# figures, which the test holds it to (``None``: no row, every response counted in
# another session). (input, output, cache read, cache write)
_CODEX_DIFFERENCES: dict[str, tuple[int, int, int, int] | None] = {
    # A real 0.36 resume: the new file holds its parent 9cd28a74-…'s session_meta and
    # every line of it under the resume's time, 56 responses ccusage counts again.
    "613a9a68-8816-40b2-a2d4-041ade599da6": (66855, 16568, 819328, 0),
    # ccusage's own branch fixture: the branch's first line is the parent's, byte for
    # byte (same time, same running total): ccusage counts that response in both.
    "feb63163-7215-5332-a7da-2197510c0cec": (400, 250, 200, 0),
    # Forks (forked_from_id): ccusage counts the copied parent history again from the
    # parent's first resume on; agentspool counts a copy once, in the first session.
    "431790b2-d0e2-5617-b628-5dfeb2d61b19": (156480, 6959, 1646080, 0),
    "5842dc92-3faa-5de9-9266-6377fd2505d5": (2727, 63, 303, 0),
    "5bf7e4d0-56ff-5e12-94e5-6bb3ecff7985": (493008, 17481, 1400576, 0),
    # The same 158 responses at the same times as 5bf7e4d0's: counted there.
    "81857dd2-241c-57ab-b0d6-ee456da39fa4": None,
    # JSON written with spaces after the separators: ccusage reads none of its lines
    # (the same lines compacted, it counts them).
    "00000000-0000-0000-0000-000000000001": (1200, 50, 0, 0),
}
DIFFERENCES: dict[tuple[str, str], tuple[int, int, int, int] | None] = {
    **{("codex", key): figures for key, figures in _CODEX_DIFFERENCES.items()},
}


@pytest.fixture(scope="module")
def rows(ws: Workspace, usage) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """agentspool's ``usage --by session`` figures, by provider and ccusage's key."""
    done = ws.run("usage", "--by", "session", "--json", "--no-index")
    return {
        (row["provider"], our_key(row["provider"], row, ws.home)): tuple(
            row[name] for _, name in FIELDS
        )
        for row in json.loads(done.stdout)["rows"]
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_per_session_equals_ccusage(usage, rows, provider: str) -> None:
    counts, mismatches, extra = usage
    mine = [
        str(m)
        for m in mismatches
        if m.provider == provider and (provider, m.key) not in DIFFERENCES
    ]
    assert mine == [], f"{counts[provider][0]} of {counts[provider][1]} equal"
    extras = [key for key in extra if key.startswith(provider + " ")]
    assert [key for key in extras if tuple(key.split(" ", 1)) not in DIFFERENCES] == []
    for (owner, key), figures in DIFFERENCES.items():
        if owner == provider:
            assert rows.get((owner, key)) == figures, key


def _unreadable_lines(path: Path) -> int:
    """Lines of a JSONL file that are not a JSON object: what a reader must count as
    corrupt (and nothing else). A whole-document file counts 0 or 1."""
    data = path.read_bytes()
    if path.suffix == ".json":
        try:
            json.loads(data)
        except ValueError:
            return 1
        return 0
    bad = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            if not isinstance(json.loads(line), dict):
                bad += 1
        except ValueError:
            bad += 1
    return bad


def _run_id(path: str) -> str:
    return "rw-" + re.sub(r"[^A-Za-z0-9._-]", "-", Path(path).stem)[-60:]


@pytest.mark.parametrize(("provider", "path"), _entries(), ids=[p for _, p in _entries()])
def test_read_every_file_drops_nothing(ws: Workspace, provider: str, path: str) -> None:
    transcript = ws.root / path
    chat = agentspool.read_chat(
        provider, _run_id(path), transcript_path=str(transcript), live=False
    )
    drift = chat.drift.transcript
    assert drift.unknown_types == {}
    assert drift.unknown_fields == []
    assert drift.corrupt == _unreadable_lines(transcript)
    if any(m.kind == "text" and m.role == "user" and not m.is_meta for m in chat.messages):
        assert chat.state != "idle", "a conversation read as 'nothing has happened yet'"


@pytest.mark.parametrize(("provider", "path"), _entries(), ids=[p for _, p in _entries()])
def test_show_every_file(ws: Workspace, provider: str, path: str, monkeypatch, capfd) -> None:
    for name, value in ws.env.items():
        monkeypatch.setenv(name, value)
    status = cli_main(["show", str(ws.root / path), "--json"])
    out, err = capfd.readouterr()
    assert status == 0, err
    assert isinstance(json.loads(out), dict)
