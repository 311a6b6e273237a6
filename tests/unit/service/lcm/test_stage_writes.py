"""How many writes a stage costs (issue 24 item 4), and what each carries: a stage writes its start
(a hook stage's with the hook's progress line, before the driver runs); its end (the driver's
state, the instance) rides on the next write, whatever it is; a failed or cancelled driver's
state is still written; a hook with no driver bound writes nothing of its own; the move to
PROCESSING and its notification ride on the next write; progress lines wait at most
`PROGRESS_FLUSH_S` for a checkpoint to carry them before a flush of their own writes them."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any, cast

import pytest

from vnfm.domain.model import OpState, VnfInstance
from vnfm.service.lcm import job as jobmod
from vnfm.service.lcm.job import PROGRESS_FLUSH_S, Job, JobStore, load_job
from vnfm.service.lcm.stages import Stages
from vnfm.service.notifications import Notifications
from vnfm.service.ports import LcmContext, UowFactory

from .test_job_writes import FakeInstances, FakeUow, SlowDb, _job


class Db(SlowDb):
    """The stand-in database, also keeping every instance written."""

    def __init__(self) -> None:
        super().__init__("me", 3)
        self.instances: list[VnfInstance] = []
        self.fail_next = False  # the next write fails before anything is staged


def _broken(*args: Any) -> bool:
    raise RuntimeError("the disk is full")


class RecordingInstances(FakeInstances):
    def __init__(self, db: Db) -> None:
        self.db = db

    def save(self, inst: VnfInstance) -> None:
        self.db.instances.append(jobmod.snapshot(inst))

    def save_changes(self, inst: VnfInstance, since: VnfInstance) -> None:
        super().save_changes(inst, since)
        self.db.instances.append(jobmod.snapshot(inst))


class Driver:
    """A management driver that records what the database held when it was called."""

    name = "rec"
    declared = None

    def __init__(self, db: Db, fail: BaseException | None = None, block: asyncio.Event | None = None) -> None:
        self.db, self.fail, self.block = db, fail, block
        self.seen_events: list[str] = []
        self.started = asyncio.Event()

    async def handle(self, hook: str, ctx: LcmContext) -> None:
        self.seen_events = [e["message"] for e in self.db.committed[-1].events]
        ctx.state["touched"] = hook
        self.started.set()
        if self.block is not None:
            await self.block.wait()
        if self.fail is not None:
            raise self.fail


class Outbox:
    def __init__(self) -> None:
        self.staged: list[dict[str, Any]] = []

    def add(self, notification: dict[str, Any], info: Any, *, owner: Any, tenant: str,
            if_subscribed: bool = False) -> bool:
        self.staged.append(notification)
        return True


class Notifier:
    def wake(self) -> None:
        pass


class Mgmt:
    def __init__(self, driver: Driver | None) -> None:
        self.driver = driver

    def for_hook(self, flavour: Any, hook: str) -> Driver | None:
        return self.driver


def _setup(driver_of: Any = None, outbox: Outbox | None = None) -> tuple[Db, JobStore, Stages, Job]:
    db = Db()

    def uow() -> FakeUow:
        u = FakeUow(db)
        u.instances = RecordingInstances(db)
        u.outbox = outbox  # type: ignore[attr-defined]
        if db.fail_next:
            db.fail_next = False
            u.save_owned = _broken  # type: ignore[method-assign]
        return u

    store = JobStore(cast(UowFactory, uow), Notifications(Notifier() if outbox is not None else None, "me"))
    driver = driver_of(db) if driver_of is not None else None
    stages = Stages(store, mgmt=Mgmt(driver))
    job = _job()
    job.flavour = cast(Any, object())
    job.plan["done"], job.plan["rb_done"] = [], []
    return db, store, stages, job


async def _first_write(store: JobStore, job: Job) -> int:
    await store.persist(job)  # the runner's first (whole) write, as `set_state(PROCESSING)` makes it
    return 1


async def test_a_hook_stage_writes_its_start_with_the_line_and_its_end_with_the_next_write() -> None:
    db, store, stages, job = _setup(Driver)
    before = await _first_write(store, job)
    driver = cast(Driver, stages.mgmt.driver)
    await stages.stage(job, "instantiate_end", lambda: stages.hook(job, "instantiate_end"))
    assert len(db.committed) - before == 1 and job.writer.owed
    assert driver.seen_events == ["instantiate_end: management driver 'rec'"]  # in the database first
    start = db.committed[-1]
    assert start.plan["current"] == "instantiate_end" and "instantiate_end" not in start.plan["done"]
    assert not any("rec" in i.driver_state for i in db.instances)
    await store.persist(job, instance=False)  # any next write (here: one without the instance) carries it
    assert db.committed[-1].plan["done"] == ["instantiate_end"] and not job.writer.owed
    assert db.instances[-1].driver_state["rec"] == {"touched": "instantiate_end"}


async def test_an_end_owed_rides_on_a_progress_flush_too() -> None:
    db, store, stages, job = _setup()
    before = await _first_write(store, job)

    async def deploy() -> None:
        job.inst.resources = job.inst.resources.__class__()
        job.inst.vnf_instance_name = "deployed"

    await stages.stage(job, "infra_deploy", deploy)
    assert len(db.committed) - before == 1
    store.progress(job, "after the stage")
    await store.flushed(job)
    assert db.committed[-1].plan["done"] == ["infra_deploy"]
    assert db.instances[-1].vnf_instance_name == "deployed"


async def test_the_move_to_processing_and_its_notification_ride_on_the_next_write() -> None:
    outbox = Outbox()
    db, store, stages, job = _setup(outbox=outbox)
    job.occ.operation_state = OpState.STARTING
    await store.set_state(job, OpState.PROCESSING, owe=True)
    assert db.committed == [] and outbox.staged == []
    db.fail_next = True  # the next write fails: what it carried is carried by the one after it
    with pytest.raises(RuntimeError):
        await store.persist(job, instance=False)
    assert db.committed == [] and outbox.staged == [] and job.writer.owed
    await store.set_state(job, OpState.COMPLETED)
    assert db.committed[-1].operation_state == OpState.COMPLETED
    states = [(n["operationState"], n["notificationStatus"]) for n in outbox.staged]
    assert states == [("PROCESSING", "START"), ("COMPLETED", "RESULT")]


@pytest.mark.parametrize("failure", [RuntimeError("boom"), asyncio.CancelledError()])
async def test_a_failed_or_cancelled_hook_still_writes_the_drivers_state(failure: BaseException) -> None:
    db, store, stages, job = _setup(lambda d: Driver(d, fail=failure))
    await _first_write(store, job)
    with pytest.raises(type(failure)):
        await stages.stage(job, "scale_end", lambda: stages.hook(job, "scale_end"))
    assert db.instances[-1].driver_state["rec"] == {"touched": "scale_end"}
    assert "scale_end" not in db.committed[-1].plan["done"]


async def test_a_hook_awaited_on_its_own_writes_its_line_first_and_its_state_after() -> None:
    db, store, stages, job = _setup(Driver)
    before = await _first_write(store, job)
    await stages.hook(job, "heal_end")
    assert cast(Driver, stages.mgmt.driver).seen_events == ["heal_end: management driver 'rec'"]
    assert len(db.committed) - before == 2
    assert db.instances[-1].driver_state["rec"] == {"touched": "heal_end"}


async def test_a_hook_stage_with_no_driver_writes_nothing_and_is_recorded_by_the_next_write() -> None:
    db, store, stages, job = _setup()
    before = await _first_write(store, job)
    await stages.stage(job, "instantiate_start", lambda: stages.hook(job, "instantiate_start"))
    await stages.rollback_stage(job, "terminate_end", lambda: stages.hook(job, "terminate_end"))
    assert len(db.committed) == before
    ran = asyncio.Event()

    async def deploy() -> None:
        ran.set()

    await stages.stage(job, "infra_deploy", deploy)
    assert ran.is_set() and len(db.committed) - before == 1
    start = db.committed[before]
    assert start.plan["current"] == "infra_deploy" and start.plan["done"] == ["instantiate_start"]
    assert start.plan["rb_done"] == ["terminate_end"]


async def test_a_cancel_already_known_stops_a_hook_stage_before_its_line() -> None:
    db, store, stages, job = _setup(Driver)
    await _first_write(store, job)
    job.occ.is_cancel_pending, job.occ.cancel_mode = True, "GRACEFUL"
    with pytest.raises(Exception, match="cancelled"):
        await stages.stage(job, "scale_end", lambda: stages.hook(job, "scale_end"))
    assert job.occ.events == [] and not cast(Driver, stages.mgmt.driver).started.is_set()


async def test_a_progress_line_reaches_the_database_within_the_interval_without_a_checkpoint() -> None:
    db, store, stages, job = _setup()
    before = await _first_write(store, job)
    t0 = time.monotonic()
    for n in range(5):
        store.progress(job, f"line {n}")
    assert len(db.committed) == before  # not at once: a checkpoint may carry them
    while len(db.committed) == before:
        assert time.monotonic() - t0 < PROGRESS_FLUSH_S + 2, "never written"
        await asyncio.sleep(0.01)
    assert time.monotonic() - t0 >= PROGRESS_FLUSH_S * 0.9
    assert len(db.committed) - before == 1  # the five together
    assert [e["message"] for e in db.committed[-1].events] == [f"line {n}" for n in range(5)]


async def test_a_checkpoint_carries_the_waiting_lines_and_no_flush_follows() -> None:
    db, store, stages, job = _setup()
    before = await _first_write(store, job)
    store.progress(job, "deploying")
    await store.persist(job)
    assert [e["message"] for e in db.committed[-1].events] == ["deploying"]
    await asyncio.sleep(PROGRESS_FLUSH_S * 2)
    assert len(db.committed) - before == 1 and job.writer.timer is None


async def test_flushed_writes_at_once() -> None:
    db, store, stages, job = _setup()
    before = await _first_write(store, job)
    store.progress(job, "now")
    t0 = time.monotonic()
    await store.flushed(job)
    assert time.monotonic() - t0 < PROGRESS_FLUSH_S
    assert len(db.committed) - before == 1 and job.writer.timer is None


class _NoFlavours:
    def flavour(self, flavour_id: str) -> None:
        return None


async def test_the_first_write_after_the_load_sends_only_changes_and_keeps_a_cancel_recorded_since() -> None:
    db = Db()
    row = _job()
    db.committed.append(copy.deepcopy(row.occ))  # the stored occurrence, as the API left it
    reads: list[str] = []

    class LoadingUow(FakeUow):
        def get(self, op_id: str) -> Any:
            return copy.deepcopy(row.occ)

        def pending_cancel(self, op_id: str) -> str | None:
            reads.append(op_id)
            return super().pending_cancel(op_id)

    class LoadingInstances(RecordingInstances):
        def get(self, inst_id: str) -> Any:
            return copy.deepcopy(row.inst)

    def uow() -> FakeUow:
        u = LoadingUow(db)
        u.instances = LoadingInstances(db)
        return u

    store = JobStore(cast(UowFactory, uow), Notifications(None, None))
    job = load_job(cast(UowFactory, uow), row.occ.id, vnfd_of=lambda _: cast(Any, _NoFlavours()),
                   files_of=lambda _: None, vim_of=lambda _: None, infra_drivers={})
    db.cancel = "GRACEFUL"  # recorded by the API after the load
    job.plan["current"] = "infra_deploy"
    await store.persist(job, instance=False)
    assert reads == []  # no read before the write: the UPDATE returned the cancel
    assert job.occ.is_cancel_pending and job.occ.cancel_mode == "GRACEFUL"
    assert db.committed[-1].plan["current"] == "infra_deploy" and db.committed[-1].is_cancel_pending
