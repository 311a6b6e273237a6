"""The metrics' database counts (adapters/db/stats.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, fleet_counts
from vnfm.domain.model import InstantiationState, LcmOperation, OpState

Uow = Callable[[], SqlAlchemyUnitOfWork]


def test_fleet_counts_group_by_state(uow: Uow, session_factory: sessionmaker[Session]) -> None:
    assert fleet_counts(session_factory).occurrences == {}
    with uow() as u:
        u.instances.add(f.instance(instantiation_state=InstantiationState.INSTANTIATED))
        u.instances.add(f.instance(instantiation_state=InstantiationState.INSTANTIATED))
        u.instances.add(f.instance(instantiation_state=InstantiationState.NOT_INSTANTIATED))
        scale, heal, temp = LcmOperation.SCALE, LcmOperation.HEAL, OpState.FAILED_TEMP
        for op, state, age in ((scale, temp, 10), (scale, temp, 99), (heal, temp, 5),
                               (LcmOperation.INSTANTIATE, OpState.COMPLETED, 1)):
            entered = f.T0 - timedelta(seconds=age)
            u.op_occs.add(f.op_occ(operation=op, operation_state=state, state_entered_time=entered))
        u.commit()
    got = fleet_counts(session_factory)
    assert got.instances == {"INSTANTIATED": 2, "NOT_INSTANTIATED": 1}
    assert got.occurrences == {("SCALE", "FAILED_TEMP"): 2, ("HEAL", "FAILED_TEMP"): 1, ("INSTANTIATE", "COMPLETED"): 1}
    oldest = got.oldest_entered[("SCALE", "FAILED_TEMP")]
    assert oldest.tzinfo is not None and oldest == f.T0 - timedelta(seconds=99)  # an aware UTC time
    assert oldest.timestamp() == (f.T0 - timedelta(seconds=99)).timestamp()
