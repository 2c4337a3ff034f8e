"""The history index (``core/history.py``): every real capture found where the CLIs keep
them and ingested as a fresh parse would read it; a file costs what it gained; rewritten,
truncated, replaced, compressed and deleted files; one transaction per file, proven by
killing the indexer (SIGKILL) mid-run; search over what was indexed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentspool.adapters import registry
from agentspool.adapters.claude_code import _usage_view
from agentspool.adapters.claude_code._adapter import ClaudeCode
from agentspool.core import history, store_schema, usage_first
from agentspool.core.history import IndexReport, index_file, index_history
from agentspool.core.seam import Adapter, Message, TranscriptFile, Usage
from agentspool.core.store import SessionStore

CAPTURES = Path(__file__).resolve().parents[1] / "live" / "captures"
PROVIDERS = ("claude-code", "codex")


def fresh(provider: str) -> Adapter:
    return type(registry.load(provider))()


def adapters() -> list[Adapter]:
    return [fresh(name) for name in PROVIDERS]


def fresh_parse(provider: str, path: str) -> list[Message]:
    return fresh(provider).read_chat("run-1", "", path).messages


def lay_out_captures() -> dict[str, str]:
    """Every real capture copied to where its CLI keeps transcripts (the test's private
    ``$CLAUDE_CONFIG_DIR`` and ``$CODEX_HOME``): path → provider."""
    laid: dict[str, str] = {}
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects")
    for transcript in sorted(CAPTURES.glob("claude-code/*/transcript")):
        target = projects / f"-work-{transcript.parent.name}"
        shutil.copytree(transcript, target, ignore=shutil.ignore_patterns("*.meta.json"))
        laid.update({str(p): "claude-code" for p in target.rglob("*.jsonl")})
    sessions = Path(os.environ["CODEX_HOME"], "sessions", "2026", "11")
    for rollout in sorted(CAPTURES.glob("codex/*/rollout-*.jsonl")):
        target = sessions / rollout.parent.name / rollout.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rollout, target)
        laid[str(target)] = "codex"
    return laid


@pytest.fixture
def laid() -> dict[str, str]:
    return lay_out_captures()


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with SessionStore(str(tmp_path / "history.sqlite")) as opened:
        yield opened


def stored(store: SessionStore) -> dict[str, tuple[tuple[Any, ...], list[Message]]]:
    """What the store holds per file: the session's facts and its records."""
    return {
        s.path: (
            (s.provider, s.session_id, s.agent_id, s.parent_session_id, s.cwd, s.title, s.gone),
            store.records(s.id),
        )
        for s in store.sessions()
    }


def test_every_real_capture_is_found_and_indexed_as_a_fresh_parse(
    store: SessionStore, laid: dict[str, str]
) -> None:
    report = index_history(store, adapters())
    assert (report.files, report.new, report.failed, report.errors) == (len(laid), len(laid), 0, [])
    assert report.bytes_read == sum(os.path.getsize(p) for p in laid)
    sessions = {s.path: s for s in store.sessions()}
    assert sorted(sessions) == sorted(laid)
    for path, provider in laid.items():
        session = sessions[path]
        records = store.records(session.id)
        assert records == fresh_parse(provider, path), path
        assert session.provider == provider and session.records == len(records)
        assert session.session_id and session.cwd
        if records:
            assert 0 < session.started <= session.updated
    subagents = [s for s in sessions.values() if s.agent_id]
    assert {s.provider for s in subagents} == {"claude-code", "codex"}
    claude_child = next(s for s in subagents if s.provider == "claude-code")
    assert "/subagents/agent-" in claude_child.path
    assert claude_child.parent_session_id == claude_child.session_id  # the parent's id
    codex_child = next(s for s in subagents if s.provider == "codex")
    assert codex_child.parent_session_id in {s.session_id for s in sessions.values()}
    assert any(s.title for s in sessions.values())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_real_capture_indexed_piece_by_piece_equals_a_fresh_parse(
    store: SessionStore, laid: dict[str, str], provider: str
) -> None:
    """Each file grows in pieces (ending mid-line, on a line's end, a single byte); each
    piece is indexed by a fresh adapter, in 257-byte blocks, from the saved state."""
    for path in [p for p, name in laid.items() if name == provider]:
        whole = Path(path).read_bytes()
        cuts = sorted({len(whole) // 5, len(whole) // 2, len(whole) // 2 + 1, len(whole)})
        Path(path).write_bytes(b"")
        done = 0
        verdicts = []
        for cut in cuts:
            with open(path, "ab") as fh:
                fh.write(whole[done:cut])
            done = cut
            verdict, _ = index_file(store, fresh(provider), TranscriptFile(path=path), chunk=257)
            verdicts.append(verdict)
            (session,) = store.find_sessions(path)
            assert store.records(session.id) == fresh_parse(provider, path), (path, cut)
        assert verdicts == ["new"] + ["appended"] * (len(cuts) - 1), path


def test_a_second_run_with_nothing_changed_reads_and_writes_nothing(
    store: SessionStore, laid: dict[str, str]
) -> None:
    index_history(store, adapters())
    before = stored(store)
    report = index_history(store, adapters())
    assert (report.unchanged, report.bytes_read, report.records) == (len(laid), 0, 0)
    assert stored(store) == before


def test_appended_bytes_cost_what_was_appended(store: SessionStore, tmp_path: Path) -> None:
    from agentspool.adapters.testing import load_kit

    paths = {}
    for provider, home in (
        ("claude-code", os.environ["CLAUDE_CONFIG_DIR"]),
        ("codex", os.environ["CODEX_HOME"]),
    ):
        kit = load_kit(provider)
        path = kit.transcript(str(tmp_path / provider), 2)
        target = Path(home) / Path(path).relative_to(
            tmp_path / provider / (".claude" if provider == "claude-code" else "")
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
        paths[provider] = (kit, str(target))
    index_history(store, adapters())
    kit, path = paths["codex"]
    appended = kit.append_turn(path)
    report = index_history(store, adapters())
    assert (report.appended, report.unchanged, report.bytes_read) == (1, 1, len(appended))
    assert stored(store)[path][1] == fresh_parse("codex", path)


def _one_session(store: SessionStore, provider: str, path: str) -> list[Message]:
    (session,) = store.find_sessions(path)
    assert not session.gone
    records = store.records(session.id)
    assert records == fresh_parse(provider, path)
    assert session.records == len(records)
    return records


def _capture(provider: str) -> str:
    return {
        "claude-code": "claude-code/tui-multi-block/transcript/*.jsonl",
        "codex": "codex/b_exec_commands/rollout-*.jsonl",
    }[provider]


@pytest.fixture(params=PROVIDERS)
def one(request: pytest.FixtureRequest, store: SessionStore) -> tuple[str, str]:
    """One capture where its CLI keeps it, indexed: (provider, path)."""
    provider = str(request.param)
    (source,) = CAPTURES.glob(_capture(provider))
    if provider == "claude-code":
        target = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-work", source.name)
    else:
        target = Path(os.environ["CODEX_HOME"], "sessions", "2026", "11", "30", source.name)
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    assert index_history(store, adapters()).new == 1
    return provider, str(target)


def _cut_at_a_line(path: str, share: float) -> None:
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: data.rfind(b"\n", 0, int(len(data) * share)) + 1])


def test_a_truncated_file_is_read_again(store: SessionStore, one: tuple[str, str]) -> None:
    provider, path = one
    full = _one_session(store, provider, path)
    _cut_at_a_line(path, 0.5)
    report = index_history(store, adapters())
    assert report.rewritten == 1
    assert len(_one_session(store, provider, path)) < len(full)


def test_a_rewritten_file_that_grew_is_read_again(
    store: SessionStore, one: tuple[str, str]
) -> None:
    """Same inode, bigger, but the bytes already parsed changed: not an append."""
    provider, path = one
    data = Path(path).read_bytes()
    # The last line parsed is replaced by itself with a prompt-less record: the tail of
    # the parsed part differs, the head does not.
    lines = data.splitlines(keepends=True)
    with open(path, "r+b") as fh:
        fh.truncate(len(data) - len(lines[-1]))
        fh.write(lines[0] + lines[-1])
    report = index_history(store, adapters())
    assert (report.rewritten, report.appended) == (1, 0)
    _one_session(store, provider, path)


def test_a_replaced_file_is_read_again(store: SessionStore, one: tuple[str, str]) -> None:
    provider, path = one
    data = Path(path).read_bytes()
    replacement = path + ".new"
    Path(replacement).write_bytes(data + data.splitlines(keepends=True)[-1])
    os.replace(replacement, path)
    report = index_history(store, adapters())
    assert report.rewritten == 1
    _one_session(store, provider, path)


def test_a_state_this_version_cannot_resume_means_a_full_read(
    store: SessionStore, one: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, path = one
    module = {
        "claude-code": "agentspool.adapters.claude_code._transcript",
        "codex": "agentspool.adapters.codex._rollout",
    }[provider]
    monkeypatch.setattr(f"{module}.RESUME_VERSION", 99)
    lines = Path(path).read_bytes().splitlines(keepends=True)
    _cut_at_a_line(path, 0.5)
    index_history(store, adapters())
    with open(path, "ab") as fh:
        fh.write(b"".join(lines)[os.path.getsize(path) :])
    monkeypatch.setattr(f"{module}.RESUME_VERSION", 100)
    report = index_history(store, adapters())
    assert (report.rewritten, report.appended) == (1, 0)
    _one_session(store, provider, path)


def test_a_deleted_file_keeps_its_session_marked_gone_until_forgotten(
    store: SessionStore, one: tuple[str, str]
) -> None:
    provider, path = one
    records = _one_session(store, provider, path)
    kept = Path(path).read_bytes()
    os.remove(path)
    report = index_history(store, adapters())
    assert (report.gone, report.files) == (1, 0)
    (session,) = store.find_sessions(path)
    assert session.gone and store.records(session.id) == records
    assert index_history(store, adapters()).gone == 0, "found gone once"
    Path(path).write_bytes(kept)  # back again (maybe with the same inode): no longer gone
    assert index_history(store, adapters()).failed == 0
    _one_session(store, provider, path)
    os.remove(path)
    report = index_history(store, adapters(), forget_gone=True)
    assert (report.gone, report.forgotten) == (1, 1)
    assert store.find_sessions(path) == [] and store.sessions() == []


def _archive(path: str, source: str | Path | None = None) -> str:
    """Rename the file (``source``, default: ``path``) to where Codex renames an archived
    thread's rollout (docs/providers/codex.md §6.1); for Claude Code, to another project
    folder."""
    name = os.path.basename(path)
    if "/sessions/" in path:
        target = Path(os.environ["CODEX_HOME"], "archived_sessions", name)
    else:
        target = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-moved", name)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source or path, target)
    return str(target)


def test_a_renamed_file_keeps_its_session_and_is_not_read_again(
    store: SessionStore, one: tuple[str, str]
) -> None:
    provider, path = one
    records = _one_session(store, provider, path)
    (before,) = store.sessions()
    archived = _archive(path)
    report = index_history(store, adapters())
    assert (report.moved, report.unchanged, report.new, report.gone) == (1, 1, 0, 0)
    assert report.bytes_read == 0
    (after,) = store.sessions()
    assert (after.id, after.path, after.gone) == (before.id, archived, False)
    assert store.records(after.id) == records == fresh_parse(provider, archived)
    # Moved back, with a turn appended meanwhile: the same session, costing the append.
    lines = Path(archived).read_bytes().splitlines(keepends=True)
    os.rename(archived, path)
    with open(path, "ab") as fh:
        fh.write(lines[-1])
    report = index_history(store, adapters())
    assert (report.moved, report.appended, report.new) == (1, 1, 0)
    assert report.bytes_read == len(lines[-1])
    (back,) = store.sessions()
    assert (back.id, back.path) == (before.id, path)
    _one_session(store, provider, path)


def test_a_file_renamed_after_it_was_found_gone_is_no_longer_gone(
    store: SessionStore, one: tuple[str, str]
) -> None:
    """An index of an older agentspool that did not list the new folder marked it gone."""
    _, path = one
    hidden = Path(path).parent.parent / "elsewhere.jsonl"
    os.rename(path, hidden)
    assert index_history(store, adapters()).gone == 1
    _archive(path, hidden)
    report = index_history(store, adapters())
    assert (report.moved, report.new) == (1, 0)
    (session,) = store.sessions()
    assert not session.gone


def test_a_new_file_on_a_reused_inode_is_a_new_session(
    store: SessionStore, one: tuple[str, str]
) -> None:
    """Same device and inode as a vanished file, other bytes: not a rename."""
    _, path = one
    data = Path(path).read_bytes()
    archived = _archive(path)
    # Other bytes where the cursor's fingerprint looked: the last parsed line, changed.
    with open(archived, "r+b") as fh:
        fh.seek(len(data) - 2)
        fh.write(b" ")
    report = index_history(store, adapters())
    assert (report.moved, report.new, report.gone) == (0, 1, 1)
    assert {s.path: s.gone for s in store.sessions()} == {path: True, archived: False}


def test_a_file_listed_no_more_but_still_there_is_not_gone(
    store: SessionStore, one: tuple[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, path = one
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert index_history(store, adapters()).gone == 0
    (session,) = store.find_sessions(path)
    assert not session.gone


def test_a_fifo_or_folder_named_like_a_transcript_fails_alone_without_blocking(
    store: SessionStore, one: tuple[str, str]
) -> None:
    provider, path = one
    folder = Path(path).parent
    fifo, directory = folder / ("rollout-" + "f" * 8 + ".jsonl"), folder / "rollout-d.jsonl"
    os.mkfifo(fifo)
    directory.mkdir()
    report = index_history(store, adapters())
    assert (report.unchanged, report.failed) == (1, 2)
    assert sorted(report.errors) == sorted(f"{p}: not a regular file" for p in (directory, fifo))
    _one_session(store, provider, path)


def test_a_compressed_rollout_is_read_whole_once(store: SessionStore) -> None:
    import zstandard

    source = sorted(CAPTURES.glob("codex/k_exec_subagent/rollout-*.jsonl"))[0]
    target = Path(os.environ["CODEX_HOME"], "sessions", "2026", "11", "30", source.name + ".zst")
    target.parent.mkdir(parents=True)
    target.write_bytes(zstandard.ZstdCompressor().compress(source.read_bytes()))
    first = index_history(store, adapters())
    assert (first.new, first.bytes_read) == (1, target.stat().st_size)
    assert index_history(store, adapters()).unchanged == 1
    _one_session(store, "codex", str(target))
    assert _one_session(store, "codex", str(target)) == fresh_parse("codex", str(source))


def test_a_failure_inside_a_file_rolls_back_that_file_only(
    store: SessionStore, one: tuple[str, str]
) -> None:
    provider, path = one
    before = stored(store)
    with open(path, "ab") as fh:
        fh.write(Path(path).read_bytes().splitlines(keepends=True)[-1])

    def fail(size: int) -> None:
        raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        index_file(store, fresh(provider), TranscriptFile(path=path), chunk=64, on_block=fail)
    assert stored(store) == before
    assert index_history(store, adapters()).appended == 1
    _one_session(store, provider, path)


def test_another_indexer_at_work_makes_a_non_waiting_run_busy(
    store: SessionStore, one: tuple[str, str]
) -> None:
    import fcntl

    fd = os.open(store.path + ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert index_history(store, adapters(), wait=False) == IndexReport(busy=True)
    finally:
        os.close(fd)
    assert not index_history(store, adapters(), wait=False).busy


# -- killed mid-run ------------------------------------------------------------------

_KILLER = """
import os, signal, sys
from agentspool.adapters import registry
from agentspool.core.history import index_history
from agentspool.core.store import SessionStore

database, share = sys.argv[1], float(sys.argv[2])

def progress(done, total):
    if done and done >= share * total:
        os.kill(os.getpid(), signal.SIGKILL)  # inside the transaction of the file just read

with SessionStore(database) as store:
    index_history(
        store, [registry.load(n) for n in ("claude-code", "codex")], progress=progress, chunk=4096
    )
"""


def _killed_at(database: str, share: float) -> int:
    """Run an indexer that kills itself once it has read ``share`` of what it has to."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLER, database, str(share)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return done.returncode


def test_an_indexer_killed_mid_run_loses_and_duplicates_nothing(
    tmp_path: Path, laid: dict[str, str]
) -> None:
    """SIGKILL at several points (within a file's transaction: its first block, its last,
    in between; in a run that resumes appended files), then a run to the end: the store
    equals a clean index of the same files."""
    database = str(tmp_path / "killed.sqlite")
    for share in (0.001, 0.3, 0.5, 0.99):
        assert _killed_at(database, share) == -signal.SIGKILL, share
    # The files grow (a third of each again: a torn line at the end of most), and the
    # run that resumes them is killed too.
    for path in laid:
        data = Path(path).read_bytes()
        with open(path, "ab") as fh:
            fh.write(data[: len(data) // 3])
    for share in (0.001, 0.5):
        assert _killed_at(database, share) == -signal.SIGKILL, share
    assert _killed_at(database, 2.0) == 0
    with SessionStore(database) as killed, SessionStore(str(tmp_path / "clean.sqlite")) as clean:
        index_history(clean, adapters())
        assert stored(killed) == stored(clean)
        assert index_history(killed, adapters()).unchanged == len(laid)
        for path, provider in laid.items():
            assert stored(killed)[path][1] == fresh_parse(provider, path)


def test_the_indexer_keeps_to_core(tmp_path: Path) -> None:
    """core/history.py names no provider: the adapters it is handed do all the parsing."""
    source = Path(history.__file__).read_text()
    assert all(name not in source.lower() for name in ("claude", "codex"))


# -- search --------------------------------------------------------------------------


def test_search_finds_prompts_replies_and_tool_calls_but_no_tool_results(
    store: SessionStore, laid: dict[str, str]
) -> None:
    index_history(store, adapters())
    everything = [m for s in store.sessions() for m in store.records(s.id)]
    prompt = next(
        m for m in everything if m.role == "user" and m.kind == "text" and m.visibility == "visible"
    )
    word = max(prompt.text.split(), key=len)
    hits = store.search(word, limit=500)
    assert hits and all(word.lower() in h.snippet.lower() for h in hits)
    assert "tool_result" not in {h.kind for h in hits}
    assert any(h.role == "user" for h in hits)
    assert all(f"«{word}»".lower() in h.snippet.lower() for h in hits if h.kind == "text")
    call = next(m for m in everything if m.kind == "tool_call" and m.tool_name == "Bash")
    assert any(h.kind == "tool_call" for h in store.search("Bash", limit=500))
    result = next(m for m in everything if m.kind == "tool_result" and m.text.strip())
    only_in_results = [
        w
        for w in result.text.split()
        if w.isalnum()
        and len(w) > 6
        and not any(w.lower() in m.text.lower() for m in everything if m.kind != "tool_result")
        and not any(w.lower() in str(m.tool_input).lower() for m in everything)
    ]
    if only_in_results:
        assert store.search(only_in_results[0]) == []
    assert call.tool_use_id


def test_search_takes_words_not_syntax_and_filters_by_provider(
    store: SessionStore, laid: dict[str, str]
) -> None:
    index_history(store, adapters())
    for text in ('"', "AND", "a:b", "(x", "*", "NEAR(", "-"):
        store.search(text)  # no FTS5 syntax error, whatever the words
    both = store.search("hi*", limit=500)
    assert {h.session.provider for h in both} == {"claude-code", "codex"}
    only = store.search("hi*", limit=500, provider="codex")
    assert only and {h.session.provider for h in only} == {"codex"}
    assert store.search("hi*", limit=3) == both[:3]
    hidden = [m for s in store.sessions() for m in store.records(s.id) if m.visibility == "hidden"]
    assert hidden


def test_search_follows_records_that_change(store: SessionStore) -> None:
    def say(text: str, seq: int = 1) -> Message:
        return Message(seq=seq, id=f"m{seq}", kind="text", role="user", text=text)

    store.save("t", [say("the quick brown fox")])
    assert [h.seq for h in store.search("quick")] == [1]
    store.save("t", [say("a slow green turtle"), say("quick again", 2)])
    assert [h.seq for h in store.search("quick")] == [2]
    assert [h.snippet for h in store.search("turtle")] == ["a slow green «turtle»"]
    store.save("t", [])
    assert store.search("quick") == store.search("turtle") == []


def _usage_of(
    store: SessionStore, *, read_by_usage: bool = False
) -> dict[tuple[str, str], list[tuple[Any, ...]]]:
    """Per file: its session's facts and span, and its records with usage in order.
    ``read_by_usage``: only what ``usage`` reads — a usage view may number its records
    by line and leave the first prompt's title and the record count to the full index
    (ADR 0043)."""
    by_id = {s.id: s for s in store.sessions()}
    found: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for r in store.usage_records():
        seq = None if read_by_usage else r.seq
        found.setdefault((by_id[r.session].path, "records"), []).append(
            (seq, r.timestamp, r.model, r.message_id, r.usage)
        )
    for s in by_id.values():
        title, records = (None, None) if read_by_usage else (s.title, s.records)
        found[s.path, "facts"] = [
            (s.provider, s.session_id, s.agent_id, s.parent_session_id, s.cwd, title),
            (s.cli_version, s.started, s.updated, records, s.gone),
        ]
    return found


@pytest.mark.parametrize("workers", [1, 2])
def test_a_usage_first_run_stores_what_a_full_index_gives_usage(
    tmp_path: Path, laid: dict[str, str], workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADR 0043: the usage a usage-first run stores (on one core, or a pool of two
    forked workers that map and scan each Claude Code file, ADR 0057) is the full
    index's, response for response, with the session's facts and span; the next full
    run writes the records, and the store is then a clean index's; a usage-first run
    after that reads nothing."""
    monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)  # the captures are small
    monkeypatch.setattr(_usage_view, "SCAN_FROM", 0)
    with SessionStore(str(tmp_path / "clean.sqlite")) as clean:
        index_history(clean, adapters())
        expected_usage, expected = _usage_of(clean), stored(clean)
        read_by_usage = _usage_of(clean, read_by_usage=True)
    with SessionStore(str(tmp_path / "first.sqlite")) as store:
        report = index_history(store, adapters(), usage_first=True, workers=workers)
        assert (report.new, report.failed) == (len(laid), 0)
        assert store.has_pending()
        assert _usage_of(store, read_by_usage=True) == read_by_usage
        assert all(store.records(s.id) == [] for s in store.sessions())  # not yet written
        again = index_history(store, adapters(), usage_first=True, workers=workers)
        assert (again.unchanged, again.bytes_read, again.records) == (len(laid), 0, 0)
        full = index_history(store, adapters(), wait=False)
        assert (full.new, full.bytes_read) == (len(laid), report.bytes_read)
        assert not store.has_pending()
        assert stored(store) == expected and _usage_of(store) == expected_usage
        last = index_history(store, adapters(), usage_first=True)
        assert (last.unchanged, last.bytes_read, last.records) == (len(laid), 0, 0)


def test_a_usage_first_file_changed_is_read_again_and_a_gone_one_marked(
    store: SessionStore, laid: dict[str, str]
) -> None:
    index_history(store, adapters(), usage_first=True, workers=1)
    path = next(p for p, name in laid.items() if name == "claude-code")
    other = next(p for p, name in laid.items() if name == "codex")
    _cut_at_a_line(path, 0.5)
    os.remove(other)
    report = index_history(store, adapters(), usage_first=True, workers=1)
    assert (report.new, report.gone, report.unchanged) == (1, 1, len(laid) - 2)
    with SessionStore(":memory:") as clean:
        index_history(clean, adapters())
        mine, clean_one = (
            {k: v for k, v in _usage_of(s, read_by_usage=True).items() if k[0] == path}
            for s in (store, clean)
        )
        assert mine == clean_one


def _claude_line(kind: str, at: str, text: str, **extra: Any) -> bytes:
    message: dict[str, Any] = {"role": kind, "content": [{"type": "text", "text": text}]}
    if kind == "assistant":
        message |= {"id": f"msg-{at}", "model": "claude-x", "usage": {"input_tokens": 3}}
    line = {"type": kind, "timestamp": at, "sessionId": "s1", "cwd": "/w", "message": message}
    return json.dumps(line | extra).encode() + b"\n"


@pytest.mark.parametrize("usage_first", [False, True])
def test_a_sessions_span_is_its_first_and_last_record_in_file_order(
    store: SessionStore, usage_first: bool
) -> None:
    """ADR 0057: Claude Code writes a record late with an earlier time (a local command's
    caveat after the command, 2.1.x): the span is the first and the last record with a
    time as the file has them — for the full index, a usage-first run and an append."""
    path = Path(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-w", "s1.jsonl")
    path.parent.mkdir(parents=True)
    path.write_bytes(
        _claude_line("user", "2026-01-01T00:00:01.500Z", "caveat")
        + _claude_line("user", "2026-01-01T00:00:01.000Z", "/clear")
        + _claude_line("assistant", "2026-01-01T00:00:09.000Z", "done")
        + _claude_line("user", "2026-01-01T00:00:08.000Z", "a late record")
    )
    index_history(store, [fresh("claude-code")], usage_first=usage_first, workers=1)
    (session,) = store.sessions()
    assert (session.started, session.updated) == (1767225601.5, 1767225608.0)
    with path.open("ab") as fh:
        fh.write(_claude_line("user", "2026-01-01T00:00:07.000Z", "later, an earlier clock"))
    index_history(store, [fresh("claude-code")])
    (session,) = store.sessions()
    assert (session.started, session.updated) == (1767225601.5, 1767225607.0)


def test_a_version_4_store_reads_its_usage_first_files_again(
    tmp_path: Path, laid: dict[str, str]
) -> None:
    """Schema 5 keeps a file's usage-first rows as one value: a store of version 4 (a row
    each) is migrated by forgetting what its usage-first runs kept, and the next one
    reads those files again — the same usage as ever."""
    path = str(tmp_path / "v4.sqlite")
    with SessionStore(path) as store:
        index_history(store, adapters(), usage_first=True, workers=1)
        expected = _usage_of(store, read_by_usage=True)
    raw = sqlite3.connect(path)
    with raw:  # as version 4 kept it: a row per record with usage
        raw.execute("DROP TABLE usage_first")
        raw.execute(store_schema._V4_USAGE_FIRST)
        raw.execute("INSERT INTO usage_first VALUES (1, 1, '', '', 'm', '{}')")
        raw.execute("UPDATE schema_version SET version = 4")
    raw.close()
    with SessionStore(path) as store:
        assert not store.has_pending()
        report = index_history(store, adapters(), usage_first=True, workers=1)
        assert (report.new, report.unchanged) == (len(laid), 0)
        assert _usage_of(store, read_by_usage=True) == expected


def test_usage_first_rows_are_kept_as_arrays_and_object_rows_still_read(
    tmp_path: Path, laid: dict[str, str]
) -> None:
    """ADR 0063: a usage-first run keeps each response's usage as the array of its five
    figures (half a row's bytes were the keys); the rows a store kept before, usage as
    an object, read the same; and ``usage_records`` hands out a ``Usage`` that encodes as
    an object, as before."""
    path = str(tmp_path / "rows.sqlite")
    with SessionStore(path) as store:
        index_history(store, adapters(), usage_first=True, workers=1)
        expected = _usage_of(store, read_by_usage=True)
        records = list(store.usage_records())
    assert records and all(msgspec.json.encode(r.usage).startswith(b"{") for r in records)
    names = [f.name for f in msgspec.structs.fields(Usage)]
    raw = sqlite3.connect(path)
    with raw:
        kept = raw.execute("SELECT session, rows FROM usage_first").fetchall()
        assert len(kept) == len(laid)
        for session, rows in kept:
            decoded = json.loads(rows)
            assert all(isinstance(row[4], list) and len(row[4]) == 5 for row in decoded)
            for row in decoded:
                row[4] = dict(zip(names, row[4], strict=True))
            raw.execute(
                "UPDATE usage_first SET rows = ? WHERE session = ?",
                (json.dumps(decoded).encode(), session),
            )
        raw.execute("UPDATE schema_version SET version = 5")  # as version 5 kept them
    raw.close()
    with SessionStore(path) as store:
        assert _usage_of(store, read_by_usage=True) == expected
        report = index_history(store, adapters(), usage_first=True, workers=1)
        assert (report.new, report.unchanged) == (0, len(laid))  # nothing read again
    with closing(sqlite3.connect(path)) as raw:
        version = raw.execute("SELECT version FROM schema_version").fetchall()
        assert version == [(store_schema.SCHEMA_VERSION,)]


class _DiesInAWorker(ClaudeCode):
    """Claude Code whose usage view of one file kills the pool worker reading it (as a
    file cut short under a worker's mapping would: SIGBUS)."""

    def usage_view(self, path: str) -> Any:
        if usage_first.disposable() and path.endswith(self.fatal):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().usage_view(path)

    fatal = ""


def test_a_worker_that_dies_loses_no_file(
    store: SessionStore, laid: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool breaks; what it had not handed back is read in this process."""
    monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)
    claude = sorted(p for p, name in laid.items() if name == "claude-code")
    _DiesInAWorker.fatal = claude[len(claude) // 2]
    report = index_history(store, [_DiesInAWorker()], usage_first=True, workers=2)
    assert (report.new, report.failed) == (len(claude), 0)
    with SessionStore(":memory:") as clean:
        index_history(clean, [fresh("claude-code")], usage_first=True, workers=1)
        assert _usage_of(store, read_by_usage=True) == _usage_of(clean, read_by_usage=True)


def test_a_worker_that_cannot_be_started_leaves_its_files_to_this_process(
    store: SessionStore, laid: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No process to be had (fork fails with EAGAIN): every file is read in process."""
    monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)

    def no_process() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(usage_first.os, "fork", no_process)
    report = index_history(store, adapters(), usage_first=True, workers=2)
    assert (report.new, report.failed) == (len(laid), 0)
    with SessionStore(":memory:") as clean:
        index_history(clean, adapters(), usage_first=True, workers=1)
        assert _usage_of(store, read_by_usage=True) == _usage_of(clean, read_by_usage=True)
