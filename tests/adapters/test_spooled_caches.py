"""What a long-lived reader holds per run: bounded, and let go when the run is over.

``adapters/common/spooled.py`` keeps a spool view per run and a transcript view per file.
A dashboard process reads hundreds of runs over a day: the caches are LRU-bounded, a
swept run's state goes (and a run set up again under the same id starts clean), and a
run read as ended keeps no live state. At every step a cached adapter answers exactly as
a fresh one would.
"""

from __future__ import annotations

import os

import pytest

from agentspool.adapters.claude_code import ClaudeCode
from agentspool.adapters.claude_code._kit import Kit
from agentspool.adapters.common import spooled
from agentspool.adapters.testing import answer
from agentspool.core.reader import read_run
from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.sweep import sweep_spools

LONG_AGO = 1_000_000


@pytest.fixture
def runtime(tmp_path):
    return str(tmp_path / "runtime")


def _live_runs(adapter: ClaudeCode) -> set[str]:
    return {key[0] for key in adapter._spools} | {key[0] for key in adapter._views if key[1]}


def _same_as_fresh(adapter: ClaudeCode, run_id: str, runtime: str, path: str) -> bytes:
    cached = answer(adapter.read_chat(run_id, runtime, path))
    assert cached == answer(ClaudeCode().read_chat(run_id, runtime, path))
    return cached


def test_transcript_views_are_bounded(tmp_path):
    adapter, kit = ClaudeCode(), Kit()
    paths = [kit.transcript(str(tmp_path / f"t{n}"), 1) for n in range(40)]
    first = answer(adapter.read_chat("run-1", "", paths[0]))
    for path in paths[1:]:
        adapter.read_chat("run-1", "", path)
    assert len(adapter._views) == spooled.MAX_TRANSCRIPT_VIEWS
    assert ("run-1", "", paths[0]) not in adapter._views  # the least recently read went
    assert answer(adapter.read_chat("run-1", "", paths[0])) == first  # and comes back whole


def test_spool_views_are_bounded(runtime, tmp_path):
    adapter, kit = ClaudeCode(), Kit()
    path = kit.transcript(str(tmp_path), 1)
    runs = [f"run-{n}" for n in range(spooled.MAX_SPOOL_VIEWS + 8)]
    for run_id in runs:
        ensure_run_dir(runtime, run_id)
        kit.open_prompt(runtime, run_id, path)
        adapter.locate_transcript(run_id, runtime)
    assert len(adapter._spools) == spooled.MAX_SPOOL_VIEWS
    assert not {runs[0], runs[7]} & _live_runs(adapter)
    assert runs[-1] in _live_runs(adapter)
    _same_as_fresh(adapter, runs[0], runtime, path)


def test_a_swept_run_reads_as_a_fresh_reader_sees_it(runtime, tmp_path):
    """Swept behind the adapter's back (``sweep_spools``), then set up again under the
    same id: the old spool's prompt must not linger, the new spool's records must count."""
    adapter, kit = ClaudeCode(), Kit()
    path = kit.transcript(str(tmp_path), 1)
    ensure_run_dir(runtime, "run-1")
    kit.open_prompt(runtime, "run-1", path)
    prompted = _same_as_fresh(adapter, "run-1", runtime, path)
    assert adapter.read_chat("run-1", runtime, path).pending_approval is not None
    assert sweep_spools(runtime, [], min_idle=0).removed == ["run-1"]
    swept = _same_as_fresh(adapter, "run-1", runtime, path)
    assert swept != prompted
    assert "run-1" not in {key[0] for key in adapter._spools}  # no view of a spool not there
    ensure_run_dir(runtime, "run-1")  # set up again: a new run under the same id
    kit.open_prompt(runtime, "run-1", path)
    again = adapter.read_chat("run-1", runtime, path)
    assert answer(again) == answer(ClaudeCode().read_chat("run-1", runtime, path))
    assert again.pending_approval is not None


def test_the_adapters_sweep_lets_the_removed_runs_go(runtime, tmp_path):
    adapter, kit = ClaudeCode(), Kit()
    path = kit.transcript(str(tmp_path), 1)
    for run_id in ("old", "kept"):
        ensure_run_dir(runtime, run_id)
        kit.open_prompt(runtime, run_id, path)
        adapter.read_chat(run_id, runtime, path)
    run_dir = os.path.join(runtime, "old")
    for name in [*os.listdir(run_dir), "."]:  # idle for ages: past the default min_idle
        target = os.path.join(run_dir, name)
        st = os.stat(target)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns - LONG_AGO * 10**9))
    assert adapter.sweep(runtime, ["kept"]).removed == ["old"]
    assert _live_runs(adapter) == {"kept"}


def test_a_run_read_as_ended_keeps_no_live_state(runtime, tmp_path):
    adapter, kit = ClaudeCode(), Kit()
    path = kit.transcript(str(tmp_path), 1)
    ensure_run_dir(runtime, "run-1")
    kit.open_prompt(runtime, "run-1", path)
    assert read_run(adapter, "run-1", runtime, path).pending_approval is not None
    assert "run-1" in _live_runs(adapter)
    ended = read_run(adapter, "run-1", runtime, path, ended=True)
    assert ended.state == "ended"
    assert "run-1" not in _live_runs(adapter)
    assert adapter.spool_sig("run-1", runtime) == ClaudeCode().spool_sig("run-1", runtime)
