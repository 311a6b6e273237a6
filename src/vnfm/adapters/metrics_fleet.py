"""Metrics read from the database at scrape time, so that they are the same in every server process
sharing it (alert on `max without(instance)`, not `sum`): occurrences by operation and
operationState (`FAILED_TEMP > 0` is an alert), the time the oldest occurrence of each unfinished
state entered it (an operation stuck in PROCESSING), instances by instantiationState, whether the
database answered. The query (adapters/db/stats.py) runs at most once per `ttl` seconds whatever
the scrape rate; a failed one is cached too (a storm of scrapes cannot load a database that is
already in trouble) and reported as `vnfm_database_up 0` without the state gauges.

Also here: `vnfm_build_info` and the process metrics of prometheus-client (CPU, memory, open file
descriptors, start time; Python version, garbage collector).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Info
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from vnfm import __version__
from vnfm.adapters.db.stats import FleetCounts
from vnfm.domain.alarms import PerceivedSeverity
from vnfm.domain.model import FINAL_OP_STATES, InstantiationState, LcmOperation, OpState

log = logging.getLogger(__name__)
UNFINISHED = tuple(s.value for s in OpState if s not in FINAL_OP_STATES)


class FleetCollector(Collector):
    def __init__(self, counts: Callable[[], FleetCounts], ttl: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.counts = counts
        self.ttl = ttl
        self.clock = clock
        self.queries = 0  # how many times the database was asked (tests)
        self._lock = threading.Lock()
        self._at: float | None = None
        self._last: FleetCounts | None = None

    def snapshot(self) -> FleetCounts | None:
        """The counts, at most `ttl` seconds old; None when the database did not answer."""
        with self._lock:
            now = self.clock()
            if self._at is None or now - self._at >= self.ttl:
                self.queries += 1
                try:
                    self._last = self.counts()
                except Exception as exc:  # any driver error; its text can hold the URL
                    log.warning("metrics: the database did not answer (%s)", type(exc).__name__)
                    self._last = None
                self._at = now
            return self._last

    def describe(self) -> Iterable[Metric]:
        return list(self._families(None))

    def collect(self) -> Iterable[Metric]:
        return list(self._families(self.snapshot(), described=False))

    def _families(self, snap: FleetCounts | None, described: bool = True) -> Iterable[Metric]:
        yield GaugeMetricFamily("vnfm_database_up", "1 when the database answered the last scrape's query",
                                value=None if described else float(snap is not None))
        occ = GaugeMetricFamily("vnfm_lcm_op_occs", "LCM operation occurrences in the database, by operation "
                                "and operationState", labels=["operation", "operation_state"])
        oldest = GaugeMetricFamily("vnfm_lcm_op_occs_oldest_state_entered_timestamp_seconds",
                                   "When the oldest occurrence in an unfinished operationState entered it "
                                   "(Unix time; absent when there is none)", labels=["operation_state"])
        inst = GaugeMetricFamily("vnfm_vnf_instances", "VNF instances in the database, by instantiationState",
                                 labels=["instantiation_state"])
        open_alarms = GaugeMetricFamily("vnfm_alarms_open", "SOL003 alarms not cleared, by perceived severity",
                                        labels=["severity"])
        if snap is not None:
            pairs = {(o.value, s.value) for o in LcmOperation for s in OpState} | set(snap.occurrences)
            for op, state in sorted(pairs):
                occ.add_metric([op, state], snap.occurrences.get((op, state), 0))
            for state in UNFINISHED:
                times = [t for (_, s), t in snap.oldest_entered.items() if s == state]
                if times:
                    oldest.add_metric([state], min(times).timestamp())
            for st in sorted({s.value for s in InstantiationState} | set(snap.instances)):
                inst.add_metric([st], snap.instances.get(st, 0))
            for sev in sorted({s.value for s in PerceivedSeverity if s is not PerceivedSeverity.CLEARED}
                              | set(snap.open_alarms)):
                open_alarms.add_metric([sev], snap.open_alarms.get(sev, 0))
        if described or snap is not None:
            yield from (occ, oldest, inst, open_alarms)


def register_fleet(registry: CollectorRegistry, counts: Callable[[], FleetCounts], *, database: str,
                   ttl: float = 5.0) -> FleetCollector:
    """The database gauges, the build information and the process metrics, in `registry`."""
    fleet = FleetCollector(counts, ttl)
    registry.register(fleet)
    Info("vnfm_build", "The running vnfm: its version, Python's, the database's kind",
         registry=registry).info({"version": __version__, "python": sys.version.split()[0], "database": database})
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return fleet
