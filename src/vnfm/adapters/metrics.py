"""Prometheus metrics (prometheus-client), in a registry of their own (several apps in one test
process do not collide): operations by type and outcome and their durations, stage durations,
operations in flight, whether the engine runs, notification deliveries and failures, HTTP request
latency; with `watch_fleet`, the gauges read from the database, the build information and the
process metrics (adapters/metrics_fleet.py). Every known label set (operations x outcomes, delivery
outcomes) is there from the start at zero, so that `rate()` and `increase()` see the first event.
Served by the API at GET /metrics.

It is the engine's `Telemetry` (vnfm.service.telemetry, matched by shape), the notifier's
delivery callback and the access log's latency observer.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from vnfm.adapters.db.stats import FleetCounts
from vnfm.adapters.metrics_fleet import FleetCollector, register_fleet
from vnfm.domain.alarms import PerceivedSeverity
from vnfm.domain.autoheal import SKIP_REASONS
from vnfm.domain.model import LcmOperation

STAGE_BUCKETS = (0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)
# An LCM operation takes seconds (a CNF) to hours (a large cluster on a slow cloud).
OPERATION_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800, 14400)
# How an operation's run ends here: a final state, or FAILED_TEMP (retry / rollback / fail follow).
OUTCOMES = ("COMPLETED", "FAILED_TEMP", "ROLLED_BACK", "FAILED")


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.ops_started = Counter("vnfm_operations_started", "LCM operations started (or resumed) here",
                                   ["operation"], registry=r)
        self.ops_done = Counter("vnfm_operations", "LCM operations ended here, by outcome (final or FAILED_TEMP)",
                                ["operation", "outcome"], registry=r)
        self.durations = Histogram("vnfm_operation_duration_seconds",
                                   "LCM operation runs, from start (or resume) to the state they ended in here",
                                   ["operation", "outcome"], buckets=OPERATION_BUCKETS, registry=r)
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
        self.fleet: FleetCollector | None = None
        # fault management (service/fm): alarms raised, detection and automatic-heal latency, skipped heals
        self.alarms = Counter("vnfm_alarms_raised", "Alarms raised here, by perceived severity", ["severity"],
                              registry=r)
        self.detection = Histogram("vnfm_alarm_detection_seconds", "From the last check that saw the VNFC "
                                   "healthy to its alarm (an upper bound of the detection latency)",
                                   buckets=STAGE_BUCKETS, registry=r)
        self.heal_latency = Histogram("vnfm_autoheal_start_seconds", "From a VNFC first seen unhealthy to its "
                                      "automatic heal started", buckets=STAGE_BUCKETS, registry=r)
        self.heal_skipped = Counter("vnfm_autoheal_skipped", "Automatic heals not started, by reason", ["reason"],
                                    registry=r)
        for sev in PerceivedSeverity:
            self.alarms.labels(sev.value)
        for reason in SKIP_REASONS:
            self.heal_skipped.labels(reason)
        for op in LcmOperation:
            self.ops_started.labels(op.value)
            for outcome in OUTCOMES:
                self.ops_done.labels(op.value, outcome)
                self.durations.labels(op.value, outcome)
        for delivery in ("delivered", "failed"):
            self.notifications.labels(delivery)

    # the engine's Telemetry
    def stage_done(self, operation: str, stage: str, seconds: float, outcome: str) -> None:
        self.stages.labels(operation, stage, outcome).observe(seconds)

    def operation_started(self, operation: str) -> None:
        self.ops_started.labels(operation).inc()

    def operation_done(self, operation: str, outcome: str, seconds: float) -> None:
        self.ops_done.labels(operation, outcome).inc()
        self.durations.labels(operation, outcome).observe(seconds)

    # the others
    def track_in_flight(self, count: Callable[[], int]) -> None:
        self.in_flight.set_function(lambda: float(count()))

    def track_heartbeat(self, last: Callable[[], float], largest: Callable[[], float]) -> None:
        """The engine's heartbeat lag: seconds between its last two beats, and the largest so far."""
        self.hb_lag.set_function(lambda: float(last()))
        self.hb_lag_max.set_function(lambda: float(largest()))

    def track_engine(self, running: Callable[[], bool]) -> None:
        """`vnfm_engine_running`: only in processes that run an engine (the others have none to be down)."""
        gauge = Gauge("vnfm_engine_running", "1 when this process's LCM engine runs", registry=self.registry)
        gauge.set_function(lambda: float(running()))

    def watch_fleet(self, counts: Callable[[], FleetCounts], *, database: str, ttl: float = 5.0) -> None:
        self.fleet = register_fleet(self.registry, counts, database=database, ttl=ttl)

    def notification_delivered(self, ok: bool) -> None:
        self.notifications.labels("delivered" if ok else "failed").inc()

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.http.labels(method, route, str(status)).observe(seconds)

    def alarm_raised(self, severity: str, detection_seconds: float | None) -> None:
        self.alarms.labels(severity).inc()
        if detection_seconds is not None:
            self.detection.observe(detection_seconds)

    def autoheal_started(self, seconds: float) -> None:
        self.heal_latency.observe(seconds)

    def autoheal_skipped(self, reason: str) -> None:
        self.heal_skipped.labels(reason).inc()

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
