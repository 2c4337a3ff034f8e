"""``/metrics``'s registry: the series a scrape returns for the runs a poll lists and
the transitions it saw (the daemon feeding it is tested against a real Prometheus)."""

from __future__ import annotations

import datetime as dt

from prometheus_client.parser import text_string_to_metric_families

from agentspool import (
    PendingApproval,
    PendingDialog,
    RunChange,
    RunEvent,
    RunSummary,
    UsageReport,
    UsageRow,
)
from agentspool.serve.metrics import FleetMetrics

NOW = 1_800_000_000.0


def run(run_id: str, state: str, *, since: float = NOW - 60, **kw) -> RunSummary:
    return RunSummary(
        provider=kw.pop("provider", "claude-code"),
        run_id=run_id,
        state=state,  # type: ignore[arg-type]
        activity="unknown",
        task_state="active",
        since=since,
        cwd="/src/app",
        **kw,
    )


def moved(before: RunSummary | None, after: RunSummary | None) -> RunEvent:
    """The event the hub publishes for a run going from ``before`` to ``after``."""
    some = after if after is not None else before
    assert some is not None
    return RunChange(f"{some.provider}:{some.run_id}", before, after).event(NOW)


def listing(*runs: RunSummary) -> FleetMetrics:
    return FleetMetrics(runs=lambda: list(runs), clock=lambda: NOW)


def scrape(metrics: FleetMetrics) -> dict[str, list[tuple[dict[str, str], float]]]:
    text, content_type = metrics.exposition()
    assert content_type.startswith("text/plain")
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_runs_are_counted_by_provider_state_and_task() -> None:
    metrics = listing(
        run("a", "working"),
        run("b", "working"),
        run("c", "idle"),
        run("d", "needs_input", provider="codex"),
    )
    counts = {
        (labels["provider"], labels["state"]): value
        for labels, value in scrape(metrics)["agentspool_runs"]
    }
    assert counts == {
        ("claude-code", "working"): 2,
        ("claude-code", "idle"): 1,
        ("codex", "needs_input"): 1,
    }


def test_each_waiting_run_says_how_long_and_for_what() -> None:
    approval = PendingApproval(tool_name="Bash", tool_input={"command": "make"})
    question = PendingDialog(kind="question", prompt="Which DB?")
    metrics = listing(
        run("asks", "needs_input", since=NOW - 300, pending_approval=approval),
        run("quiz", "question", since=NOW - 30, pending_dialog=question),
        run("done", "needs_input", since=NOW - 5),
        run("busy", "working", since=NOW - 7200),
    )
    found = scrape(metrics)
    waiting = {
        labels["run"]: (labels["waits_for"], v) for labels, v in found["agentspool_waiting_seconds"]
    }
    assert waiting == {
        "claude-code:asks": ("approval", 300.0),
        "claude-code:quiz": ("question", 30.0),
        "claude-code:done": ("turn", 5.0),
    }
    assert found["agentspool_working_seconds"] == [
        ({"provider": "claude-code", "run": "claude-code:busy", "project": "/src/app"}, 7200.0)
    ]


def test_per_run_series_are_capped_and_the_cut_is_counted() -> None:
    runs = [run(f"r{i}", "working", since=NOW - i) for i in range(10)]
    metrics = FleetMetrics(runs=lambda: runs, clock=lambda: NOW, max_runs=3)
    found = scrape(metrics)
    assert len(found["agentspool_working_seconds"]) == 3
    assert found["agentspool_series_dropped"] == [({}, 7.0)]


def test_a_run_leaving_a_state_leaves_its_series() -> None:
    now = [run("a", "needs_input")]
    metrics = FleetMetrics(runs=lambda: now, clock=lambda: NOW)
    assert len(scrape(metrics)["agentspool_waiting_seconds"]) == 1
    now = [run("a", "working")]
    assert scrape(metrics).get("agentspool_waiting_seconds", []) == []


def test_transitions_are_counted_and_a_finished_wait_observed() -> None:
    metrics = FleetMetrics(clock=lambda: NOW)
    working = run("a", "working", since=NOW)
    waiting = run(
        "a",
        "needs_input",
        since=NOW + 10,
        pending_approval=PendingApproval(tool_name="Bash", tool_input={"command": "ls"}),
    )
    again = run("a", "working", since=NOW + 100)
    metrics.observe(moved(None, working))
    metrics.observe(moved(working, waiting))
    metrics.observe(moved(waiting, again))
    found = scrape(metrics)
    transitions = {
        (labels["from_state"], labels["to_state"]): v
        for labels, v in found["agentspool_transitions_total"]
    }
    assert transitions == {("working", "needs_input"): 1.0, ("needs_input", "working"): 1.0}
    counts = {
        labels["waits_for"]: v for labels, v in found["agentspool_wait_duration_seconds_count"]
    }
    assert counts == {"approval": 1.0}
    total = dict(
        (labels["waits_for"], v) for labels, v in found["agentspool_wait_duration_seconds_sum"]
    )
    assert total == {"approval": 90.0}


def test_a_wait_that_ends_without_working_again_is_not_a_finished_wait() -> None:
    metrics = FleetMetrics(clock=lambda: NOW)
    waiting = run("a", "question", since=NOW)
    metrics.observe(moved(None, waiting))
    metrics.observe(moved(waiting, run("a", "ended", since=NOW + 5)))
    found = scrape(metrics)
    assert found.get("agentspool_wait_duration_seconds_count", []) == []


def _report(rows: list[UsageRow]) -> UsageReport:
    return UsageReport(
        by="model", timezone="local", prices_taken="2026-12-01", rows=rows, total=UsageRow(key="")
    )


def test_usage_and_cost_come_from_the_history_and_are_read_at_most_so_often() -> None:
    asked: list[dt.date | None] = []
    clock = [NOW]

    def usage(since: dt.date | None) -> UsageReport:
        asked.append(since)
        row = UsageRow(
            key="claude-sonnet-4-5",
            provider="claude-code",
            input_tokens=10,
            output_tokens=20,
            cache_read_tokens=300,
            cache_write_tokens=40,
            cost_usd=1.5 if since is None else 0.25,
        )
        return _report([row])

    metrics = FleetMetrics(usage=usage, clock=lambda: clock[0], usage_every=30)
    found = scrape(metrics)
    tokens = {labels["kind"]: v for labels, v in found["agentspool_tokens_total"]}
    assert tokens == {"input": 10, "output": 20, "cache_read": 300, "cache_write": 40}
    assert found["agentspool_cost_usd_total"] == [
        ({"provider": "claude-code", "model": "claude-sonnet-4-5"}, 1.5)
    ]
    assert found["agentspool_cost_today_usd"] == [({"provider": "claude-code"}, 0.25)]
    assert asked == [None, dt.date.fromtimestamp(NOW)]
    scrape(metrics)
    assert len(asked) == 2, "a second scrape within usage_every read the store again"
    clock[0] += 31
    scrape(metrics)
    assert len(asked) == 4
