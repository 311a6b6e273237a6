"""`JobStore` writes in worker threads (issue 17): the event loop goes on while a write is slow,
writes of one occurrence never overlap or reorder, progress lines that arrive during a write are
coalesced into the next one (every line, in order), and a refused write leaves the job as it was."""

from __future__ import annotations

import asyncio
import copy
import threading
from dataclasses import fields
from typing import Any, cast

import pytest

from tests.unit.db import factories as f
from vnfm.domain.lcm import CANCELLABLE
from vnfm.domain.model import OpOcc, OpState, VnfInstance
from vnfm.service.lcm.job import Job, JobStore, OwnershipLost
from vnfm.service.notifications import Notifications
from vnfm.service.ports import UowFactory

from ..conftest import until

GATE_TIMEOUT = 5.0


class SlowDb:
    """A stand-in database whose commits wait for `gate` (a slow disk or a locked row). It records
    each committed occurrence and whether two writes ever overlapped."""

    def __init__(self, owner: str, epoch: int) -> None:
        self.fence = (owner, epoch)
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()  # a commit is waiting at the gate
        self.committed: list[OpOcc] = []
        self.cancel: str | None = None
        self.active = 0
        self.overlapped = False
        self.loop_thread = threading.get_ident()
        self.on_loop = False


class FakeInstances:
    def save(self, inst: VnfInstance) -> None:
        pass

    def save_changes(self, inst: VnfInstance, since: VnfInstance) -> None:
        """As the repository: the changes of one instance since an earlier state of it."""
        if inst.id != since.id:
            raise ValueError(f"VNF instance {inst.id} saved as changes since instance {since.id}")


class FakeUow:
    def __init__(self, db: SlowDb) -> None:
        self.db = db
        self.op_occs = self
        self.instances = FakeInstances()
        self.pending: OpOcc | None = None

    def __enter__(self) -> FakeUow:
        return self

    def __exit__(self, *args: object) -> None:
        self.pending = None

    # op_occs
    def pending_cancel(self, op_id: str) -> str | None:
        return self.db.cancel if self.db.committed else None

    def save_owned(self, occ: OpOcc, owner: str | None, epoch: int) -> bool:
        if (owner, epoch) != self.db.fence:
            return False
        self.pending = copy.deepcopy(occ)
        return True

    def save_changes(self, occ: OpOcc, since: OpOcc, owner: str | None, epoch: int) -> tuple[bool, str | None]:
        """As the repository: the stored row with only what differs from `since` applied, the
        row's cancel kept while `occ` is cancellable and neither cancels; the first write of a
        runner must be whole (there is no `since` before it)."""
        if (owner, epoch) != self.db.fence:
            return False, None
        assert self.db.committed, "a partial write before any whole one"
        row = copy.deepcopy(self.db.committed[-1])
        for name in (fl.name for fl in fields(OpOcc)):
            if getattr(occ, name) != getattr(since, name):
                setattr(row, name, copy.deepcopy(getattr(occ, name)))
        if occ.operation_state in CANCELLABLE and not occ.is_cancel_pending and not since.is_cancel_pending:
            if self.db.cancel is not None:
                row.is_cancel_pending, row.cancel_mode = True, self.db.cancel
        else:
            row.is_cancel_pending, row.cancel_mode = occ.is_cancel_pending, occ.cancel_mode
        self.pending = row
        return True, row.cancel_mode if row.is_cancel_pending else None


    def commit(self) -> None:
        db = self.db
        db.on_loop = db.on_loop or threading.get_ident() == db.loop_thread
        db.active += 1
        db.overlapped = db.overlapped or db.active > 1
        try:
            db.entered.set()
            if not db.gate.wait(GATE_TIMEOUT):
                raise AssertionError("the gate never opened: the write blocked the event loop")
            assert self.pending is not None
            db.committed.append(self.pending)
        finally:
            db.active -= 1


def _job() -> Job:
    inst = f.instance()
    occ = f.op_occ(inst.id, operation_state=OpState.PROCESSING, owner="me", epoch=3, events=[],
                   is_cancel_pending=False, cancel_mode=None, plan={})
    return Job(occ=occ, inst=inst, vnfd=cast(Any, None), flavour=None, package=None, vim=None, infra=None,
               fence=("me", 3))


def _store(db: SlowDb) -> JobStore:
    return JobStore(cast(UowFactory, lambda: FakeUow(db)), Notifications(None, None))


async def _until(cond: Any) -> None:
    await until(cond, GATE_TIMEOUT * 2, step=0.005)


async def test_the_loop_goes_on_while_a_write_is_slow() -> None:
    db = SlowDb("me", 3)
    store, job = _store(db), _job()
    db.gate.clear()
    write = asyncio.create_task(store.persist(job))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(ticker())
    await _until(db.entered.is_set)
    seen = ticks
    await _until(lambda: ticks > seen + 100)  # another coroutine progresses while the write waits
    assert not write.done() and not db.committed
    db.gate.set()
    await write
    other.cancel()
    assert not db.on_loop, "the commit ran on the event loop thread"
    assert [o.id for o in db.committed] == [job.occ.id]


async def test_progress_during_a_write_is_coalesced_into_the_next_one_in_order() -> None:
    db = SlowDb("me", 3)
    store, job = _store(db), _job()
    db.gate.clear()
    store.progress(job, "line 0")
    await _until(db.entered.is_set)  # the first line's write is in flight
    for n in range(1, 6):
        store.progress(job, f"line {n}")
    checkpoint = asyncio.create_task(store.persist(job, instance=False))
    db.gate.set()
    await checkpoint
    await store.flushed(job)
    assert not db.overlapped
    written = [[e["message"] for e in o.events] for o in db.committed]
    assert written[0] == ["line 0"]
    assert written[-1] == [f"line {n}" for n in range(6)]
    assert len(db.committed) <= 3  # lines 1-5 went together, not one commit each
    for earlier, later in zip(written, written[1:], strict=False):  # never reordered
        assert later[:len(earlier)] == earlier


async def test_a_cancel_read_by_the_write_reaches_the_job_and_a_refused_write_changes_nothing() -> None:
    db = SlowDb("me", 3)
    store, job = _store(db), _job()
    await store.persist(job)
    db.cancel = "GRACEFUL"
    await store.persist(job)
    assert job.occ.is_cancel_pending and job.occ.cancel_mode == "GRACEFUL"

    db.fence = ("other", 4)  # taken over
    before = copy.deepcopy(job.occ)
    with pytest.raises(OwnershipLost):
        await store.persist(job)
    assert job.occ.events == before.events and job.occ.plan == before.plan
    store.progress(job, "after the takeover")
    await store.flushed(job)
    with pytest.raises(OwnershipLost):  # once lost, every later checkpoint is refused
        await store.persist(job)
    assert len(db.committed) == 2
