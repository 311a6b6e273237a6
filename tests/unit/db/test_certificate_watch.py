"""The certificate watch's table (adapters/db/certificates.py), on SQLite and PostgreSQL: several
processes claim concurrently and each due instance is checked by exactly one; a claimed instance
is not due again before its period; what a check found is what the metric reads."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, fleet_counts
from vnfm.adapters.db.certificates import SqlCertificateWatch
from vnfm.domain.model import InstantiationState

Uow = Callable[[], SqlAlchemyUnitOfWork]


def test_each_due_instance_is_claimed_by_one_process(uow: Uow, session_factory: sessionmaker[Session]) -> None:
    with uow() as u:
        ids = []
        for _ in range(12):
            inst = f.instance(instantiation_state=InstantiationState.INSTANTIATED)
            u.instances.add(inst)
            ids.append(inst.id)
        u.instances.add(f.instance(instantiation_state=InstantiationState.NOT_INSTANTIATED))
        u.commit()
    watches = [SqlCertificateWatch(session_factory) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: watches[i].claim(f"p{i}", 1000.0, 60.0), range(4)))
    claimed = [row.instance_id for rows in got for row in rows]
    assert sorted(claimed) == sorted(ids)  # every instantiated one, each once
    assert all(w.claim("p9", 1059.0, 60.0) == [] for w in watches)  # not due before its period
    again = watches[0].claim("p0", 1060.0, 60.0)
    assert sorted(r.instance_id for r in again) == sorted(ids)
    watches[0].record(ids[0], {"apiserver": 5000.0, "admin.conf": 4000.0}, warned_for=4000.0)
    assert fleet_counts(session_factory).certificates == {(ids[0], "apiserver"): 5000.0,
                                                          (ids[0], "admin.conf"): 4000.0}
    row = next(r for r in watches[1].claim("p1", 2000.0, 60.0) if r.instance_id == ids[0])
    assert row.warned_for == 4000.0 and row.renew_for is None


def test_a_check_may_ask_to_be_checked_again_sooner(uow: Uow, session_factory: sessionmaker[Session]) -> None:
    with uow() as u:
        inst = f.instance(instantiation_state=InstantiationState.INSTANTIATED)
        u.instances.add(inst)
        u.commit()
    watch = SqlCertificateWatch(session_factory)
    assert [r.instance_id for r in watch.claim("p0", 1000.0, 3600.0)] == [inst.id]
    watch.record(inst.id, {"apiserver": 5000.0}, next_check=1360.0)  # an open alarm: a tenth of the period
    assert watch.claim("p1", 1359.0, 3600.0) == []
    assert [r.instance_id for r in watch.claim("p1", 1360.0, 3600.0)] == [inst.id]
