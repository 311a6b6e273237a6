"""Watch leases (adapters/db/alarms.py) on SQLite and PostgreSQL: two watchers split the fleet
with no instance held by both, and a dead watcher's instances are taken over once they expire."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from vnfm.adapters.db.uow import SqlAlchemyUnitOfWork
from vnfm.domain.model import utcnow

IDS = [f"inst-{i:02d}" for i in range(10)]


def _take(uow: Callable[[], SqlAlchemyUnitOfWork], owner: str, now: object, ttl: float = 30) -> set[str]:
    with uow() as u:
        got = set(u.leases.acquire(owner, IDS, now, ttl))
        u.commit()
    return got


def test_two_watchers_split_and_a_dead_ones_share_is_taken(uow: Callable[[], SqlAlchemyUnitOfWork]) -> None:
    now = utcnow()
    assert _take(uow, "a", now) == set(IDS)  # alone: everything
    assert _take(uow, "b", now) == set()  # all held by a, not expired
    a = _take(uow, "a", now)  # a sees two watchers: keeps its fair share, gives the rest back
    b = _take(uow, "b", now)
    assert len(a) == len(b) == 5 and not a & b and a | b == set(IDS)
    for _ in range(3):  # stable while both renew
        assert _take(uow, "a", now) == a and _take(uow, "b", now) == b
    later = now + timedelta(seconds=31)  # a died: its leases (and its presence) expired
    assert _take(uow, "b", later) == set(IDS)
    with uow() as u:
        assert u.leases.put_state("inst-00", "b", {"since": {"x": "t"}})
        assert not u.leases.put_state("inst-00", "a", {})  # a lost it: its writes do nothing
        u.commit()
    with uow() as u:
        assert u.leases.state("inst-00") == {"since": {"x": "t"}}
