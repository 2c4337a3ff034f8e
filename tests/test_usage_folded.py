"""A first ``usage`` folds each file where it is parsed (ADR 0061): its report is the one
the store gives, every file whose responses no other file holds is not read back, and a
store another process wrote meanwhile is read as it is (tests/support/usage_corpus.py:
subagents, two forks, an older CLI's file, Codex rollouts)."""

from __future__ import annotations

import os

import pytest
import usage_corpus as corpus

import agentspool
from agentspool.core import pricing, usage_first
from agentspool.core.store import SessionStore

SHIPPED = os.path.join(os.path.dirname(pricing.__file__), pricing.PRICES_FILE)
"""The shipped table, named: a report priced by a named file is never kept, so each call
below computes its report."""
NOT_SHARED = {corpus.BETA, corpus.LEGACY, corpus.CODEX_MAIN, corpus.CODEX_CHILD}
"""The sessions none of whose responses another file holds: every other one is a fork
or a fork's original, or a subagent's file of one."""


@pytest.fixture
def written() -> None:
    corpus.write_claude(os.environ["CLAUDE_CONFIG_DIR"])
    corpus.write_codex(os.environ["CODEX_HOME"])


@pytest.fixture
def read_back(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The file ids whose usage ``usage`` read back from the store."""
    ids: set[int] = set()
    original = SessionStore.usage_by_session

    def spy(self: SessionStore, sessions: object = None) -> object:
        chosen = list(sessions) if sessions is not None else None  # type: ignore[call-overload]
        ids.update(chosen if chosen is not None else (s.id for s in self.sessions()))
        return original(self, chosen)

    monkeypatch.setattr(SessionStore, "usage_by_session", spy)
    return ids


def _files() -> dict[str, int]:
    """Each file in the store → its id (every file of the corpus has usage)."""
    with agentspool.open_history() as store:
        return {s.path: s.id for s in store.sessions()}


@pytest.mark.usefixtures("written")
@pytest.mark.parametrize("forked", [False, True])
@pytest.mark.parametrize("by", ["session", "day", "model", "project"])
def test_a_first_usage_folds_the_files_it_parses_and_reports_what_the_store_gives(
    by: str, forked: bool, read_back: set[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    if forked:  # two forked workers fold the files and hand the folds back by pipe
        monkeypatch.setattr(usage_first, "POOL_MIN_BYTES", 0)
        monkeypatch.setattr(usage_first.os, "sched_getaffinity", lambda _: {0, 1})
    first = agentspool.usage(by=by, timezone="UTC", prices=SHIPPED)  # type: ignore[arg-type]
    files = _files()
    folded = {path for path, n in files.items() if n not in read_back}
    assert folded == {p for p in files if any(s in p for s in NOT_SHARED)}
    assert len(folded) == 4
    read_back.clear()
    again = agentspool.usage(by=by, timezone="UTC", prices=SHIPPED)  # type: ignore[arg-type]
    assert read_back >= set(files.values())  # nothing folded: every file read back
    assert again == first
    assert first.total.total_tokens > 0


@pytest.mark.usefixtures("written")
def test_folds_stand_only_while_no_other_process_has_written_the_store(
    read_back: set[int],
) -> None:
    def index(folder: object) -> None:
        agentspool.index_history(wait=False, usage_first=True, folder=folder)  # type: ignore[arg-type]
        with agentspool.open_history() as other:
            other.mark_gone([])  # a write transaction of another connection

    written_meanwhile = agentspool.usage(by="session", prices=SHIPPED, index=index)
    assert read_back >= set(_files().values())
    assert written_meanwhile == agentspool.usage(by="session", prices=SHIPPED, index=False)
