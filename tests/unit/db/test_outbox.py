"""The notification outbox on SQLite and PostgreSQL: stored with the transaction, taken once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import sqlalchemy as sa

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, tables
from vnfm.adapters.db.outbox import outbox_commits
from vnfm.domain.model import utcnow

Uow = Callable[[], SqlAlchemyUnitOfWork]


def _note(n: int) -> dict[str, object]:
    return {"notificationType": "VnfIdentifierCreationNotification", "vnfInstanceId": f"inst-{n}"}


def _add(uow: Uow, n: int, owner: str, info: dict[str, object] | None = None) -> None:
    with uow() as u:
        u.outbox.add(_note(n), info, owner=owner)
        u.commit()


def _count(uow: Uow) -> int:
    with uow() as u:
        return u.outbox.count()


def _claim(uow: Uow, owner: str, reclaim_before: object) -> list[str]:
    with uow() as u:
        got = u.outbox.claim(owner, reclaim_before)
        u.commit()
    return [str(e.notification["vnfInstanceId"]) for e in got]


def test_outbox_rows_go_with_their_transaction(uow: Uow) -> None:
    with uow() as u:
        u.outbox.add(_note(0), owner="a")  # no commit: rolled back with the change it reported
    assert _count(uow) == 0
    _add(uow, 1, "a", info={"id": "inst-1", "vnfProvider": "Company"})
    with uow() as u:
        [entry] = u.outbox.claim("a", utcnow() - timedelta(minutes=1))
        u.commit()
    assert entry.notification == _note(1)
    assert entry.info == {"id": "inst-1", "vnfProvider": "Company"}
    assert abs(datetime.fromisoformat(entry.published_at.replace("Z", "+00:00")) - utcnow()) < timedelta(minutes=1)
    with uow() as u:
        u.outbox.remove(entry.id)
        u.commit()
    assert _count(uow) == 0


def test_each_process_takes_its_own_rows_and_overdue_ones(uow: Uow) -> None:
    _add(uow, 1, "a")
    _add(uow, 2, "b")
    _add(uow, 3, "a")
    recent = utcnow() - timedelta(minutes=1)
    assert _claim(uow, "a", recent) == ["inst-1", "inst-3"]  # its own, oldest first
    assert _claim(uow, "a", recent) == []  # taken already
    assert _claim(uow, "b", recent) == ["inst-2"]
    assert _claim(uow, "c", recent) == []  # nothing of c's, nothing overdue
    # rows taken (or written) before `reclaim_before` belong to a process that died: anyone takes them
    assert _claim(uow, "c", utcnow() + timedelta(minutes=1)) == ["inst-1", "inst-2", "inst-3"]
    assert _count(uow) == 3


def test_concurrent_claims_take_each_overdue_row_once(uow: Uow) -> None:
    for i in range(30):
        _add(uow, i, "dead")
    with uow() as u:  # written ten minutes ago by a process that is gone
        u.tx.conn().execute(sa.update(tables.notification_outbox).values(
            created_at=utcnow() - timedelta(minutes=10)))
        u.commit()
    reclaim_before = utcnow() - timedelta(minutes=5)
    barrier = threading.Barrier(4, timeout=30)

    def claim(i: int) -> list[str]:
        barrier.wait()
        return _claim(uow, f"worker-{i}", reclaim_before)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(claim, range(4)))
    taken = [n for r in results for n in r]
    assert sorted(taken) == sorted(f"inst-{i}" for i in range(30))  # each exactly once


def _subscribe(uow: Uow, kind: str, tenant: str = "default") -> None:
    with uow() as u:
        sub = f.subscription(kind=kind)
        sub.tenant = tenant
        u.subscriptions.add(sub)
        u.commit()


def _stage(uow: Uow, notification: dict[str, object], tenant: str = "default") -> bool:
    with uow() as u:
        stored = u.outbox.add(notification, owner="a", tenant=tenant, if_subscribed=True)
        u.commit()
    return stored


def test_a_notification_nobody_can_receive_is_not_stored(uow: Uow) -> None:
    lcm = {"notificationType": "VnfLcmOperationOccurrenceNotification", "vnfInstanceId": "inst-1"}
    pkgm = {"notificationType": "VnfPackageChangeNotification", "vnfPkgId": "pkg-1"}
    alarm = {"notificationType": "AlarmNotification", "alarm": {"managedObjectId": "inst-1"}}
    assert not _stage(uow, lcm) and _count(uow) == 0  # no subscription at all
    _subscribe(uow, "vnfpkgm")
    _subscribe(uow, "vnflcm", tenant="other")
    assert not _stage(uow, lcm)  # a package subscription, and another tenant's, do not receive it
    assert not _stage(uow, alarm) and _count(uow) == 0
    assert _stage(uow, pkgm) and _count(uow) == 1
    assert _stage(uow, lcm, tenant="other") and _count(uow) == 2
    _subscribe(uow, "vnflcm2")  # a /vnflcm/v2 subscription receives the LCM notifications
    assert _stage(uow, lcm) and _count(uow) == 3
    _subscribe(uow, "vnffm")
    assert _stage(uow, alarm) and _count(uow) == 4
    with uow() as u:  # the row stored is the one add() writes without the condition
        got = u.outbox.claim("a", utcnow() - timedelta(minutes=1))
        u.commit()
    assert [(e.notification, e.tenant) for e in got] == [(pkgm, "default"), (lcm, "other"), (lcm, "default"),
                                                         (alarm, "default")]


def test_only_a_commit_that_stored_rows_tells_the_notifier(uow: Uow) -> None:
    with uow() as u:
        commits = outbox_commits(u.tx.engine)
    before = commits.count
    _stage(uow, _note(1))  # no subscription: nothing stored, nothing to tell
    assert commits.count == before
    with uow() as u:
        u.outbox.add(_note(2), owner="a")  # rolled back
    assert commits.count == before
    _add(uow, 3, "a")
    assert commits.count == before + 1
    _subscribe(uow, "vnflcm")
    with uow() as u:  # one commit, however many rows
        assert u.outbox.add(_note(4), owner="a", if_subscribed=True)
        assert u.outbox.add(_note(5), owner="a", if_subscribed=True)
        u.commit()
    assert commits.count == before + 2
    with uow() as u:
        u.outbox.add(_note(6), owner="a")
        u.rollback()
        u.commit()  # nothing left of the rolled-back row to tell
    assert commits.count == before + 2 and _count(uow) == 3
