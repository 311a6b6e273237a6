"""Fencing (issue 12.2): a runner that was paused longer than the takeover time and lost its
occurrence to another process writes nothing when it resumes; the state stays the new owner's."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import timedelta
from typing import Any

from vnfm.domain.model import OpOcc, OpState, utcnow
from vnfm.service.lcm.job import JobWriter, OwnershipLost
from vnfm.service.lcm.scheduler import LcmEngine
from vnfm.service.ports import LcmContext

from ..conftest import Harness
from ..conftest import until as _until


def _pause_in_hook(h: Harness, hook: str) -> tuple[asyncio.Event, asyncio.Event]:
    """Make the management driver stop in `hook` until released (the 'paused' process)."""
    entered, release = asyncio.Event(), asyncio.Event()
    original = h.rec.handle

    async def handle(name: str, ctx: LcmContext) -> None:
        await original(name, ctx)
        if name == hook and not entered.is_set():  # only the first call pauses
            entered.set()
            await release.wait()

    h.rec.handle = handle  # type: ignore[method-assign]
    return entered, release


def _stop_heartbeat(engine: LcmEngine) -> None:
    engine.heartbeat.stop()  # the paused process neither heart-beats nor polls
    for task in engine._bg:
        task.cancel()


async def _scale_out_paused(h: Harness) -> tuple[str, OpOcc, LcmEngine, asyncio.Event]:
    """An instance whose SCALE_OUT is held in scale_end by a process that no longer heart-beats:
    (instance id, occurrence, that process's engine, the event that lets it go on)."""
    inst_id = await h.instantiated()
    entered, release = _pause_in_hook(h, "scale_end")
    paused = h.app.engine
    occ = h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    await asyncio.wait_for(entered.wait(), 10)
    _stop_heartbeat(paused)
    return inst_id, occ, paused, release


async def _take_over(h: Harness, paused: LcmEngine, op_id: str) -> LcmEngine:
    with paused.uow() as uow:  # its last heartbeat ages past orphan_after (set back, not waited for)
        assert uow.op_occs.heartbeat(op_id, paused.worker_id, utcnow() - timedelta(seconds=60))
        uow.commit()
    other = LcmEngine(paused.uow, vnfd_of=paused.vnfd_of, files_of=paused.files_of,
                      infra_drivers=paused.infra_drivers, vim_of=paused.vim_of, mgmt=paused.mgmt,
                      liveness=paused.liveness,
                      worker_id="other", orphan_after=30)
    await other.recover()
    return other


async def test_paused_owner_taken_over_writes_nothing_when_it_resumes(h: Harness) -> None:
    app = h.app
    inst_id, occ, paused, release = await _scale_out_paused(h)
    await _take_over(h, paused, occ.id)
    taken = app.instances.op_get(occ.id)
    assert taken.operation_state == OpState.FAILED_TEMP
    assert taken.owner is None and taken.epoch == occ.epoch + 1
    inst_taken = app.instances.get(inst_id)

    release.set()  # the paused process resumes: its next write (the hook's checkpoint) is refused
    await _until(lambda: occ.id not in paused.running)
    after = app.instances.op_get(occ.id)
    assert after.operation_state == OpState.FAILED_TEMP, "the stale owner overwrote the new state"
    assert after.error == taken.error and after.owner is None and after.epoch == taken.epoch
    assert after.plan == taken.plan and after.events == taken.events
    inst = app.instances.get(inst_id)
    assert inst.scale_levels == inst_taken.scale_levels
    assert inst.resources.to_dict() == inst_taken.resources.to_dict()
    assert inst.lock_op_id == occ.id  # still held for the FAILED_TEMP occurrence


async def test_a_retry_fences_off_the_runner_of_the_earlier_attempt(h: Harness) -> None:
    app = h.app
    inst_id, occ, paused, release = await _scale_out_paused(h)
    other = await _take_over(h, paused, occ.id)
    await other.start()
    try:
        app.instances.submit = lambda op_id, rb: other.submit(op_id, rollback=rb)
        app.engine = other
        done = await h.wait(app.instances.retry(occ.id))  # completes on the other process
        assert done.operation_state == OpState.COMPLETED, done.error
        level = app.instances.get(inst_id).scale_levels["worker_instance"]
        release.set()
        await _until(lambda: occ.id not in paused.running)
        final = app.instances.op_get(occ.id)
        assert final.operation_state == OpState.COMPLETED and final.events == done.events
        assert app.instances.get(inst_id).scale_levels["worker_instance"] == level
        assert app.instances.get(inst_id).lock_op_id is None
    finally:
        app.engine = paused
        await other.stop()


async def test_the_heartbeat_stops_a_runner_that_lost_its_occurrence(h: Harness) -> None:
    app = h.app
    inst_id, occ, paused, release = await _scale_out_paused(h)
    await _take_over(h, paused, occ.id)
    taken = app.instances.op_get(occ.id)
    # its next heartbeat finds the occurrence owned by another: the runner is stopped
    paused._stop_lost(paused._beat(list(paused.running)))
    await _until(lambda: occ.id not in paused.running)
    assert not release.is_set()  # stopped while still inside the hook, not at its next write
    after = app.instances.op_get(occ.id)
    assert (after.operation_state, after.events, after.epoch) == (taken.operation_state, taken.events, taken.epoch)


async def test_a_resumed_process_does_not_take_its_own_running_occurrence_over(h: Harness) -> None:
    """After its own pause, a process's recovery scan sees its running occurrence's heartbeat
    stale: it heart-beats it first instead of claiming it (which would fence its own runner)."""
    app = h.app
    inst_id = await h.instantiated()
    entered, release = _pause_in_hook(h, "scale_end")
    engine = app.engine
    occ = app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    await asyncio.wait_for(entered.wait(), 10)
    with engine.uow() as uow:  # the whole process was paused: its heartbeat is stale
        assert uow.op_occs.heartbeat(occ.id, engine.worker_id, utcnow() - timedelta(seconds=60))
        uow.commit()
    assert await engine.recover() == []
    release.set()
    done = await h.wait(occ)
    assert done.operation_state == OpState.COMPLETED, done.error


async def test_a_resumed_zombie_stops_before_its_next_side_effect(h: Harness) -> None:
    """Fencing to the edge: after a takeover, the paused runner's next cloud call and node step
    are refused before they reach the driver (not only its next database write)."""
    inst_id = await h.instantiated()
    entered, release = asyncio.Event(), asyncio.Event()
    outcomes: list[str] = []
    reached: list[str] = []
    original = h.rec.handle

    async def handle(name: str, ctx: LcmContext) -> None:
        await original(name, ctx)
        if name != "scale_end" or entered.is_set():
            return
        entered.set()
        await release.wait()  # paused here; meanwhile another process takes the occurrence over
        assert ctx.infra is not None and ctx.infra_ctx is not None and ctx.nodes is not None
        for what, call in (("infra", lambda: ctx.infra.release_address(ctx.infra_ctx, "zombie")),
                           ("node", lambda: ctx.nodes.session(ctx.instance.id, [], {}).run("vnfc", object()))):
            try:
                await call()
                outcomes.append(f"{what}: acted")
            except OwnershipLost:
                outcomes.append(f"{what}: refused")
        raise OwnershipLost("stop")

    h.rec.handle = handle  # type: ignore[method-assign]
    paused = h.app.engine
    inner = paused.infra_drivers["simulator"]
    real_release = inner.release_address

    async def spy(ctx: Any, purpose: str) -> None:
        reached.append(purpose)
        await real_release(ctx, purpose)

    inner.release_address = spy  # type: ignore[method-assign]
    occ = h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    await asyncio.wait_for(entered.wait(), 10)
    _stop_heartbeat(paused)
    # The pause lasts longer than a beat interval (a takeover needs six): the runner's last
    # ownership check is no longer fresh when it resumes.
    await asyncio.sleep(paused.heartbeat.stats.interval)
    await _take_over(h, paused, occ.id)
    release.set()
    await _until(lambda: occ.id not in paused.running)
    assert outcomes == ["infra: refused", "node: refused"] and reached == []


async def test_heartbeats_go_on_while_the_event_loop_is_blocked(h: Harness) -> None:
    """The heartbeat has a thread of its own: a loop blocked past the takeover time (0.5 s here)
    does not let the running occurrence go stale."""
    inst_id = await h.instantiated()
    entered, release = _pause_in_hook(h, "scale_end")
    engine = h.app.engine
    occ = h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    await asyncio.wait_for(entered.wait(), 10)
    before = h.app.instances.op_get(occ.id).heartbeat
    time.sleep(1.5)  # noqa: ASYNC251 - the point: the event loop is blocked
    after = h.app.instances.op_get(occ.id).heartbeat
    assert before is not None and after is not None and (after - before).total_seconds() >= 1.0
    stats = engine.heartbeat.stats
    assert stats.beats >= 5 and stats.max_lag < 0.5, stats
    release.set()
    assert (await h.wait(occ)).operation_state == OpState.COMPLETED


async def test_a_process_that_lost_an_occurrence_can_run_its_retry(h: Harness) -> None:
    """The memory of a lost occurrence ends with its runner: a retry run by the same process is
    not refused (it has the new epoch)."""
    app = h.app
    inst_id, occ, paused, release = await _scale_out_paused(h)
    await _take_over(h, paused, occ.id)
    paused._stop_lost(paused._beat(list(paused.running)))
    await _until(lambda: occ.id not in paused.running)
    release.set()
    paused.heartbeat.start()
    done = await h.wait(app.instances.retry(occ.id))  # submitted to the same process
    assert done.operation_state == OpState.COMPLETED, done.error
    assert app.instances.get(inst_id).lock_op_id is None


def _lost_fence(fresh_for: float) -> tuple[Any, Any, list[str]]:
    """A fence over a liveness that finds the occurrence lost, its job, and the reads it made."""
    from types import SimpleNamespace

    from vnfm.service.lcm.fence import Fence

    reads: list[str] = []

    class Lost:
        def owns(self, op_id: str, owner: str | None, epoch: int) -> bool:
            reads.append(op_id)
            return False

    job = SimpleNamespace(fence=("me", 0), occ=SimpleNamespace(id="op-1"), writer=JobWriter())
    return Fence(Lost(), job, fresh_for=fresh_for), job, reads  # type: ignore[arg-type]


def test_a_fenced_runner_reports_no_further_progress_and_reads_ownership_once() -> None:
    """A resumed zombie's drivers report progress from several tasks at once (the simulator one
    line per server): each line is checked before it is reported, so none of them is logged as a
    step of a runner that lost its occurrence (the pause campaign counted 4 such lines), and a
    refusal is remembered (one read, not one per line)."""
    fence, _, reads = _lost_fence(0.05)
    reported: list[str] = []
    report = fence.checked_progress(reported.append)
    for line in ("server a ACTIVE", "server b ACTIVE", "server c ACTIVE"):
        with contextlib.suppress(OwnershipLost):
            report(line)
    assert reported == [] and reads == ["op-1"]


def test_a_job_write_that_succeeded_stands_for_a_fencing_read_while_fresh() -> None:
    """A fenced job write found the occurrence owned when it was sent: a side effect within
    `fresh_for` of it reads nothing; past that (a pause), the check reads again and a lost
    occurrence is refused."""
    fence, job, reads = _lost_fence(30.0)
    job.writer.owned_at = time.monotonic()  # as `JobStore._write_job` records a write that succeeded
    fence.check_sync()
    asyncio.run(fence.check())
    assert reads == []
    job.writer.owned_at = time.monotonic() - 31.0  # the process was paused since that write
    with contextlib.suppress(OwnershipLost):
        fence.check_sync()
    assert reads == ["op-1"]
    try:
        fence.check_sync()
    except OwnershipLost:
        pass
    else:
        raise AssertionError("a lost occurrence was not refused")


async def test_a_running_instantiate_makes_no_fencing_read_of_its_own(h: Harness) -> None:
    """Each stage's start write is fenced: the side effects after it (within half a beat
    interval) need no read of their own."""
    calls: list[str] = []
    owns = h.app.engine.liveness.owns

    def counted(op_id: str, owner: str | None, epoch: int) -> bool:
        calls.append(op_id)
        return owns(op_id, owner, epoch)

    h.app.engine.liveness.owns = counted  # type: ignore[method-assign]
    await h.instantiated()
    assert calls == []
