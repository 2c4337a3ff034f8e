"""``usage`` and ``show`` on top of the history store: every real capture laid out where
its CLI keeps it, indexed, and counted as fresh parses of the files count it (each
Claude Code subagent's file in its parent session, each Codex rollout its own); a
session whose file was deleted still counts and is still shown; a second ``usage``
reads no transcript again."""

from __future__ import annotations

import os
import shutil
import zoneinfo
from pathlib import Path

import msgspec
import pytest

import agentspool
from agentspool.adapters import registry
from agentspool.cli.main import main
from agentspool.core.pricing import load_prices
from agentspool.core.seam import Message
from agentspool.core.usage import SessionInfo, UsageReport, usage_report

CAPTURES = Path(__file__).resolve().parent / "live" / "captures"


@pytest.fixture
def laid() -> dict[str, list[Path]]:
    """Every capture where its CLI keeps it: main transcript → its subagents' files
    (Claude Code's ``<session>/subagents/``; a Codex rollout has none of its own)."""
    mains: dict[str, list[Path]] = {}
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects")
    for transcript in sorted(CAPTURES.glob("claude-code/*/transcript")):
        target = projects / f"-work-{transcript.parent.name}"
        shutil.copytree(transcript, target)
        for main_file in sorted(target.glob("*.jsonl")):
            subagents = main_file.parent / main_file.stem / "subagents"
            mains[str(main_file)] = sorted(subagents.glob("agent-*.jsonl"))
    day = Path(os.environ["CODEX_HOME"], "sessions", "2026", "11", "30")
    day.mkdir(parents=True)
    for rollout in sorted(CAPTURES.glob("codex/*/rollout-*.jsonl")):
        shutil.copy(rollout, day)
        mains[str(day / rollout.name)] = []
    return mains


def _provider(path: str) -> str:
    return "codex" if os.path.basename(path).startswith("rollout-") else "claude-code"


def fresh_parse(provider: str, path: str | Path) -> list[Message]:
    return type(registry.load(provider))().read_chat("t", "", str(path)).messages


def from_the_files(laid: dict[str, list[Path]], **options: object) -> UsageReport:
    """What ``usage`` counted before the store: each session's file and its subagents'
    files parsed afresh, the session id the file's own (Claude Code: its name; Codex:
    the rollout's thread)."""
    sessions = []
    for path, subagents in laid.items():
        provider = _provider(path)
        chat = type(registry.load(provider))().read_chat("t", "", path)
        records = list(chat.messages)
        for sub in subagents:
            records += fresh_parse(provider, sub)
        session_id = Path(path).stem if provider == "claude-code" else path[-42:-6]
        info = SessionInfo(provider=provider, session_id=session_id, project=chat.cwd, path=path)
        sessions.append((info, records))
    return usage_report(sessions, prices=load_prices(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("by", ["session", "day", "model", "project"])
def test_usage_from_the_store_equals_usage_from_fresh_parses(laid, by) -> None:
    expected = from_the_files(laid, by=by, tz=zoneinfo.ZoneInfo("UTC"))
    assert agentspool.usage(by=by, timezone="UTC") == expected
    assert expected.total.total_tokens > 0


def test_every_session_with_usage_is_a_row_and_a_subagent_counts_in_its_parent(laid) -> None:
    rows = {(r.provider, r.key): r for r in agentspool.usage(by="session").rows}
    parents = [Path(p).stem for p, subs in laid.items() if subs]
    assert parents and all(("claude-code", p) in rows for p in parents)
    # A Codex sub-agent's rollout carries its own thread: its own row.
    with agentspool.open_history() as store:
        children = [s for s in store.sessions("codex") if s.parent_session_id]
    assert children and all(("codex", c.session_id) in rows for c in children)
    assert len(rows) >= 30


def _rewrite_in_place(path: str) -> None:
    """Same inode, size and modification time; every byte different."""
    before = os.stat(path)
    with open(path, "r+b") as fh:
        fh.write(b"\n" * before.st_size)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_second_usage_reads_no_transcript_again(laid) -> None:
    first = agentspool.usage(by="session")
    for path in [*laid, *(str(s) for subs in laid.values() for s in subs)]:
        _rewrite_in_place(path)  # read again, they would count nothing
    assert agentspool.usage(by="session") == first
    report = agentspool.index_history(usage_first=True)
    assert (report.bytes_read, report.records, report.unchanged) == (0, 0, report.files)


def test_a_deleted_session_still_counts_and_is_still_shown(laid, capsys) -> None:
    codex = next(p for p in laid if _provider(p) == "codex" and "01a229c1-51d" in p)
    claude = next(p for p, subs in laid.items() if subs)
    thread = codex[-42:-6]
    before_usage = agentspool.usage(by="session")
    assert main(["show", thread[:13], "--json"]) == 0
    before_detail = capsys.readouterr().out

    os.remove(codex)
    shutil.rmtree(Path(claude).parent / Path(claude).stem)
    os.remove(claude)

    assert agentspool.usage(by="session") == before_usage
    assert main(["show", thread[:13], "--json"]) == 0
    assert capsys.readouterr().out == before_detail  # the store's records: the same parse
    assert main(["show", Path(claude).stem[:10]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"claude-code session {Path(claude).stem}"
    assert any(line.endswith(f"{claude} (gone: read from the history store)") for line in out)
    view = agentspool.show_session(Path(claude).stem)
    assert view.gone
    own = [m for m in view.chat.messages if not m.agent_id]
    assert own and len(view.detail.subagents) == len(laid[claude])


def test_usage_counts_what_is_indexed_with_no_index_and_its_own_store(
    laid, tmp_path, capsys
) -> None:
    store = str(tmp_path / "elsewhere.sqlite")
    assert main(["usage", "--no-index", "--store", store, "--json"]) == 0
    assert msgspec.json.decode(capsys.readouterr().out)["rows"] == []
    assert main(["usage", "--store", store, "--json", "--by", "session"]) == 0
    rows = msgspec.json.decode(capsys.readouterr().out)["rows"]
    assert len(rows) >= 30
    assert not os.path.exists(Path(os.environ["AGENTSPOOL_DATA_DIR"], "history.sqlite"))
