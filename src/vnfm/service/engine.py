"""The LCM engine: runs operation occurrences durably, one at a time per VNF instance.

Every operation is a fixed sequence of stages (`<op>_start` hook, infrastructure steps,
`<op>_end` hook). After each stage the occurrence is checkpointed in the database, so:
- a failure leaves FAILED_TEMP with a ProblemDetails; *retry* resumes at the failed stage,
  *rollback* undoes instantiate and scale-out, *fail* ends it (FAILED);
- a process that dies mid-operation leaves an occurrence whose heartbeat goes stale; any engine
  (this process after a restart, or another process on the same database) turns it into
  FAILED_TEMP, and retry completes it.
Decisions taken once (which VNFCs a scale-in removes, which VNFCs existed before a scale-out) are
stored in the occurrence's plan, so retries and rollbacks act on exactly the same VNFCs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from vnfm.domain import lcm
from vnfm.domain.errors import OperationFailed, UnprocessableEntity, VnfmError
from vnfm.domain.model import (
    InstantiationState,
    LcmOperation,
    OpOcc,
    OpState,
    Vim,
    VnfInstance,
    VnfState,
    utcnow,
)
from vnfm.domain.patch import merge_patch
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.scaling import initial_scale_levels, target_counts
from vnfm.domain.secrets import scrub, secret_values
from vnfm.domain.vnfd import Flavour, Vnfd
from vnfm.service import views
from vnfm.service.notifications import Notifications
from vnfm.service.ports import (
    AbstractUnitOfWork,
    InfraContext,
    InfraDriver,
    LcmContext,
    NodeAccess,
    Notifier,
    PackageFiles,
    UowFactory,
)

log = logging.getLogger(__name__)


class CancelRequested(OperationFailed):
    """The occurrence was asked to stop (SOL003 cancel); it ends FAILED_TEMP."""

START_STATES = {OpState.STARTING: "START", OpState.PROCESSING: "START", OpState.ROLLING_BACK: "START"}


@dataclass
class Job:
    occ: OpOcc
    inst: VnfInstance
    vnfd: Vnfd
    flavour: Flavour | None
    package: PackageFiles | None
    vim: Vim | None
    infra: InfraDriver | None
    secrets: set[str] = field(default_factory=set)
    current_stage: str = ""

    @property
    def plan(self) -> dict[str, Any]:
        return self.occ.plan

    def done(self, stage: str) -> bool:
        return stage in self.plan.setdefault("done", [])

    def rb_done(self, stage: str) -> bool:
        return stage in self.plan.setdefault("rb_done", [])


class LcmEngine:
    def __init__(
        self,
        uow: UowFactory,
        *,
        vnfd_of: Callable[[str], Vnfd],
        files_of: Callable[[str], PackageFiles | None],
        infra_drivers: Mapping[str, InfraDriver],
        vim_of: Callable[[str | None], Vim | None],
        mgmt: Any,  # vnfm.adapters.mgmt.bindings.MgmtDrivers (duck-typed: for_hook)
        notifier: Notifier | None = None,
        vim_registry: Any = None,
        worker_id: str = "engine",
        orphan_after: float = 30.0,
        poll_interval: float = 1.0,
        services: dict[str, Any] | None = None,
        nodes_of: Callable[[Vim], NodeAccess | None] | None = None,
    ) -> None:
        self.uow = uow
        self.vnfd_of = vnfd_of
        self.files_of = files_of
        self.infra_drivers = infra_drivers
        self.vim_of = vim_of
        self.mgmt = mgmt
        self.notes = Notifications(notifier, worker_id)
        self.vim_registry = vim_registry
        self.worker_id = worker_id
        self.orphan_after = orphan_after
        self.poll_interval = poll_interval
        self.services = services or {}
        self.nodes_of = nodes_of
        self.loop: asyncio.AbstractEventLoop | None = None
        self.running: dict[str, asyncio.Task[None]] = {}
        self._bg: list[asyncio.Task[None]] = []
        self._stopping = False
        self._wakeup: asyncio.Event | None = None
        self.on_idle: list[Callable[[], None]] = []
        self._forced: set[str] = set()  # occurrences being cancelled FORCEFUL (their task is cancelled)

    # ================================================================ lifecycle
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._wakeup = asyncio.Event()
        await self.recover()
        self._bg.append(asyncio.create_task(self._heartbeat_loop(), name="lcm-heartbeat"))
        self._bg.append(asyncio.create_task(self._poll_loop(), name="lcm-poll"))

    async def stop(self) -> None:
        """Stop without finishing running operations: they stay PROCESSING and are recovered later."""
        self._stopping = True
        for t in list(self.running.values()) + self._bg:
            t.cancel()
        for t in list(self.running.values()) + self._bg:
            with contextlib.suppress(BaseException):
                await t
        self._bg.clear()

    async def recover(self) -> list[str]:
        """Take over occurrences whose owner stopped heart-beating: start STARTING ones, and turn
        PROCESSING / ROLLING_BACK ones into FAILED_TEMP (their process died mid-operation)."""
        stale_before = utcnow() - timedelta(seconds=self.orphan_after)
        with self.uow() as uow:
            claimed = uow.op_occs.claim_orphans(self.worker_id, stale_before)
            uow.commit()
        started = []
        for occ in claimed:
            if occ.id in self.running:
                continue
            if occ.operation_state == OpState.STARTING:
                self._spawn(occ.id, rollback=False)
                started.append(occ.id)
            else:
                self._interrupted(occ.id)
        return started

    def _interrupted(self, op_id: str) -> None:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
            if occ is None or occ.operation_state not in (OpState.PROCESSING, OpState.ROLLING_BACK):
                return
            stage = occ.plan.get("current", "")
            problem = OperationFailed(
                "the VNFM process running this operation stopped"
                + (f" during stage '{stage}'" if stage else "")
                + "; retry resumes it, rollback undoes it, fail ends it"
            ).problem()
            lcm.transition(occ, OpState.FAILED_TEMP, error=problem)
            occ.owner = None
            uow.op_occs.save(occ)
            self._stage_notification(uow, occ)
            uow.commit()
        self.notes.wake()

    async def _heartbeat_loop(self) -> None:
        interval = max(self.orphan_after / 3, 0.05)
        while True:
            await asyncio.sleep(interval)
            if self.running:
                now = utcnow()
                with self.uow() as uow:
                    for op_id in list(self.running):
                        uow.op_occs.heartbeat(op_id, self.worker_id, now)
                    uow.commit()
                for op_id in list(self.running):  # FORCEFUL cancels asked of another process
                    self.check_cancel(op_id)

    # ================================================================ cancel (SOL003 5.4.17)
    def request_cancel(self, op_id: str) -> None:
        """A cancel was recorded for `op_id` (thread-safe): act on it now if this process runs it."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.check_cancel, op_id)

    def check_cancel(self, op_id: str) -> None:
        """FORCEFUL: cancel the running task now. GRACEFUL is seen at the next stage boundary."""
        task = self.running.get(op_id)
        if task is None or op_id in self._forced:
            return
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
        if occ is not None and occ.is_cancel_pending and occ.cancel_mode == "FORCEFUL":
            self._forced.add(op_id)
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

    # ================================================================ submission
    def submit(self, op_id: str, *, rollback: bool = False) -> None:
        """Schedule an occurrence this process has claimed (thread-safe)."""
        if self.loop is None:
            raise RuntimeError("LCM engine is not started")
        self.loop.call_soon_threadsafe(self._spawn, op_id, rollback)

    def _spawn(self, op_id: str, rollback: bool) -> None:
        if op_id in self.running or self._stopping:
            return
        task = asyncio.get_running_loop().create_task(self._run(op_id, rollback), name=f"lcm-{op_id}")
        self.running[op_id] = task

        def _done(_: asyncio.Task[None]) -> None:
            self.running.pop(op_id, None)
            if not self.running:
                for cb in self.on_idle:
                    cb()

        task.add_done_callback(_done)

    # ================================================================ persistence helpers
    def _persist(self, job: Job, *, instance: bool = True, notify: bool = False) -> None:
        """Store the occurrence (and the instance); with `notify`, the state's notification too."""
        job.occ.heartbeat = utcnow()
        with self.uow() as uow:
            if job.occ.operation_state in lcm.CANCELLABLE:  # a cancel recorded meanwhile is kept
                stored = uow.op_occs.get_for_update(job.occ.id)
                if stored is not None and stored.is_cancel_pending and not job.occ.is_cancel_pending:
                    job.occ.is_cancel_pending, job.occ.cancel_mode = True, stored.cancel_mode
            uow.op_occs.save(job.occ)
            if instance:
                uow.instances.save(job.inst)
            if notify:
                self._stage_notification(uow, job.occ)
            uow.commit()
        if notify:
            self.notes.wake()

    def _stage_notification(self, uow: AbstractUnitOfWork, occ: OpOcc) -> None:
        status = START_STATES.get(occ.operation_state, "RESULT")
        self.notes.stage(uow, views.lcm_notification(occ, status))

    def _set_state(self, job: Job, new: OpState, error: dict[str, Any] | None = None) -> None:
        lcm.transition(job.occ, new, error=error)
        if new in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK):
            job.occ.owner = None
            if job.inst.lock_op_id == job.occ.id:
                job.inst.lock_op_id = None
        self._persist(job, notify=True)

    def progress(self, job: Job, message: str) -> None:
        message = scrub(message, job.secrets)
        job.occ.events.append({"time": views.ts(utcnow()), "stage": job.current_stage, "message": message})
        del job.occ.events[:-200]
        log.info("op %s %s: %s", job.occ.id[:8], job.current_stage, message)
        self._persist(job, instance=False)

    # ================================================================ job loading
    def _load(self, op_id: str) -> Job:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
            if occ is None:
                raise LookupError(op_id)
            inst = uow.instances.get(occ.vnf_instance_id)
        if inst is None:
            raise LookupError(occ.vnf_instance_id)
        vnfd = self.vnfd_of(inst.vnf_pkg_id)
        flavour_id = inst.flavour_id or occ.operation_params.get("flavourId")
        flavour = vnfd.flavour(flavour_id) if flavour_id else None
        vim = self.vim_of(inst.vim_id)
        infra = self.infra_drivers.get(vim.vim_type) if vim is not None else None
        secrets = secret_values(inst.additional_params) | secret_values(occ.operation_params)
        return Job(occ=occ, inst=inst, vnfd=vnfd, flavour=flavour, package=self.files_of(inst.vnf_pkg_id),
                   vim=vim, infra=infra, secrets=secrets)

    def _infra_ctx(self, job: Job) -> InfraContext:
        if job.flavour is None or job.vim is None:
            raise OperationFailed("the instance has no flavour or VIM")
        return InfraContext(
            instance_id=job.inst.id,
            op_id=job.occ.id,
            vnfd=job.vnfd,
            flavour=job.flavour,
            package=job.package,
            vim=job.vim,
            ext_virtual_links=job.inst.ext_virtual_links,
            additional_params=job.inst.additional_params,
            resources=job.inst.resources,
            progress=lambda m: self.progress(job, m),
        )

    def _infra(self, job: Job) -> InfraDriver:
        if job.infra is None:
            vt = job.vim.vim_type if job.vim else "none"
            raise OperationFailed(f"no infrastructure driver for VIM type '{vt}'")
        return job.infra

    # ================================================================ running
    async def _run(self, op_id: str, rollback: bool) -> None:
        try:
            job = self._load(op_id)
        except Exception as exc:
            log.exception("cannot load occurrence %s", op_id)
            with self.uow() as uow:
                occ = uow.op_occs.get(op_id)
                if occ is not None and occ.operation_state in (OpState.STARTING, OpState.PROCESSING):
                    if occ.operation_state == OpState.STARTING:
                        lcm.transition(occ, OpState.PROCESSING)
                    lcm.transition(occ, OpState.FAILED_TEMP, error=OperationFailed(str(exc)).problem())
                    uow.op_occs.save(occ)
                    uow.commit()
            return
        occ = job.occ
        try:
            if rollback:
                if occ.operation_state != OpState.ROLLING_BACK:
                    return
                await self._rollback(job)
                job.current_stage = ""
                self._finish_rollback(job)
                self._set_state(job, OpState.ROLLED_BACK)
            else:
                if occ.operation_state == OpState.STARTING:
                    self._set_state(job, OpState.PROCESSING)
                elif occ.operation_state != OpState.PROCESSING:
                    return
                await self._forward(job)
                job.current_stage = ""
                job.plan.pop("current", None)
                self._set_state(job, OpState.COMPLETED)
        except asyncio.CancelledError:
            if op_id not in self._forced or self._stopping:
                # Shutting down: leave the occurrence as it is; recovery turns it into FAILED_TEMP.
                raise
            self._forced.discard(op_id)
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            stage = job.current_stage
            problem = OperationFailed(
                "cancelled (FORCEFUL) on request" + (f" during stage '{stage}'" if stage else "")
                + "; retry resumes it, rollback undoes it, fail ends it").problem()
            log.warning("op %s cancelled in %s", occ.id[:8], stage)
            try:
                self._set_state(job, OpState.FAILED_TEMP, error=problem)
            except Exception:
                log.exception("recording FAILED_TEMP for %s failed", occ.id)
        except Exception as exc:
            problem = self._problem(job, exc)
            log.warning("op %s failed in %s: %s", occ.id[:8], job.current_stage, problem["detail"])
            try:
                self._set_state(job, OpState.FAILED_TEMP, error=problem)
            except Exception:
                log.exception("recording FAILED_TEMP for %s failed", occ.id)

    def _problem(self, job: Job, exc: Exception) -> dict[str, Any]:
        if isinstance(exc, VnfmError):
            problem = exc.problem()
            detail = exc.detail
        else:
            problem = OperationFailed(str(exc)).problem()
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        stage = "" if isinstance(exc, CancelRequested) else job.current_stage
        problem["detail"] = scrub(f"{stage} failed: {detail}" if stage else detail, job.secrets)
        if problem.get("status", 500) < 500:
            problem["status"] = 500 if isinstance(exc, OperationFailed) else problem["status"]
        return problem

    def _cancel_point(self, job: Job) -> None:
        """Between stages: a GRACEFUL (or not yet acted on FORCEFUL) cancel stops the operation here."""
        if job.occ.is_cancel_pending:
            raise CancelRequested(
                f"cancelled ({job.occ.cancel_mode}) on request before stage '{job.current_stage}'; "
                "retry resumes it, rollback undoes it, fail ends it")

    async def _stage(self, job: Job, name: str, fn: Callable[[], Awaitable[None]]) -> None:
        if job.done(name):
            return
        job.current_stage = name
        job.plan["current"] = name
        self._persist(job, instance=False)
        self._cancel_point(job)
        started = time.monotonic()
        await fn()
        job.plan["done"].append(name)
        job.plan.setdefault("timings", {})[name] = round(time.monotonic() - started, 4)
        self._persist(job)

    async def _rb_stage(self, job: Job, name: str, fn: Callable[[], Awaitable[None]]) -> None:
        if job.rb_done(name):
            return
        job.current_stage = f"rollback:{name}"
        job.plan["current"] = job.current_stage
        self._persist(job, instance=False)
        self._cancel_point(job)
        await fn()
        job.plan["rb_done"].append(name)
        self._persist(job)

    async def _hook(self, job: Job, hook: str, **kw: Any) -> None:
        if job.flavour is None:
            return
        driver = self.mgmt.for_hook(job.flavour, hook)
        if driver is None:
            return
        infra_ctx = self._infra_ctx(job) if job.infra is not None else None
        extra_params = job.occ.operation_params.get("additionalParams") or {}
        params = dict(job.inst.additional_params)
        if job.occ.operation != LcmOperation.INSTANTIATE:
            params = _override(params, extra_params)
        ctx = LcmContext(
            hook=hook,
            operation=job.occ.operation.value,
            op_id=job.occ.id,
            instance=job.inst,
            request=job.occ.operation_params,
            additional_params=params,
            vnfd=job.vnfd,
            flavour=job.flavour,
            package=job.package,
            resources=job.inst.resources,
            vims=self.vim_registry,
            state=job.inst.driver_state.setdefault(driver.name or type(driver).__name__, {}),
            progress=lambda m: self.progress(job, m),
            services=self.services,
            nodes=self.nodes_of(job.vim) if self.nodes_of is not None and job.vim is not None else None,
            infra=job.infra,
            infra_ctx=infra_ctx,
            **kw,
        )
        self.progress(job, f"{hook}: management driver '{driver.name}'")
        try:
            await driver.handle(hook, ctx)
        finally:
            self._persist(job)

    # ================================================================ forward operations
    async def _forward(self, job: Job) -> None:
        op = job.occ.operation
        handlers: dict[LcmOperation, Callable[[Job], Awaitable[None]]] = {
            LcmOperation.INSTANTIATE: self._instantiate,
            LcmOperation.SCALE: self._scale,
            LcmOperation.HEAL: self._heal,
            LcmOperation.TERMINATE: self._terminate,
            LcmOperation.MODIFY_INFO: self._modify_info,
        }
        handler = handlers.get(op)
        if handler is None:
            raise UnprocessableEntity(f"operation {op.value} is not supported")
        await handler(job)

    def _affected(self, job: Job, vnfcs: list[Vnfc], change: str) -> None:
        rc = job.occ.resource_changes.setdefault("affectedVnfcs", [])
        for v in vnfcs:
            rc.append(
                {
                    "id": v.id,
                    "vduId": v.vdu_id,
                    "changeType": change,
                    "computeResource": {
                        "vimConnectionId": job.inst.vim_id,
                        "resourceId": v.server_id,
                        "vimLevelResourceType": v.resource_type,
                    },
                    "affectedVnfcCpIds": [c.id for c in v.cps],
                    **(
                        {"addedStorageResourceIds": [s.id for s in v.storages]}
                        if change == "ADDED" and v.storages
                        else {}
                    ),
                    **(
                        {"removedStorageResourceIds": [s.id for s in v.storages]}
                        if change == "REMOVED" and v.storages
                        else {}
                    ),
                }
            )
        storages = job.occ.resource_changes.setdefault("affectedVirtualStorages", [])
        if change in ("ADDED", "REMOVED"):
            for v in vnfcs:
                for s in v.storages:
                    storages.append(
                        {
                            "id": s.id,
                            "virtualStorageDescId": s.virtual_storage_desc_id,
                            "changeType": change,
                            "storageResource": {"vimConnectionId": job.inst.vim_id, "resourceId": s.volume_id,
                                                "vimLevelResourceType": "OS::Cinder::Volume"},
                        }
                    )
        if not storages:
            job.occ.resource_changes.pop("affectedVirtualStorages", None)

    async def _instantiate(self, job: Job) -> None:
        flavour = job.flavour
        assert flavour is not None
        level = job.inst.instantiation_level_id
        if "counts" not in job.plan:
            levels = initial_scale_levels(flavour, level)
            job.plan["levels"] = levels
            job.plan["counts"] = target_counts(flavour, level, levels)
        counts: dict[str, int] = job.plan["counts"]
        infra = self._infra(job)

        await self._stage(job, "instantiate_start", lambda: self._hook(job, "instantiate_start"))

        async def deploy() -> None:
            self.progress(job, "deploying " + ", ".join(f"{n} x {vdu}" for vdu, n in sorted(counts.items())))
            job.inst.resources = await infra.deploy(self._infra_ctx(job), counts)
            job.occ.resource_changes = {}
            self._affected(job, job.inst.resources.vnfcs, "ADDED")

        await self._stage(job, "infra_deploy", deploy)
        await self._stage(
            job, "instantiate_end", lambda: self._hook(job, "instantiate_end", added=list(job.inst.resources.vnfcs))
        )
        job.inst.scale_levels = dict(job.plan["levels"])
        job.inst.instantiation_state = InstantiationState.INSTANTIATED
        job.inst.vnf_state = VnfState.STARTED

    async def _scale(self, job: Job) -> None:
        flavour = job.flavour
        assert flavour is not None
        infra = self._infra(job)
        plan = job.plan
        scale_out = plan["type"] == "SCALE_OUT"
        removed = [Vnfc(**_vnfc_kwargs(d)) for d in plan.get("removed", [])]

        await self._stage(job, "scale_start", lambda: self._hook(job, "scale_start", removed=removed))

        async def update() -> None:
            before = set(plan["before_ids"])
            verb = "adding" if scale_out else "removing"
            target = ", ".join(f"{v}={n}" for v, n in sorted(plan["counts"].items()))
            self.progress(job, f"{verb} VNFCs: target {target}")
            job.inst.resources = await infra.update(self._infra_ctx(job), plan["counts"], plan.get("remove", []))
            added = [v for v in job.inst.resources.vnfcs if v.id not in before]
            plan["added"] = [v.id for v in added]
            job.occ.resource_changes = {}
            self._affected(job, added, "ADDED")
            self._affected(job, removed, "REMOVED")
            job.inst.scale_levels = dict(plan["new_levels"])

        await self._stage(job, "infra_update", update)
        added_now = [v for v in job.inst.resources.vnfcs if v.id in set(plan.get("added", []))]
        await self._stage(job, "scale_end", lambda: self._hook(job, "scale_end", added=added_now, removed=removed))

    async def _heal(self, job: Job) -> None:
        infra = self._infra(job)
        plan = job.plan
        if plan.get("entire"):
            old = [Vnfc(**_vnfc_kwargs(d)) for d in plan["old"]]
            await self._stage(job, "heal_start", lambda: self._hook(job, "heal_start", heal_entire=True, removed=old))

            async def undeploy() -> None:
                self.progress(job, "deleting every resource of the VNF")
                await infra.undeploy(self._infra_ctx(job))
                job.inst.resources = VnfResources()

            async def redeploy() -> None:
                what = ", ".join(f"{n} x {v}" for v, n in sorted(plan["counts"].items()))
                self.progress(job, f"re-creating the VNF: {what}")
                job.inst.resources = await infra.deploy(self._infra_ctx(job), plan["counts"])
                job.occ.resource_changes = {}
                self._affected(job, old, "REMOVED")
                self._affected(job, job.inst.resources.vnfcs, "ADDED")

            await self._stage(job, "infra_undeploy", undeploy)
            await self._stage(job, "infra_deploy", redeploy)
            await self._stage(
                job, "heal_end",
                lambda: self._hook(job, "heal_end", heal_entire=True, added=list(job.inst.resources.vnfcs)),
            )
            return
        ids: list[str] = plan["vnfc_ids"]
        targets = [Vnfc(**_vnfc_kwargs(d)) for d in plan["old"]]
        await self._stage(job, "heal_start", lambda: self._hook(job, "heal_start", healed=targets))

        async def heal() -> None:
            todo = list(ids)
            if plan.get("heal_attempted"):
                # A retry: VNFCs the failed attempt already replaced (new server, up) are not
                # replaced again; the rest are.
                todo = await self._still_to_heal(job, infra, targets)
            else:
                plan["heal_attempted"] = True
                self._persist(job, instance=False)
            if todo:
                self.progress(job, f"replacing the servers of {len(todo)} VNFC(s)")
                job.inst.resources = await infra.heal(self._infra_ctx(job), todo, keep_storage=plan["keep_storage"])
            else:
                job.inst.resources = await infra.current(self._infra_ctx(job))
            job.occ.resource_changes = {}
            self._affected(job, [v for v in job.inst.resources.vnfcs if v.id in ids], "MODIFIED")

        await self._stage(job, "infra_heal", heal)
        healed_now = [v for v in job.inst.resources.vnfcs if v.id in set(ids)]
        await self._stage(job, "heal_end", lambda: self._hook(job, "heal_end", healed=healed_now))

    async def _still_to_heal(self, job: Job, infra: InfraDriver, targets: list[Vnfc]) -> list[str]:
        """The VNFCs of `targets` whose server was not yet replaced by a working one."""
        ctx = self._infra_ctx(job)
        now = await infra.current(ctx)
        todo: list[str] = []
        done: list[str] = []
        for old in targets:
            cur = now.by_id(old.id)
            replaced = cur is not None and bool(cur.server_id) and cur.server_id != old.server_id
            if replaced and cur is not None and await infra.probe(ctx, cur) is None:
                done.append(old.id)
            else:
                todo.append(old.id)
        if done:
            self.progress(job, f"already replaced by the failed attempt, kept: {', '.join(done)}")
        return todo

    async def _terminate(self, job: Job) -> None:
        infra = self._infra(job)
        old = [Vnfc(**_vnfc_kwargs(d)) for d in job.plan.get("old", [])]
        await self._stage(job, "terminate_start", lambda: self._hook(job, "terminate_start", removed=old))

        async def undeploy() -> None:
            self.progress(job, "deleting every resource of the VNF")
            await infra.undeploy(self._infra_ctx(job))
            job.inst.resources = VnfResources()
            job.occ.resource_changes = {}
            self._affected(job, old, "REMOVED")

        await self._stage(job, "infra_undeploy", undeploy)
        await self._stage(job, "terminate_end", lambda: self._hook(job, "terminate_end", removed=old))
        _clear_instantiated(job.inst)

    async def _modify_info(self, job: Job) -> None:
        changes: dict[str, Any] = job.occ.operation_params
        await self._stage(job, "modify_information_start", lambda: self._hook(job, "modify_information_start"))

        async def apply() -> None:
            inst = job.inst
            if "vnfInstanceName" in changes:
                inst.vnf_instance_name = changes["vnfInstanceName"]
            if "vnfInstanceDescription" in changes:
                inst.vnf_instance_description = changes["vnfInstanceDescription"]
            for key, attr in (("metadata", "metadata"), ("extensions", "extensions"),
                              ("vnfConfigurableProperties", "vnf_configurable_properties")):
                if key in changes:
                    setattr(inst, attr, merge_patch(getattr(inst, attr), changes[key]))
            if "vimConnectionInfo" in changes:
                by_id = {e.get("id"): e for e in inst.vim_connection_info}
                for entry in changes["vimConnectionInfo"]:
                    by_id[entry.get("id")] = merge_patch(by_id.get(entry.get("id"), {}), entry)
                inst.vim_connection_info = list(by_id.values())
            job.occ.changed_info = {k: v for k, v in changes.items() if k != "vimConnectionInfo"}

        await self._stage(job, "modify", apply)
        await self._stage(job, "modify_information_end", lambda: self._hook(job, "modify_information_end"))

    # ================================================================ rollback
    async def _rollback(self, job: Job) -> None:
        op = job.occ.operation
        infra = self._infra(job)
        if op == LcmOperation.INSTANTIATE:
            await self._rb_stage(job, "terminate_start",
                                 lambda: self._hook(job, "terminate_start", rollback=True,
                                                    removed=list(job.inst.resources.vnfcs)))

            async def undeploy() -> None:
                self.progress(job, "rolling back: deleting the VNF's resources")
                await infra.undeploy(self._infra_ctx(job))
                job.inst.resources = VnfResources()

            await self._rb_stage(job, "infra_undeploy", undeploy)
            await self._rb_stage(job, "terminate_end", lambda: self._hook(job, "terminate_end", rollback=True))
            return
        if op == LcmOperation.SCALE:
            plan = job.plan
            before = set(plan["before_ids"])
            if not job.done("infra_update"):
                # The infrastructure step may have partly run: look at what exists now.
                job.inst.resources = await infra.current(self._infra_ctx(job))
            added = [v for v in job.inst.resources.vnfcs if v.id not in before]
            await self._rb_stage(job, "scale_start",
                                 lambda: self._hook(job, "scale_start", rollback=True, removed=added))

            async def shrink() -> None:
                self.progress(job, f"rolling back: removing {len(added)} added VNFC(s)")
                job.inst.resources = await infra.update(
                    self._infra_ctx(job), plan["counts_before"], [v.id for v in added]
                )
                job.occ.resource_changes = {}
                job.inst.scale_levels = dict(plan["old_levels"])

            await self._rb_stage(job, "infra_update", shrink)
            await self._rb_stage(job, "scale_end", lambda: self._hook(job, "scale_end", rollback=True, removed=added))
            return
        raise UnprocessableEntity(f"rollback of {op.value} is not supported")

    def _finish_rollback(self, job: Job) -> None:
        if job.occ.operation == LcmOperation.INSTANTIATE:
            _clear_instantiated(job.inst)
            job.occ.resource_changes = {}


# ==================================================================== helpers
def _vnfc_kwargs(d: dict[str, Any]) -> dict[str, Any]:
    res = VnfResources.from_dict({"vnfcs": [d]})
    v = res.vnfcs[0]
    return {k: getattr(v, k) for k in v.__dataclass_fields__}


def _clear_instantiated(inst: VnfInstance) -> None:
    inst.instantiation_state = InstantiationState.NOT_INSTANTIATED
    inst.flavour_id = None
    inst.instantiation_level_id = None
    inst.scale_levels = {}
    inst.resources = VnfResources()
    inst.ext_virtual_links = []
    inst.ext_managed_virtual_links = []
    inst.additional_params = {}
    inst.driver_state = {}
    inst.vim_id = None


def _override(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """A request's additionalParams override the stored ones, one dict level deep per key."""
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            merged = dict(out[k])
            merged.update(v)
            out[k] = merged
        else:
            out[k] = v
    return out

