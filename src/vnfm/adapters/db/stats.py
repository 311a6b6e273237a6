"""The fleet's numbers for the metrics, read at scrape time: occurrences by operation and state (with
the time the oldest of each entered its state) and instances by instantiation state. Two GROUP BY
queries on indexed columns, in one read-only connection: no transaction is begun (on SQLite a unit
of work's `BEGIN IMMEDIATE` would take the write lock), so a scrape never waits for or blocks the
engine's writes. Also the open alarms by perceived severity (a third GROUP BY, issue 28)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from vnfm.adapters.db.tables import alarms, vnf_instances, vnf_lcm_op_occs


@dataclass(frozen=True)
class FleetCounts:
    # (operation, operationState) -> number of occurrences
    occurrences: dict[tuple[str, str], int] = field(default_factory=dict)
    # (operation, operationState) -> when the oldest of them entered that state
    oldest_entered: dict[tuple[str, str], datetime] = field(default_factory=dict)
    # instantiationState -> number of instances
    instances: dict[str, int] = field(default_factory=dict)
    # perceivedSeverity -> number of alarms not cleared
    open_alarms: dict[str, int] = field(default_factory=dict)


def fleet_counts(factory: sessionmaker[Session]) -> FleetCounts:
    occ = vnf_lcm_op_occs.c
    inst = vnf_instances.c
    by_op = select(occ.operation, occ.operation_state, func.count(), func.min(occ.state_entered_time)) \
        .group_by(occ.operation, occ.operation_state)
    by_state = select(inst.instantiation_state, func.count()).group_by(inst.instantiation_state)
    by_severity = select(alarms.c.perceived_severity, func.count()).where(alarms.c.cleared.is_(False)) \
        .group_by(alarms.c.perceived_severity)
    with factory.kw["bind"].connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        rows = conn.execute(by_op).all()
        inst_rows = conn.execute(by_state).all()
        alarm_rows = conn.execute(by_severity).all()
    return FleetCounts(
        occurrences={(op, state): int(n) for op, state, n, _ in rows},
        oldest_entered={(op, state): oldest for op, state, _, oldest in rows if oldest is not None},
        instances={state: int(n) for state, n in inst_rows},
        open_alarms={str(sev): int(n) for sev, n in alarm_rows},
    )
