"""The etcd backup gauges, read from the schedule's table at scrape time (the latest attempt and
the latest successful backup of every instance, whichever process took them): RPO and "has a
restore ever worked" as numbers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

Rows = list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]


class BackupCollector(Collector):
    def __init__(self, rows: Callable[[], Rows], clock: Callable[[], float] = time.time) -> None:
        self.rows = rows
        self.clock = clock

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(self._families())

    def _families(self) -> list[GaugeMetricFamily]:
        lab = ["vnf_instance_id"]
        return [
            GaugeMetricFamily("vnfm_etcd_backup_last_success_timestamp_seconds",
                              "When the newest etcd backup copied into the VNFM's store was taken (Unix time)",
                              labels=lab),
            GaugeMetricFamily("vnfm_etcd_backup_age_seconds",
                              "Age of the newest etcd backup in the VNFM's store (the recovery point)", labels=lab),
            GaugeMetricFamily("vnfm_etcd_backup_size_bytes", "Size of the newest etcd backup", labels=lab),
            GaugeMetricFamily("vnfm_etcd_backup_last_result",
                              "1 when the latest scheduled etcd backup succeeded, 0 when it failed", labels=lab),
            GaugeMetricFamily("vnfm_etcd_backup_drill_last_result",
                              "1 when the restore drill of the newest etcd backup restored it with its keys, "
                              "0 when it failed", labels=lab),
            GaugeMetricFamily("vnfm_etcd_backup_drill_last_timestamp_seconds",
                              "When the restore drill of the newest etcd backup ran (Unix time)", labels=lab),
        ]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        ok_at, age, size, result, drill, drill_at = fams = self._families()
        now = self.clock()
        for inst_id, last, ok in sorted(self.rows(), key=lambda r: r[0]):
            if last is not None:
                result.add_metric([inst_id], 1.0 if last.get("ok") else 0.0)
            if ok:
                ok_at.add_metric([inst_id], float(ok["at"]))
                age.add_metric([inst_id], max(0.0, now - float(ok["at"])))
                size.add_metric([inst_id], float(ok.get("size") or 0))
                d = ok.get("drill") or {}
                if d:
                    drill.add_metric([inst_id], 1.0 if d.get("ok") else 0.0)
                    drill_at.add_metric([inst_id], float(d.get("at") or 0))
        yield from fams


def register_backups(registry: CollectorRegistry, rows: Callable[[], Rows]) -> BackupCollector:
    c = BackupCollector(rows)
    registry.register(c)
    return c
