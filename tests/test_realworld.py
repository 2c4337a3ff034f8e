"""Real users' transcripts: usage equal to ccusage's, every file read whole (issue 19).

Reads the corpus ``$AGENTSPOOL_REALWORLD`` names (real transcripts from public
repositories of many CLI versions, with ccusage 20.0.24's numbers on exactly those
files); skipped, with the reason shown, when it is not there. The rules learned from it
are guarded without it by the adapters' own small fixtures; this test is the proof on
the files people really have.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from realworld import PROVIDERS, Workspace, compare_usage, corpus_root, workspace

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


@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_per_session_equals_ccusage(usage, provider: str) -> None:
    """Each session's figures are ccusage's, or where agentspool knowingly counts
    otherwise (``realworld.DOCUMENTED``, ADR 0025), the documented ones; a documented
    session the corpus no longer holds is a mismatch too."""
    counts, mismatches, extra = usage
    mine = [str(m) for m in mismatches if m.provider == provider]
    assert mine == [], f"{counts[provider][0]} of {counts[provider][1]} equal"
    assert [key for key in extra if key.startswith(provider + " ")] == []


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
    # A prompt someone sent (context a CLI injects as a user message is no conversation:
    # a Codex session started and left holds only that).
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


_CLAUDE_FILES = [
    p for provider, p in _entries() if provider == "claude-code" and p.endswith(".jsonl")
]


@pytest.mark.parametrize("scan_from", [None, 0], ids=["as-sized", "all-scanned"])
@pytest.mark.parametrize("path", _CLAUDE_FILES, ids=_CLAUDE_FILES)
def test_the_usage_view_of_every_claude_code_file_is_its_full_parse(
    ws: Workspace, path: str, scan_from: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADR 0043: what the first ``usage`` stores of a file is what the full parse gives it,
    the file scanned or read whole (ADR 0057; ``all-scanned``: a scan tried on every file)."""
    from agentspool.adapters import registry
    from agentspool.adapters.claude_code import _usage_view

    if scan_from is not None:
        monkeypatch.setattr(_usage_view, "SCAN_FROM", scan_from)
    from agentspool.core.usage_first import full_usage_view

    history = registry.load("claude-code").history
    assert history is not None
    transcript = str(ws.root / path)
    view = history.usage_view(transcript)
    full = full_usage_view(history.resume_transcript(transcript, 0, b""))
    unnumbered = [msgspec.structs.astuple(r)[1:] for r in view.rows]
    assert unnumbered == [msgspec.structs.astuple(r)[1:] for r in full.rows]
    # The view reads no title: the records bring it (ADR 0063).
    untitled = msgspec.structs.replace(full.facts, title="")
    assert (view.facts, view.first, view.last) == (untitled, full.first, full.last)


@pytest.mark.parametrize("by", ["session", "day"])
def test_a_first_usage_reports_what_the_whole_index_reports(
    ws: Workspace, usage, by: str, tmp_path: Path
) -> None:
    """ADR 0061: the first ``usage`` on a machine (no store yet) folds each file where it
    is parsed, and reads back only the usage of files that share a response with
    another; its report is the one a whole index of the same files gives
    (``compare_usage`` indexed them whole)."""
    fresh = dataclasses.replace(ws, env={**ws.env, "AGENTSPOOL_DATA_DIR": str(tmp_path)})
    first = json.loads(fresh.run("usage", "--by", by, "--json").stdout)
    whole = json.loads(ws.run("usage", "--by", by, "--json", "--no-index").stdout)
    assert first == whole
    assert len(first["rows"]) > 50
