"""What the engine reports about its work besides the occurrence itself: one log line per stage start
and end (instance, occurrence, stage, duration) and per finished operation, and the same events to a
`Telemetry` (the Prometheus metrics of adapters/metrics.py; none: only the log lines).

Log records carry their fields as `extra` (instance, op, operation, stage, seconds, outcome) so
that the JSON log format writes them as keys and the human one as key=value.
"""

from __future__ import annotations

import logging
from typing import Protocol

log = logging.getLogger("vnfm.lcm")


class Telemetry(Protocol):
    def stage_done(self, operation: str, stage: str, seconds: float, outcome: str) -> None: ...

    def operation_done(self, operation: str, outcome: str, seconds: float) -> None: ...

    def operation_started(self, operation: str) -> None: ...


class NoTelemetry:
    def stage_done(self, operation: str, stage: str, seconds: float, outcome: str) -> None:
        return None

    def operation_done(self, operation: str, outcome: str, seconds: float) -> None:
        return None

    def operation_started(self, operation: str) -> None:
        return None


def stage_started(instance: str, op: str, operation: str, stage: str) -> None:
    log.info("stage %s started", stage,
             extra={"instance": instance, "op": op, "operation": operation, "stage": stage})


def stage_ended(telemetry: Telemetry, instance: str, op: str, operation: str, stage: str, seconds: float,
                outcome: str) -> None:
    level = logging.INFO if outcome == "ok" else logging.WARNING
    log.log(level, "stage %s %s in %.2fs", stage, "done" if outcome == "ok" else outcome, seconds,
            extra={"instance": instance, "op": op, "operation": operation, "stage": stage,
                   "seconds": round(seconds, 3), "outcome": outcome})
    telemetry.stage_done(operation, stage, seconds, outcome)
