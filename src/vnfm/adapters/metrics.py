"""Prometheus metrics (prometheus-client), in a registry of their own (several apps in one test
process do not collide): operations by type and outcome, stage durations, operations in flight,
notification deliveries and failures, HTTP request latency. Served by the API at GET /metrics.

It is the engine's `Telemetry` (vnfm.service.telemetry, matched by shape), the notifier's
delivery callback and the access log's latency observer.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

STAGE_BUCKETS = (0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.ops_started = Counter("vnfm_operations_started", "LCM operations started (or resumed) here",
                                   ["operation"], registry=r)
        self.ops_done = Counter("vnfm_operations", "LCM operations ended here, by outcome (final or FAILED_TEMP)",
                                ["operation", "outcome"], registry=r)
        self.stages = Histogram("vnfm_stage_duration_seconds", "LCM stage durations",
                                ["operation", "stage", "outcome"], buckets=STAGE_BUCKETS, registry=r)
        self.in_flight = Gauge("vnfm_operations_in_flight", "LCM operations running in this process", registry=r)
        self.hb_lag = Gauge("vnfm_heartbeat_lag_seconds", "Seconds between the engine's last two heartbeats",
                            registry=r)
        self.hb_lag_max = Gauge("vnfm_heartbeat_lag_max_seconds", "The largest heartbeat lag since the start",
                                registry=r)
        self.notifications = Counter("vnfm_notification_deliveries", "Notification deliveries, by outcome",
                                     ["outcome"], registry=r)
        self.http = Histogram("vnfm_http_request_duration_seconds", "HTTP request latency",
                              ["method", "route", "status"], registry=r)

    # the engine's Telemetry
    def stage_done(self, operation: str, stage: str, seconds: float, outcome: str) -> None:
        self.stages.labels(operation, stage, outcome).observe(seconds)

    def operation_started(self, operation: str) -> None:
        self.ops_started.labels(operation).inc()

    def operation_done(self, operation: str, outcome: str) -> None:
        self.ops_done.labels(operation, outcome).inc()

    # the others
    def track_in_flight(self, count: Callable[[], int]) -> None:
        self.in_flight.set_function(lambda: float(count()))

    def track_heartbeat(self, last: Callable[[], float], largest: Callable[[], float]) -> None:
        """The engine's heartbeat lag: seconds between its last two beats, and the largest so far."""
        self.hb_lag.set_function(lambda: float(last()))
        self.hb_lag_max.set_function(lambda: float(largest()))

    def notification_delivered(self, ok: bool) -> None:
        self.notifications.labels("delivered" if ok else "failed").inc()

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.http.labels(method, route, str(status)).observe(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
