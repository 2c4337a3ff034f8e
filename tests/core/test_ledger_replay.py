"""Properties of the ledger and its replay, over any ledger: random declarations (repeats,
blocked without a reason, a reason on a state that drops it), the run's end (more than
once), and evidence times that step back.

* replaying every prefix gives what ``ledger.lifecycle`` read live at that point;
* ``replay``'s task transitions are exactly the changes the live reads saw;
* a sweep with an archive keeps the ledger readable: the archived copy folds to what the
  run's ledger folded before the sweep.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from agentspool.core import ledger
from agentspool.core.events import RunEnded, TaskStateDeclared
from agentspool.core.replay import transitions
from agentspool.spool.layout import ensure_run_dir
from agentspool.spool.sweep import sweep_spools

times = st.floats(min_value=0.0, max_value=2e9, allow_nan=False, allow_infinity=False)
declarations = st.builds(
    TaskStateDeclared,
    task_state=st.sampled_from(["active", "blocked", "done"]),
    reason=st.sampled_from(["", "  ", "needs the API key", "waiting on CI"]),
    at=times,
    source=st.just("cli:lifecycle"),
)
ends = st.builds(
    RunEnded,
    exit_status=st.sampled_from([None, 0, 1, 137]),
    transcript_path=st.sampled_from(["", "/t/s1.jsonl"]),
    at=times,
    source=st.just("core:run"),
)
ledgers = st.lists(st.one_of(declarations, declarations, ends), min_size=1, max_size=25)


def _written(runtime: str, events: list[ledger.LedgerEvent]) -> tuple[str, list[ledger.Lifecycle]]:
    """Append ``events`` to a real ledger one by one; what a live read said after each."""
    run_dir = ensure_run_dir(runtime, "r")
    live = []
    for event in events:
        ledger.append(run_dir, event)
        live.append(ledger.lifecycle(run_dir))
    return run_dir, live


def _model(events: list[ledger.LedgerEvent]) -> list[tuple[str, str, RunEnded | None]]:
    """The declaration rules, spelled out independently of the reducer: a reason belongs
    to blocked (stripped; blocked without one changes nothing); the last end counts."""
    task, reason, ended = "active", "", None
    out = []
    for event in events:
        if isinstance(event, RunEnded):
            ended = event
        elif event.task_state != "blocked":
            task, reason = event.task_state, ""
        elif event.reason.strip():
            task, reason = "blocked", event.reason.strip()
        out.append((task, reason, ended))
    return out


@settings(max_examples=200, deadline=None)
@given(ledgers)
def test_replaying_every_prefix_gives_what_a_live_read_gave(events) -> None:
    with tempfile.TemporaryDirectory() as runtime:
        run_dir, live = _written(runtime, events)
        stored = ledger.read(run_dir)
        assert stored == events
        assert [(life.task_state, life.task_reason, life.ended) for life in live] == _model(events)
        replayed = [life for _, life in ledger.replayed(stored)]
        assert replayed == live
        for k in range(1, len(stored) + 1):
            assert ledger.fold(stored[:k]) == live[k - 1]

        # replay's task transitions: exactly the changes the live reads saw, in order.
        seen = [(life.task_state, life.task_reason) for life in live]
        changes = [b for a, b in zip([("active", ""), *seen], seen, strict=False) if a != b]
        told = transitions([], stored)
        assert [(t.task_state, t.task_reason) for t in told if "task_state" in t.changed] == (
            changes
        )
        ended = [t for t in told if "state" in t.changed]
        assert [t.state for t in ended] == (["ended"] if live[-1].ended is not None else [])
        if told:
            last = told[-1]
            assert (last.task_state, last.task_reason) == (
                live[-1].task_state,
                live[-1].task_reason,
            )


@settings(max_examples=100, deadline=None)
@given(ledgers)
def test_a_sweep_with_an_archive_keeps_the_ledger_readable(events) -> None:
    with tempfile.TemporaryDirectory() as runtime, tempfile.TemporaryDirectory() as archive:
        run_dir, live = _written(runtime, events)
        before = ledger.lifecycle(run_dir)
        report = sweep_spools(runtime, [], min_idle=0, archive=archive)
        assert (report.removed, report.archived) == (["r"], ["r"])
        assert not os.path.exists(run_dir)
        [copy] = os.listdir(os.path.join(archive, "r"))
        archived = os.path.join(archive, "r", copy)
        assert ledger.lifecycle(archived) == before == live[-1]
        assert ledger.read(archived) == events
