"""What ``serve`` hands on beyond its own API (ADR 0041): the ``/metrics`` registry, the
OTLP push and the notifications, each a subscriber of the one ``TransitionHub``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import agentspool
from agentspool.serve.metrics import FleetMetrics
from agentspool.serve.notify import Notifier, WaitKind

if TYPE_CHECKING:
    from agentspool.serve.app import ServeConfig
    from agentspool.serve.hub import Published, TransitionHub
    from agentspool.serve.otlp import OtlpExport


@dataclass
class Fleet:
    metrics: FleetMetrics
    notifier: Notifier | None = None
    otlp: OtlpExport | None = None

    @classmethod
    def attach(cls, config: ServeConfig, hub: TransitionHub) -> Fleet:
        """Made before the hub's first tick, so its first events are seen too."""

        def usage(since: dt.date | None) -> agentspool.UsageReport | None:
            with hub.library:
                agentspool.index_history(wait=False)
                return agentspool.usage(by="model", since=since, index=False)

        fleet = cls(
            metrics=FleetMetrics(runs=hub.runs, usage=usage, max_runs=config.metrics_max_runs)
        )
        if config.notify:
            kinds: tuple[WaitKind, ...] = tuple(config.notify_on)  # type: ignore[arg-type]
            fleet.notifier = Notifier(config.notify, kinds=kinds, remind_after=config.remind_after)
        if config.otlp is not None:
            from agentspool.serve.otlp import OtlpExport

            fleet.otlp = OtlpExport(url=config.otlp, runs=hub.runs)
            fleet.otlp.start()
        hub.subscribe(fleet.deliver)
        return fleet

    def deliver(self, published: Published) -> None:
        event = published.event
        self.metrics.observe(event)
        if self.notifier is not None:
            self.notifier.observe(event)
        if self.otlp is not None:
            self.otlp.observe(event)

    def close(self) -> None:
        if self.notifier is not None:
            self.notifier.close()
        if self.otlp is not None:
            self.otlp.close()
