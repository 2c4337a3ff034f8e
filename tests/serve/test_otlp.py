"""OTLP push with the official SDK and exporter to a receiver on 127.0.0.1 that decodes
the protobuf requests with the official ``opentelemetry-proto`` messages: one log record
per transition with its attributes, the metrics, and the resource."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from receivers import Receiver

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from agentspool import PendingApproval, RunChange, RunEvent, RunSummary
from agentspool.serve.otlp import EVENT_NAME, OtlpExport

NOW = 1_800_000_000.0


@pytest.fixture
def collector() -> Iterator[Receiver]:
    """An OTLP/HTTP collector on 127.0.0.1: it takes what it is sent (``_decoded``)."""
    with Receiver(reply_type="application/x-protobuf") as made:
        yield made


def _decoded(collector: Receiver, path: str, message: Any) -> list[Any]:
    """Every request posted to ``path``, decoded with the official OTLP messages."""
    return [message.FromString(post.body) for post in collector.posts if post.path == path]


def run(state: str, *, since: float, **kw) -> RunSummary:
    return RunSummary(
        provider="claude-code",
        run_id="r1",
        session_id="s-1",
        state=state,  # type: ignore[arg-type]
        activity="unknown",
        task_state="active",
        since=since,
        cwd="/src/shop",
        **kw,
    )


def moved(before: RunSummary | None, after: RunSummary) -> RunEvent:
    return RunChange("claude-code:r1", before, after).event(NOW)


def _attrs(pairs) -> dict[str, str]:
    return {kv.key: kv.value.string_value for kv in pairs}


def test_each_transition_is_a_log_record_and_the_metrics_are_pushed(
    collector: Receiver, monkeypatch
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,team=infra")
    approval = PendingApproval(tool_name="Bash", tool_input={"command": "make deploy"})
    working = run("working", since=NOW)
    waiting = run("needs_input", since=NOW + 5, pending_approval=approval)
    again = run("working", since=NOW + 65)
    current = [working]
    export = OtlpExport(url=collector.url, runs=lambda: current, clock=lambda: NOW + 70)
    export.start()
    export.observe(moved(None, working))
    current = [waiting]
    export.observe(moved(working, waiting))
    export.observe(moved(waiting, waiting))  # no move: no record
    current = [again]
    export.observe(moved(waiting, again))
    export.close()

    records = [
        (resource_logs.resource, record)
        for request in _decoded(collector, "/v1/logs", ExportLogsServiceRequest)
        for resource_logs in request.resource_logs
        for scope in resource_logs.scope_logs
        for record in scope.log_records
    ]
    assert [record.event_name for _, record in records] == [EVENT_NAME] * 3
    moves = [
        (_attrs(r.attributes)["agentspool.from"], _attrs(r.attributes)["agentspool.to"])
        for _, r in records
    ]
    assert moves == [("", "working"), ("working", "needs_input"), ("needs_input", "working")]
    asks = _attrs(records[1][1].attributes)
    assert asks["agentspool.provider"] == "claude-code"
    assert asks["agentspool.run_id"] == "r1"
    assert asks["agentspool.session_id"] == "s-1"
    assert asks["agentspool.pending_tool"] == "Bash"
    assert asks["agentspool.pending_command"] == "make deploy"
    resource = _attrs(records[0][0].attributes)
    assert resource["service.name"] == "agentspool"
    assert resource["host.name"]
    assert resource["deployment.environment"] == "ci"
    assert resource["team"] == "infra"

    metrics = {
        metric.name: metric
        for request in _decoded(collector, "/v1/metrics", ExportMetricsServiceRequest)
        for resource_metrics in request.resource_metrics
        for scope in resource_metrics.scope_metrics
        for metric in scope.metrics
    }
    assert {"agentspool.runs", "agentspool.transitions", "agentspool.wait.duration"} <= set(metrics)
    (finished,) = metrics["agentspool.wait.duration"].histogram.data_points
    assert (finished.count, finished.sum) == (1, 60.0)
    counted = {
        (_attrs(p.attributes)["from_state"], _attrs(p.attributes)["to_state"]): p.as_int
        for p in metrics["agentspool.transitions"].sum.data_points
    }
    assert counted == {
        ("", "working"): 1,
        ("working", "needs_input"): 1,
        ("needs_input", "working"): 1,
    }
    (runs,) = metrics["agentspool.runs"].gauge.data_points
    assert _attrs(runs.attributes)["state"] == "working"


def test_the_endpoint_can_come_from_the_standard_variables(
    collector: Receiver, monkeypatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", collector.url + "/v1/logs")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", collector.url + "/v1/metrics")
    export = OtlpExport(url="", runs=list)
    export.start()
    export.observe(moved(None, run("working", since=NOW)))
    export.close()
    assert "/v1/logs" in [post.path for post in collector.posts]
