"""Watch leases (adapters/db/alarms.py) on SQLite and PostgreSQL: two watchers split the fleet
with no instance held by both, and a dead watcher's instances are taken over once they expire."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from vnfm.adapters.db.uow import SqlAlchemyUnitOfWork
from vnfm.domain.model import InstantiationState, VnfInstance, utcnow
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service.fm.alarms import AlarmService
from vnfm.service.fm.health import VnfcHealth
from vnfm.service.fm.watcher import HealthWatcher, WatchSettings

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


class _Recorder:
    """Stands in for HealthCheck: same call, records who checked what (every VNFC healthy)."""

    def __init__(self, seen: list[tuple[str, str]], owner: str) -> None:
        self.seen, self.owner = seen, owner

    async def check(self, inst: Any, cluster_vim: Any, vim: Any = None) -> dict[str, VnfcHealth]:
        self.seen.append((self.owner, inst.id))
        return {v.id: VnfcHealth(None, "worker") for v in inst.resources.vnfcs}


async def test_two_watchers_never_check_one_instance_in_the_same_round(
        uow: Callable[[], SqlAlchemyUnitOfWork]) -> None:
    with uow() as u:
        for iid in IDS:
            u.instances.add(VnfInstance(id=iid, instantiation_state=InstantiationState.INSTANTIATED, vim_id="vim",
                                        flavour_id="simple",
                                        resources=VnfResources([Vnfc(f"{iid}-c", "workerNode", f"{iid}-s")])))
        u.commit()
    seen: list[tuple[str, str]] = []
    alarms = AlarmService(uow)
    watchers = [HealthWatcher(uow, alarms, _Recorder(seen, o), o, list, WatchSettings(interval=10))  # type: ignore[arg-type]
                for o in ("a", "b")]
    for _ in range(3):  # the second announces itself, the first gives back what is over its share
        for w in watchers:
            await w.run_round()
    seen.clear()
    for _ in range(2):
        for w in watchers:
            await w.run_round()
    by_owner = {o: [i for who, i in seen if who == o] for o in ("a", "b")}
    assert sorted(by_owner["a"] + by_owner["b"]) == sorted(IDS * 2)  # every instance, twice (two rounds)
    assert not set(by_owner["a"]) & set(by_owner["b"]) and len(set(by_owner["a"])) == 5
    await watchers[0].stop()  # a stops: gives its leases back at once, b takes them next round
    seen.clear()
    await watchers[1].run_round()
    assert sorted(i for _, i in seen) == IDS
