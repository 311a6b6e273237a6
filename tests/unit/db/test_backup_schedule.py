"""The etcd backup schedule's table (adapters/db/backups.py), on SQLite and PostgreSQL: several
processes claim concurrently and each due instance is backed up by exactly one; a claimed instance
is not due again before its lease or recorded period; the latest success survives a failure."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork
from vnfm.adapters.db.backups import SqlBackupSchedule
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
    tables = [SqlBackupSchedule(session_factory) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: tables[i].claim(f"p{i}", 1000.0, 60.0, 50), range(4)))
    claimed = [i for rows in got for i in rows]
    assert sorted(claimed) == sorted(ids)  # every instantiated one, each once
    assert all(t.claim("p9", 1059.0, 60.0, 50) == [] for t in tables)  # the lease holds
    t = tables[0]
    t.record(ids[0], 5000.0, {"ok": True, "at": 1000.0, "size": 10})
    t.record(ids[0], 5000.0, {"ok": False, "at": 1001.0, "reason": "etcd is not healthy"})
    row = t.get(ids[0])
    assert row is not None and row["last"]["ok"] is False and row["last_ok"]["size"] == 10
    assert t.all_recorded() == [(ids[0], row["last"], row["last_ok"])]
    assert ids[0] not in t.claim("p0", 1060.0, 60.0, 50)  # recorded: due at 5000 only
    assert ids[0] in t.claim("p1", 5000.0, 60.0, 50)
