"""`LcmEngine`, the engine's public face: which occurrences this process runs, and when.

It starts the occurrences it is given (`submit`) or takes over (`recover`: orphans whose owner
stopped heart-beating), heart-beats those it owns (`heartbeat.Heartbeat`, a thread of its own: one
statement per beat for all of them, which also reports FORCEFUL cancels recorded by any process;
GRACEFUL ones are seen at the next stage boundary), and keeps the table of running tasks. Running
one occurrence is loading its job, fencing its side effects (`fence.py`) and handing it to its
operation (`operations/`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import LcmOperation, OpOcc, OpState, Vim, utcnow
from vnfm.domain.vnfd import Vnfd
from vnfm.service.lcm.fence import Fence, fenced
from vnfm.service.lcm.heartbeat import Heartbeat
from vnfm.service.lcm.job import Job, JobStore, OwnershipLost, load_job
from vnfm.service.lcm.operations.change_vnfpkg import change_vnfpkg
from vnfm.service.lcm.operations.heal import heal
from vnfm.service.lcm.operations.instantiate import instantiate
from vnfm.service.lcm.operations.modify_info import modify_info
from vnfm.service.lcm.operations.rollback import finish_rollback, rollback
from vnfm.service.lcm.operations.scale import scale
from vnfm.service.lcm.operations.terminate import terminate
from vnfm.service.lcm.stages import Stages, failure_problem
from vnfm.service.notifications import Notifications
from vnfm.service.ports import (
    AbstractUnitOfWork,
    Beat,
    InfraDriver,
    Liveness,
    NodeAccess,
    Notifier,
    PackageFiles,
    UowFactory,
)
from vnfm.service.telemetry import NoTelemetry, Telemetry

log = logging.getLogger(__name__)
MIN_POLL_S = 0.25  # the orphan claim at most this often (the beat interval when longer)

Operation = Callable[[Stages, Job], Awaitable[None]]
OPERATIONS: dict[LcmOperation, Operation] = {
    LcmOperation.INSTANTIATE: instantiate,
    LcmOperation.SCALE: scale,
    LcmOperation.HEAL: heal,
    LcmOperation.TERMINATE: terminate,
    LcmOperation.MODIFY_INFO: modify_info,
    LcmOperation.CHANGE_VNFPKG: change_vnfpkg,
}


class LcmEngine:
    def __init__(
        self,
        uow: UowFactory,
        *,
        vnfd_of: Callable[[str], Vnfd],
        files_of: Callable[[str], PackageFiles | None],
        infra_drivers: Mapping[str, InfraDriver],
        vim_of: Callable[[str | None], Vim | None],
        mgmt: Any,  # vnfm.adapters.mgmt.registry.MgmtRegistry (duck-typed: for_hook)
        liveness: Liveness,
        notifier: Notifier | None = None,
        vim_registry: Any = None,
        worker_id: str = "engine",
        orphan_after: float = 30.0,
        poll_interval: float | None = None,
        nodes_of: Callable[[Vim], NodeAccess | None] | None = None,
        telemetry: Telemetry | None = None,
        vim_in: Callable[[AbstractUnitOfWork, str | None], Vim | None] | None = None,
    ) -> None:
        self.telemetry: Telemetry = telemetry or NoTelemetry()
        self.uow = uow
        self.vnfd_of = vnfd_of
        self.files_of = files_of
        self.infra_drivers = infra_drivers
        self.vim_of = vim_of
        self.vim_in = vim_in  # `vim_of` in the caller's unit of work (the job's load reads it there)
        self.mgmt = mgmt
        self.notes = Notifications(notifier, worker_id)
        self.vim_registry = vim_registry
        self.worker_id = worker_id
        self.orphan_after = orphan_after
        self.liveness = liveness
        # What this process owns and heart-beats: submitted (not yet started) and running ones.
        self._owned: set[str] = set()
        self._owned_lock = threading.Lock()
        self.heartbeat = Heartbeat(liveness, worker_id, orphan_after, owned=self._owned_ids,
                                   on_beat=self._on_beat)
        # The orphan claim runs every beat interval (a stale row is taken over at most one beat
        # after it went stale), never more often than 4 times a second: its queries are a fixed
        # cost of every process (issue 24 item 4; it was every second whatever the takeover time).
        beat = self.heartbeat.stats.interval
        self.poll_interval = poll_interval if poll_interval is not None else max(MIN_POLL_S, beat)
        self.nodes_of = nodes_of  # the node access of a VIM, for hooks (None: hooks get none)
        self.store = JobStore(uow, self.notes)
        self.stages = Stages(self.store, mgmt=mgmt, vim_registry=vim_registry, nodes_of=nodes_of,
                             telemetry=self.telemetry)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.running: dict[str, asyncio.Task[None]] = {}
        self._bg: list[asyncio.Task[None]] = []
        self._stopping = False
        self._wakeup: asyncio.Event | None = None
        self.on_idle: list[Callable[[], None]] = []
        self._forced: set[str] = set()  # occurrences being cancelled FORCEFUL (their task is cancelled)
        self._lost: set[str] = set()  # occurrences another process took over (their task is cancelled)

    # ================================================================ lifecycle
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._wakeup = asyncio.Event()
        await self.recover()
        self.heartbeat.start()
        self._bg.append(asyncio.create_task(self._poll_loop(), name="lcm-poll"))

    @property
    def is_running(self) -> bool:
        """Started, not stopping, and its heartbeat thread and poll loop alive."""
        return (self.loop is not None and not self._stopping and bool(self._bg)
                and not any(t.done() for t in self._bg) and self.heartbeat.alive)

    async def stop(self) -> None:
        """Stop without finishing running operations: they stay PROCESSING and are recovered later."""
        self._stopping = True
        await asyncio.to_thread(self.heartbeat.stop)
        for t in list(self.running.values()) + self._bg:
            t.cancel()
        for t in list(self.running.values()) + self._bg:
            with contextlib.suppress(BaseException):
                await t
        self._bg.clear()

    async def recover(self) -> list[str]:
        """Take over occurrences whose owner stopped heart-beating: start STARTING ones, and turn
        PROCESSING / ROLLING_BACK ones into FAILED_TEMP (their process died mid-operation)."""
        if self._owned:  # after a pause of this process its own heartbeats are stale: renew them first
            await asyncio.to_thread(self.heartbeat.beat_now)
        stale_before = utcnow() - timedelta(seconds=self.orphan_after)
        claimed = await asyncio.to_thread(self._claim_orphans, stale_before)
        started = []
        for occ in claimed:
            if occ.id in self._owned_ids():
                continue
            fields = {"op": occ.id, "instance": occ.vnf_instance_id, "operation": occ.operation.value,
                      "state": occ.operation_state.value}
            if occ.operation_state == OpState.STARTING:
                log.warning("taking over orphaned operation %s (%s, STARTING): running it here", occ.id,
                            occ.operation.value, extra=fields)
            else:
                log.warning("taking over orphaned operation %s (%s, %s): its process stopped mid-operation, "
                            "it becomes FAILED_TEMP", occ.id, occ.operation.value, occ.operation_state.value,
                            extra=fields)
            if occ.operation_state == OpState.STARTING:
                self._spawn(occ.id, rollback=False)
                started.append(occ.id)
            else:
                with contextlib.suppress(OwnershipLost):  # claimed by yet another process meanwhile
                    await self.store.mark_interrupted(occ.id)
        return started

    def _claim_orphans(self, stale_before: datetime) -> list[OpOcc]:
        """Other processes' orphans (claimed), then this process's own stale occurrences that it
        no longer runs (a runner that ended without recording its end): never those it runs."""
        with self.uow() as uow:
            claimed = uow.op_occs.claim_orphans(self.worker_id, stale_before)
            uow.commit()
            owned = self._owned_ids()
            mine = [o for o in uow.op_occs.abandoned(self.worker_id, stale_before) if o.id not in owned]
        return claimed + mine

    # ================================================================ heartbeat
    def _owned_ids(self) -> list[str]:
        with self._owned_lock:
            return list(self._owned)

    def _own(self, op_id: str) -> None:
        with self._owned_lock:
            self._owned.add(op_id)

    def _disown(self, op_id: str) -> None:
        with self._owned_lock:
            self._owned.discard(op_id)

    def _beat(self, op_ids: list[str]) -> list[str]:
        """Heart-beat `op_ids` now; returns those this process no longer owns (it was paused longer
        than `orphan_after` and another process took them over)."""
        beat = self.liveness.beat(self.worker_id, op_ids, utcnow())
        return [op_id for op_id in op_ids if op_id in beat.taken]

    def _on_beat(self, beat: Beat, op_ids: list[str]) -> None:
        """(heartbeat thread) Stop the runners that lost their occurrence; act on FORCEFUL cancels."""
        lost = [op_id for op_id in op_ids if op_id in beat.taken]
        if (lost or beat.forceful) and self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._after_beat, lost, beat.forceful)

    def _after_beat(self, lost: list[str], forceful: frozenset[str]) -> None:
        self._stop_lost(lost)
        for op_id in forceful:
            self._force(op_id)

    def _stop_lost(self, lost: list[str]) -> None:
        """Stop the runners of occurrences another process took over: they write nothing more."""
        for op_id in lost:
            task = self.running.get(op_id)
            if task is not None and not task.done() and op_id not in self._lost:
                log.warning("op %s: taken over by another process; stopping without writing", op_id[:8])
                self._lost.add(op_id)
                task.cancel()

    async def _poll_loop(self) -> None:
        assert self._wakeup is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), self.poll_interval)
            self._wakeup.clear()
            try:
                await self.recover()
            except Exception:  # keep polling; the database may be briefly unavailable
                log.exception("recovering orphaned operations failed")

    # ================================================================ cancel (SOL003 5.4.17)
    def request_cancel(self, op_id: str, mode: str | None = None) -> None:
        """A cancel was recorded for `op_id` (thread-safe, never blocks): a FORCEFUL one stops its
        task now if this process runs it (`mode` unknown: the next heartbeat tells)."""
        if self.loop is not None and mode == "FORCEFUL":
            self.loop.call_soon_threadsafe(self._force, op_id)
        elif self.loop is not None and mode is None and op_id in self.running:
            threading.Thread(target=self.heartbeat.beat_now, daemon=True).start()

    def _force(self, op_id: str) -> None:
        """FORCEFUL: cancel the running task now. GRACEFUL is seen at the next stage boundary."""
        task = self.running.get(op_id)
        if task is None or op_id in self._forced:
            return
        self._forced.add(op_id)
        task.cancel()

    # ================================================================ submission
    def submit(self, op_id: str, *, rollback: bool = False) -> None:
        """Schedule an occurrence this process has claimed (thread-safe)."""
        if self.loop is None:
            raise RuntimeError("LCM engine is not started")
        self._own(op_id)  # heart-beaten from now on, even before its task starts
        self.loop.call_soon_threadsafe(self._spawn, op_id, rollback)

    def _spawn(self, op_id: str, rollback: bool) -> None:
        if op_id in self.running or self._stopping:
            if self._stopping:
                self._disown(op_id)
            return
        self._own(op_id)
        # a fresh context: the job is no request's, whichever request submitted it (domain.access.CALLER)
        task = asyncio.get_running_loop().create_task(self._run(op_id, rollback), name=f"lcm-{op_id}",
                                                      context=contextvars.Context())
        self.running[op_id] = task

        def _done(_: asyncio.Task[None]) -> None:
            self.running.pop(op_id, None)
            self._disown(op_id)
            self._lost.discard(op_id)  # a later run here (a retry) starts with a clean slate
            self._forced.discard(op_id)
            if not self.running:
                for cb in self.on_idle:
                    cb()

        task.add_done_callback(_done)

    # ================================================================ running one occurrence
    async def _run(self, op_id: str, rollback: bool) -> None:
        try:
            job = await self.store.patience.run(load_job, self.uow, op_id, vnfd_of=self.vnfd_of,
                                                files_of=self.files_of, vim_of=self.vim_of,
                                                infra_drivers=self.infra_drivers, vim_in=self.vim_in)
        except Exception as exc:
            log.exception("cannot load occurrence %s", op_id)
            await self.store.fail_unloadable(op_id, exc)
            return
        fenced(job, Fence(self.liveness, job, lost=lambda: op_id in self._lost,
                          fresh_for=self.heartbeat.stats.interval / 2))
        fields = {"op": job.occ.id, "instance": job.inst.id, "operation": job.occ.operation.value}
        log.info("operation %s %s%s started", job.occ.operation.value, job.occ.id, " rollback" if rollback else "",
                 extra=fields)
        self.telemetry.operation_started(job.occ.operation.value)
        started = time.monotonic()
        try:
            if rollback:
                await self._roll_back(job)
            else:
                await self._forward(job)
            outcome = job.occ.operation_state.value
            log.info("operation %s %s ended %s in %.2fs", job.occ.operation.value, job.occ.id, outcome,
                     time.monotonic() - started, extra={**fields, "outcome": outcome,
                                                       "seconds": round(time.monotonic() - started, 3)})
            self.telemetry.operation_done(job.occ.operation.value, outcome, time.monotonic() - started)
        except OwnershipLost as exc:
            log.warning("op %s stopped: %s", op_id[:8], exc, extra=fields)
        except asyncio.CancelledError:
            if op_id in self._lost:
                self._lost.discard(op_id)
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
                return
            if op_id not in self._forced or self._stopping:
                # Shutting down: leave the occurrence as it is; recovery turns it into FAILED_TEMP.
                raise
            # It stays in `_forced` until the task ends: a heartbeat that still sees the FORCEFUL
            # cancel before FAILED_TEMP is written must not cancel that write too.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            stage = job.current_stage
            problem = OperationFailed(
                "cancelled (FORCEFUL) on request" + (f" during stage '{stage}'" if stage else "")
                + "; retry resumes it, rollback undoes it, fail ends it").problem()
            log.warning("op %s cancelled in %s", job.occ.id, stage, extra={**fields, "stage": stage})
            await self._failed_temp(job, problem, time.monotonic() - started)
        except Exception as exc:
            problem = failure_problem(job, exc)
            log.warning("op %s failed in %s: %s", job.occ.id, job.current_stage, problem["detail"],
                        extra={**fields, "stage": job.current_stage, "outcome": "FAILED_TEMP"})
            await self._failed_temp(job, problem, time.monotonic() - started)

    async def _forward(self, job: Job) -> None:
        if job.occ.operation_state == OpState.STARTING:
            # written (with its notification) by the first stage's start: nothing happens before it
            await self.store.set_state(job, OpState.PROCESSING, owe=True)
        elif job.occ.operation_state != OpState.PROCESSING:
            return
        operation = OPERATIONS.get(job.occ.operation)
        if operation is None:
            raise UnprocessableEntity(f"operation {job.occ.operation.value} is not supported")
        await operation(self.stages, job)
        job.current_stage = ""
        job.plan.pop("current", None)
        await self.store.set_state(job, OpState.COMPLETED)

    async def _roll_back(self, job: Job) -> None:
        if job.occ.operation_state != OpState.ROLLING_BACK:
            return
        await rollback(self.stages, job)
        job.current_stage = ""
        finish_rollback(job)
        await self.store.set_state(job, OpState.ROLLED_BACK)

    async def _failed_temp(self, job: Job, problem: dict[str, Any], seconds: float) -> None:
        self.telemetry.operation_done(job.occ.operation.value, "FAILED_TEMP", seconds)
        try:
            await self.store.set_state(job, OpState.FAILED_TEMP, error=problem)
        except OwnershipLost as exc:
            log.warning("op %s: not recording FAILED_TEMP: %s", job.occ.id[:8], exc)
        except Exception:
            log.exception("recording FAILED_TEMP for %s failed", job.occ.id)
