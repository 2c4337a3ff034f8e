"""``/metrics``: the live state of one machine's runs for Prometheus (ADR 0041).

Two kinds of series:

- **What is, now** — computed at scrape time from the runs the daemon follows (the same
  list ``ls`` prints): how many runs per provider, state and task state; for each run
  waiting on the operator, how long it has waited; for each working run, how long it has
  worked. These are a custom collector, so a run that leaves a state leaves its series
  with it (no stale gauge to forget to clear).
- **What happened** — counted from the transitions the daemon publishes: a counter of
  transitions and a histogram of finished waits (from "needs you" to "working again").

Per-run series carry ``run`` (the run's key) and are capped at ``max_runs`` runs, the
longest waits first: the cardinality a scrape returns is bounded whatever the machine
runs (``agentspool_series_dropped`` says how many were left out). The host is
Prometheus's ``instance`` label, never ours. Usage and cost come from the history store,
read at most every ``usage_every`` seconds (a scrape never indexes).

prometheus-client is imported here, by ``serve`` only.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from agentspool import RunEvent, RunSummary, UsageReport

from agentspool import run_key
from agentspool.errors import AgentspoolError
from agentspool.serve.notify import WaitKind, wait_kind

log = logging.getLogger("agentspool.serve")

WAITING = ("needs_input", "question")
WAIT_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0)
"""Seconds: a permission prompt answered at once to one left over lunch and beyond."""
MAX_RUNS = 100
USAGE_EVERY = 30.0
TOKEN_KINDS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_tokens"),
    ("cache_write", "cache_write_tokens"),
)


@dataclass
class _Wait:
    started: float
    waits_for: WaitKind


@dataclass
class FleetMetrics:
    """The registry ``/metrics`` serves: the live series from ``runs`` (read at scrape
    time), the counted ones from ``observe`` (a ``TransitionHub`` subscriber)."""

    runs: Callable[[], Sequence[RunSummary]] = list
    """The runs the latest poll lists, most urgent first (``ls``'s order)."""
    usage: Callable[[dt.date | None], UsageReport | None] | None = None
    """The history's usage by model (``since`` a day, or all of it); ``None``: no usage
    series."""
    max_runs: int = MAX_RUNS
    usage_every: float = USAGE_EVERY
    clock: Callable[[], float] = time.time
    registry: CollectorRegistry = field(init=False)
    _waits: dict[str, _Wait] = field(default_factory=dict)
    _usage_cache: tuple[float, Any, Any] | None = None

    def __post_init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self._transitions = Counter(
            "agentspool_transitions",
            "State transitions of runs, by provider, the state left and the state entered.",
            ["provider", "from_state", "to_state"],
            registry=self.registry,
        )
        self._finished_waits = Histogram(
            "agentspool_wait_duration_seconds",
            "Finished waits on the operator: from needing them to working again.",
            ["provider", "waits_for"],
            buckets=WAIT_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_Live(self))

    def observe(self, event: RunEvent) -> None:
        """One transition as the hub publishes it (called in its thread: cheap)."""
        if event.event == "gone":
            self._waits.pop(event.key, None)
            return
        if event.previous is not None and event.previous != event.state:
            self._transitions.labels(event.provider, event.previous, event.state).inc()
        wait = self._waits.get(event.key)
        if event.state == "working" and wait is not None:
            # Waited on, now working again: the operator answered. A run that ends or
            # goes idle while waiting was not answered; that wait is not a finished one.
            del self._waits[event.key]
            took = max(0.0, self._started(event) - wait.started)
            self._finished_waits.labels(event.provider, wait.waits_for).observe(took)
        elif event.state not in WAITING:
            self._waits.pop(event.key, None)
        else:
            kind = wait_kind(event)
            if kind is not None and (wait is None or wait.waits_for != kind):
                self._waits[event.key] = _Wait(self._started(event), kind)

    def exposition(self) -> tuple[bytes, str]:
        """The text a scrape gets, and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def _started(self, run: RunSummary) -> float:
        return run.since if run.since > 0 else self.clock()

    def _usage_reports(self) -> tuple[Any, Any]:
        now = self.clock()
        cached = self._usage_cache
        if cached is not None and now - cached[0] < self.usage_every:
            return cached[1], cached[2]
        assert self.usage is not None
        try:
            total = self.usage(None)
            today = self.usage(dt.date.fromtimestamp(now))
        except (AgentspoolError, OSError) as exc:
            # A store being rebuilt, or not there yet: the live series still answer.
            log.warning("metrics: usage not read: %s", exc)
            total = today = None
        self._usage_cache = (now, total, today)
        return total, today


class _Live:
    """The series computed at scrape time."""

    def __init__(self, metrics: FleetMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> Iterable[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        runs = self.metrics.runs()
        yield from self._run_counts(runs)
        yield from self._waits(runs)
        if self.metrics.usage is not None:
            yield from self._usage()

    def _run_counts(self, runs: Sequence[RunSummary]) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        counts: dict[tuple[str, str, str], int] = {}
        for run in runs:
            key = (run.provider, run.state, run.task_state)
            counts[key] = counts.get(key, 0) + 1
        family = GaugeMetricFamily(
            "agentspool_runs",
            "Runs by provider, state and declared task state.",
            labels=["provider", "state", "task_state"],
        )
        for (provider, state, task), n in sorted(counts.items()):
            family.add_metric([provider, state, task], n)
        yield family

    def _waits(self, runs: Sequence[RunSummary]) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        metrics = self.metrics
        now = metrics.clock()
        waiting = GaugeMetricFamily(
            "agentspool_waiting_seconds",
            "How long each run waiting on the operator has waited (the longest waits).",
            labels=["provider", "run", "project", "waits_for"],
        )
        working = GaugeMetricFamily(
            "agentspool_working_seconds",
            "How long each working run has been working.",
            labels=["provider", "run", "project"],
        )
        shown = dropped = 0
        # ls's order: waiting (longest first), then working (longest first).
        for run in runs:
            kind = wait_kind(run)
            if kind is None and run.state != "working":
                continue
            if shown >= metrics.max_runs:
                dropped += 1
                continue
            shown += 1
            since = run.since if run.since > 0 else now
            age = max(0.0, now - since)
            if kind is not None:
                waiting.add_metric([run.provider, run_key(run), run.cwd, kind], age)
            else:
                working.add_metric([run.provider, run_key(run), run.cwd], age)
        yield waiting
        yield working
        cut = GaugeMetricFamily(
            "agentspool_series_dropped",
            "Runs left out of the per-run series (over the daemon's --metrics-max-runs).",
        )
        cut.add_metric([], dropped)
        yield cut

    def _usage(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        total, today = self.metrics._usage_reports()
        tokens = CounterMetricFamily(
            "agentspool_tokens",
            "Tokens in the history store, by provider, model and kind (input counts "
            "neither cache reads nor writes).",
            labels=["provider", "model", "kind"],
        )
        cost = CounterMetricFamily(
            "agentspool_cost_usd",
            "What the history store's tokens cost at the shipped prices (unpriced models "
            "left out).",
            labels=["provider", "model"],
        )
        for row in total.rows if total is not None else ():
            for token_kind, name in TOKEN_KINDS:
                tokens.add_metric([row.provider, row.key, token_kind], getattr(row, name))
            if row.cost_usd is not None:
                cost.add_metric([row.provider, row.key], row.cost_usd)
        yield tokens
        yield cost
        spend = GaugeMetricFamily(
            "agentspool_cost_today_usd",
            "What today's tokens cost (the daemon's local day), by provider.",
            labels=["provider"],
        )
        by_provider: dict[str, float] = {}
        for row in today.rows if today is not None else ():
            if row.cost_usd is not None:
                by_provider[row.provider] = by_provider.get(row.provider, 0.0) + row.cost_usd
        for provider, usd in sorted(by_provider.items()):
            spend.add_metric([provider], usd)
        yield spend
