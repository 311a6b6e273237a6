"""Contention between units of work in parallel threads (each with its own connection, as separate
processes would have)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork
from vnfm.domain.model import OpState

Uow = Callable[[], SqlAlchemyUnitOfWork]
R = TypeVar("R")
N = 8


def _race(n: int, fn: Callable[[int], R]) -> list[R]:
    """Run fn(0..n-1) in n threads released together by a barrier."""
    barrier = threading.Barrier(n, timeout=30)

    def run(i: int) -> R:
        barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def test_taking_the_lock_contention_exactly_one_wins(uow: Uow) -> None:
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()

    def attempt(i: int) -> bool:
        with uow() as u:
            won = f.take_lock(u, inst.id, f"op-{i}")
            u.commit()
            return won

    results = _race(N, attempt)
    assert results.count(True) == 1, results
    winner = f"op-{results.index(True)}"
    with uow() as u:
        assert u.instances.locked_by(inst.id) == winner
        assert u.instances.get(inst.id).lock_op_id == winner


def test_taking_the_lock_many_rounds_with_unlock(uow: Uow) -> None:
    """Lock, unlock, lock again under contention: never two holders at once."""
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    holders: list[str] = []
    guard = threading.Lock()
    inside = {"n": 0, "max": 0}

    def worker(i: int) -> int:
        wins = 0
        for r in range(5):
            op = f"op-{i}-{r}"
            with uow() as u:
                won = f.take_lock(u, inst.id, op)
                u.commit()
            if not won:
                continue
            wins += 1
            with guard:
                inside["n"] += 1
                inside["max"] = max(inside["max"], inside["n"])
                holders.append(op)
            with guard:
                inside["n"] -= 1
            with uow() as u:
                u.instances.unlock(inst.id, op)
                u.commit()
        return wins

    total = sum(_race(4, worker))
    assert total == len(holders) >= 1
    assert inside["max"] == 1
    with uow() as u:
        assert u.instances.locked_by(inst.id) is None


def test_concurrent_claim_orphans_never_claims_twice(uow: Uow) -> None:
    orphans = [f.op_occ(f"inst-{i}", operation_state=OpState.PROCESSING, owner="dead",
                        heartbeat=f.T0 - timedelta(minutes=5), start_time=f.T0 + timedelta(seconds=i))
               for i in range(20)]
    with uow() as u:
        for o in orphans:
            u.op_occs.add(o)
        u.commit()
    stale_before = f.T0 - timedelta(minutes=1)

    def claim(i: int) -> list[str]:
        with uow() as u:
            got = u.op_occs.claim_orphans(f"worker-{i}", stale_before, now=f.T0)
            u.commit()
            return [o.id for o in got]

    results = _race(4, claim)
    all_claimed = [op_id for r in results for op_id in r]
    assert sorted(all_claimed) == sorted(o.id for o in orphans)  # each exactly once
    with uow() as u:
        for i, ids in enumerate(results):
            for op_id in ids:
                assert u.op_occs.get(op_id).owner == f"worker-{i}"


def test_fenced_save_refused_after_a_takeover(uow: Uow) -> None:
    """12.2: a runner's write requires the owner and epoch it started with; a claim bumps the epoch."""
    occ = f.op_occ(operation_state=OpState.PROCESSING, owner="paused", heartbeat=f.T0 - timedelta(minutes=5))
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    with uow() as u:
        (claimed,) = u.op_occs.claim_orphans("other", f.T0 - timedelta(seconds=30), now=f.T0)
        u.commit()
    assert (claimed.owner, claimed.epoch) == ("other", occ.epoch + 1)
    stale = f.op_occ(id=occ.id, operation_state=OpState.COMPLETED, owner="paused")
    with uow() as u:
        assert not u.op_occs.save_owned(stale, "paused", occ.epoch)  # the paused owner's write
        assert not u.op_occs.save_owned(stale, "other", occ.epoch)  # right owner, old epoch
        u.commit()
    with uow() as u:
        got = u.op_occs.get(occ.id)
        assert got is not None and got.operation_state == OpState.PROCESSING and got.owner == "other"
        claimed.operation_state = OpState.FAILED_TEMP
        assert u.op_occs.save_owned(claimed, "other", claimed.epoch)  # the new owner's write
        u.commit()
    with uow() as u:
        got = u.op_occs.get(occ.id)
        assert got is not None and got.operation_state == OpState.FAILED_TEMP and got.epoch == claimed.epoch
