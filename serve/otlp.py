"""``serve --otlp [URL]``: transitions and metrics pushed to an OpenTelemetry Collector
over OTLP/HTTP (ADR 0041).

Each transition is one log record, event name ``agentspool.state_change``, with the
provider, run id, session id, the state left and entered, and what the run waits on (the
pending tool and its command, or the question). The metrics are the ones ``/metrics``
serves, as OTel instruments: observable gauges read from the latest poll, a counter of
transitions and a histogram of finished waits.

The resource is ``service.name=agentspool`` and ``host.name`` (the machine: in a fleet
the Collector tells instances apart by it), merged with the user's
``OTEL_RESOURCE_ATTRIBUTES`` / ``OTEL_SERVICE_NAME``. The exporters honour the standard
``OTEL_EXPORTER_OTLP_*`` variables (headers, timeout, compression, certificates); ``URL``
is the Collector's base (``http://host:4318``: ``/v1/logs`` and ``/v1/metrics`` are
added), and without it the endpoint comes from those variables too.

The SDK (extra ``agentspool[otel]``) is imported here only; a missing SDK is one line.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentspool import run_key, state_phrase
from agentspool.errors import MissingExtraError
from agentspool.serve.notify import wait_kind

if TYPE_CHECKING:
    from agentspool import RunEvent, RunSummary

EVENT_NAME = "agentspool.state_change"
EXPORT_EVERY_MS = 10_000
"""How often the metrics are pushed (OTEL_METRIC_EXPORT_INTERVAL overrides it)."""


def _endpoint(base: str, signal: str) -> str | None:
    return f"{base.rstrip('/')}/v1/{signal}" if base else None


def state_change_attributes(after: RunEvent) -> dict[str, str]:
    attributes = {
        "agentspool.provider": after.provider,
        "agentspool.run_id": after.run_id,
        "agentspool.session_id": after.session_id,
        "agentspool.from": after.previous or "",
        "agentspool.to": after.state,
        "agentspool.task_state": after.task_state,
        "agentspool.project": after.cwd,
    }
    approval = after.pending_approval
    if approval is not None:
        attributes["agentspool.pending_tool"] = approval.tool_name
        command = approval.tool_input.get("command")
        if isinstance(command, str):
            attributes["agentspool.pending_command"] = command
    dialog = after.pending_dialog
    if dialog is not None:
        attributes["agentspool.question"] = dialog.prompt
    kind = wait_kind(after)
    if kind is not None:
        attributes["agentspool.waits_for"] = kind
        attributes["agentspool.what_to_do"] = state_phrase(after)
    return attributes


@dataclass
class OtlpExport:
    """Started by ``serve`` with ``--otlp``; fed the same way as ``FleetMetrics``."""

    url: str = ""
    runs: Callable[[], Sequence[RunSummary]] = list
    """The latest poll's runs (read when the metrics are collected)."""
    clock: Callable[[], float] | None = None
    export_every_ms: int | None = None
    _logger: Any = field(init=False, default=None)
    _providers: list[Any] = field(init=False, default_factory=list)
    _transitions: Any = field(init=False, default=None)
    _waits: Any = field(init=False, default=None)
    _wait_started: dict[str, float] = field(init=False, default_factory=dict)

    def start(self) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter,
            )
            from opentelemetry.metrics import CallbackOptions, Observation
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
            from opentelemetry.sdk.resources import Resource
        except ImportError as exc:
            raise MissingExtraError("serve --otlp", "otel", exc.name or "opentelemetry") from None
        from agentspool import __version__ as version

        # Resource.create merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over ours.
        resource = Resource.create(
            {
                "service.name": "agentspool",
                "service.version": version,
                "host.name": socket.gethostname(),
            }
        )
        logs = LoggerProvider(resource=resource)
        logs.add_log_record_processor(
            BatchLogRecordProcessor(
                OTLPLogExporter(endpoint=_endpoint(self.url, "logs")), schedule_delay_millis=500
            )
        )
        self._logger = logs.get_logger("agentspool.serve", version)
        reader_args: dict[str, Any] = {}
        if self.export_every_ms is not None:
            reader_args["export_interval_millis"] = self.export_every_ms
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=_endpoint(self.url, "metrics")), **reader_args
        )
        meters = MeterProvider(resource=resource, metric_readers=[reader])
        meter = meters.get_meter("agentspool.serve", version)
        self._providers = [logs, meters]

        def runs_by_state(options: CallbackOptions) -> Iterable[Observation]:
            counts: dict[tuple[str, str, str], int] = {}
            for run in self.runs():
                key = (run.provider, run.state, run.task_state)
                counts[key] = counts.get(key, 0) + 1
            for (provider, state, task), n in sorted(counts.items()):
                yield Observation(n, {"provider": provider, "state": state, "task_state": task})

        def waiting(options: CallbackOptions) -> Iterable[Observation]:
            now = self._now()
            for run in self.runs():
                kind = wait_kind(run)
                if kind is not None:
                    since = run.since if run.since > 0 else now
                    yield Observation(
                        max(0.0, now - since),
                        {"provider": run.provider, "run": run_key(run), "waits_for": kind},
                    )

        meter.create_observable_gauge(
            "agentspool.runs", [runs_by_state], unit="{run}", description="Runs by state."
        )
        meter.create_observable_gauge(
            "agentspool.waiting",
            [waiting],
            unit="s",
            description="How long each run waiting on the operator has waited.",
        )
        self._transitions = meter.create_counter(
            "agentspool.transitions", unit="{transition}", description="State transitions."
        )
        self._waits = meter.create_histogram(
            "agentspool.wait.duration",
            unit="s",
            description="Finished waits: from needing the operator to working again.",
        )

    def observe(self, event: RunEvent) -> None:
        """One transition (a ``TransitionHub`` subscriber: the SDK batches, never blocks)."""
        if self._logger is None or event.event == "gone":
            return
        if event.previous == event.state:
            return
        from opentelemetry._logs import SeverityNumber

        waiting = wait_kind(event) is not None
        self._logger.emit(
            event_name=EVENT_NAME,
            body=f"{event.provider} {event.key}: {event.previous or 'seen'} -> {event.state}",
            severity_number=SeverityNumber.WARN if waiting else SeverityNumber.INFO,
            severity_text="WARN" if waiting else "INFO",
            attributes=state_change_attributes(event),
        )
        self._transitions.add(
            1,
            {
                "provider": event.provider,
                "from_state": event.previous or "",
                "to_state": event.state,
            },
        )
        at = event.since if event.since > 0 else self._now()
        if waiting:
            self._wait_started.setdefault(event.key, at)
        elif event.key in self._wait_started:
            started = self._wait_started.pop(event.key)
            if event.state == "working":
                self._waits.record(max(0.0, at - started), {"provider": event.provider})

    def close(self) -> None:
        for provider in self._providers:
            provider.force_flush()
            provider.shutdown()
        self._providers = []

    def _now(self) -> float:
        import time

        return self.clock() if self.clock is not None else time.time()
