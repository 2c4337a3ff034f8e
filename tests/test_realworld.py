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


_DAAAIN = "rw-daaain-claude-code-log-test-test_data"
_HAPPY = "rw-slopus-happy-packages-happy-cli-src-claude-utils-__fixtures__"
# Sessions where agentspool knowingly differs from ccusage 20.0.24, each because ccusage is
# wrong there (docs/adr/0025-usage.md names every case): "<provider> <key>" → why. The
# Claude Code ones are all in other tools' test fixtures, none in a real user's session.
KNOWN_DIFFERENCES: dict[str, str] = {
    f"claude-code {_HAPPY}/duplicate-assistant-response.jsonl": "ccusage counts one response "
    "twice: two lines of message msg_01R62…, one without requestId (its key is id+requestId)",
    "claude-code rw-slopus-happy-cli-src-claude-sessionWatcherFixtures/resumed-session.jsonl": (
        "ccusage counts one response twice: two lines of msg_01Knc…, one without requestId"
    ),
    f"claude-code {_DAAAIN}/representative_messages.jsonl": "ccusage skips a line written "
    'with a space after a colon ("usage": {…}): valid JSON, and no row for the file',
    f"claude-code {_DAAAIN}/session_b.jsonl": "ccusage skips a line written with a space "
    "after a colon: no row for the file",
    f"claude-code {_DAAAIN}/edge_cases.jsonl": "ccusage skips its lines written with a space "
    "after a colon; its one other response (msg_004) is todowrite_examples' at the same time, "
    "which ccusage keeps in the file whose path sorts first",
    f"claude-code {_DAAAIN}/todowrite_examples.jsonl": "its hand-written ids msg_002…msg_010 "
    "repeat representative_messages' (which ccusage never reads, above); agentspool counts an "
    "id once, in the session that began first — and keeps msg_004, which edge_cases repeats",
    "claude-code rw-Dicklesworthstone-coding_agent_session_search-tests-fixtures-"
    "message_grouping/edge_cases.jsonl": "named like daaain's edge_cases.jsonl in another "
    "project: one session id, so one session, shown at the path that sorts first; its usage is "
    "daaain's, whose lines ccusage skips (above)",
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_per_session_equals_ccusage(usage, provider: str) -> None:
    counts, mismatches, extra = usage
    mine = [str(m) for m in mismatches if m.provider == provider]
    unexplained = [m for m in mine if m.split(":")[0] not in KNOWN_DIFFERENCES]
    assert unexplained == [], f"{counts[provider][0]} of {counts[provider][1]} equal"
    extras = [key for key in extra if key.startswith(provider + " ")]
    assert [key for key in extras if key not in KNOWN_DIFFERENCES] == []
    # A documented difference that no longer is one is noticed (and its entry removed).
    differing = {m.split(":")[0] for m in mine} | set(extras)
    documented = {key for key in KNOWN_DIFFERENCES if key.startswith(provider + " ")}
    assert documented <= differing


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


@pytest.mark.parametrize("path", _CLAUDE_FILES, ids=_CLAUDE_FILES)
def test_the_usage_view_of_every_claude_code_file_is_its_full_parse(
    ws: Workspace, path: str
) -> None:
    """ADR 0043: what the first ``usage`` stores of a file is what the full parse gives it."""
    from agentspool.adapters import registry
    from agentspool.core.usage_first import full_usage_view

    history = registry.load("claude-code").history
    assert history is not None
    transcript = str(ws.root / path)
    view = history.usage_view(transcript)
    full = full_usage_view(history.resume_transcript(transcript, 0, b""))
    assert [r[1:] for r in view.rows] == [r[1:] for r in full.rows]
    assert (view.facts, view.first, view.last) == (full.facts, full.first, full.last)
