"""Durable stages: what every operation runs through.

A stage runs once: it is checkpointed in the occurrence before it starts (`plan["current"]`) and
after it ends (`plan["done"]`), so a retry skips the stages already done and resumes at the one
that failed. Between stages sits a cancel point (SOL003 GRACEFUL cancel). A hook stage calls the
management driver bound to the hook with an `LcmContext` built here.

Writes (issue 24 item 4): a checkpoint with nothing that has a side effect between it and the
next write is merged into that write. So a stage's end (`plan["done"]`, the instance, the
driver's state) is written with the next stage's start checkpoint, or with the operation's final
state (`JobStore.owe`): durable before anything else happens, as before. A stage's start is a
write of its own (a hook stage's carries the hook's progress line, so the line is in the database
before the driver's long work). A driver that fails or is cancelled has its state written before
the failure goes on. A hook stage with no driver bound writes nothing of its own. With the move
to PROCESSING written by the first stage's start, an instantiate of three stages is three writes.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from vnfm.domain.errors import BadRequest, OperationFailed, VnfmError
from vnfm.domain.model import LcmOperation, Vim
from vnfm.domain.secrets import scrub
from vnfm.service import telemetry
from vnfm.service.lcm.job import Job, JobStore
from vnfm.service.ports import InfraContext, LcmContext, NodeAccess, SnapshotStore, VimRegistry
from vnfm.service.telemetry import NoTelemetry, Telemetry

StageFn = Callable[[], Awaitable[None]]


class CancelRequested(OperationFailed):
    """The occurrence was asked to stop (SOL003 cancel); it ends FAILED_TEMP."""


class Stages:
    """Runs an operation's stages and hooks for one engine; operations get it with their job."""

    def __init__(
        self,
        store: JobStore,
        *,
        mgmt: Any,  # vnfm.adapters.mgmt.registry.MgmtRegistry (duck-typed: for_hook)
        vim_registry: VimRegistry | None = None,
        nodes_of: Callable[[Vim], NodeAccess | None] | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.telemetry: Telemetry = telemetry or NoTelemetry()
        self.store = store
        self.mgmt = mgmt
        self.vim_registry = vim_registry
        self.nodes_of = nodes_of
        self.snapshots: SnapshotStore | None = None  # set by the composition root

    # ------------------------------------------------------------------ for operations
    def progress(self, job: Job, message: str) -> None:
        self.store.progress(job, message)

    async def persist(self, job: Job, *, instance: bool = True) -> None:
        await self.store.persist(job, instance=instance)

    def infra_ctx(self, job: Job) -> InfraContext:
        return job.infra_context(lambda m: self.progress(job, m))

    async def stage(self, job: Job, name: str, fn: StageFn) -> None:
        """Run `fn` as the stage `name` unless an earlier attempt completed it."""
        if job.done(name):
            return
        started = time.monotonic()
        await self._run(job, name, fn, started)
        job.plan["done"].append(name)
        job.plan.setdefault("timings", {})[name] = round(time.monotonic() - started, 4)
        self.store.owe(job)  # written with the next stage's start or the operation's end

    async def rollback_stage(self, job: Job, name: str, fn: StageFn) -> None:
        """Run `fn` as the rollback stage `name` unless an earlier rollback attempt completed it."""
        if job.rb_done(name):
            return
        await self._run(job, f"rollback:{name}", fn, time.monotonic())
        job.plan["rb_done"].append(name)
        self.store.owe(job)

    async def _run(self, job: Job, label: str, fn: StageFn, started: float) -> None:
        """A stage's start checkpoint (`plan["current"]`; none for a hook with no driver bound),
        its cancel point and `fn`."""
        job.current_stage = label
        job.plan["current"] = label
        cancel_point(job)  # a cancel already known: a hook's line is not logged
        body = fn()
        idle = isinstance(body, HookCall) and body.driver is None
        if isinstance(body, HookCall):
            body.prepare(in_stage=True)  # its context and log line: the line rides on the start checkpoint
        try:
            if not idle:
                await self.store.persist(job, instance=False)
            cancel_point(job)
        except BaseException:
            if inspect.iscoroutine(body):
                body.close()  # never started
            raise
        await self._timed(job, label, body, started)

    async def _timed(self, job: Job, name: str, body: Awaitable[None], started: float) -> None:
        """Await a stage's body between its start and end log lines (and metrics)."""
        ids = (job.inst.id, job.occ.id, job.occ.operation.value, name)
        telemetry.stage_started(*ids)
        outcome = "failed"
        try:
            await body
            outcome = "ok"
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            telemetry.stage_ended(self.telemetry, *ids, time.monotonic() - started, outcome)

    def hook(self, job: Job, hook: str, **kw: Any) -> HookCall:
        """The call of the management driver bound to `hook` (none bound: nothing to do), to be
        awaited; as a stage's body (`stage(job, name, lambda: st.hook(...))`) it costs no write of
        its own (see the module's docstring)."""
        return HookCall(self, job, hook, kw)

    def context(self, job: Job, hook: str, driver: Any, **kw: Any) -> LcmContext:
        """The `LcmContext` of `hook` for `driver` (its private state lives in the instance)."""
        assert job.flavour is not None
        infra_ctx = self.infra_ctx(job) if job.infra is not None else None
        extra_params = job.occ.operation_params.get("additionalParams") or {}
        params = dict(job.inst.additional_params)
        nodes = self.nodes_of(job.vim) if self.nodes_of and job.vim else None
        edge = job.edge or (lambda port: port)
        if job.occ.operation != LcmOperation.INSTANTIATE:
            params = override_params(params, extra_params)
        parsed = None
        if getattr(driver, "declared", None) is not None:
            try:  # checked when the request arrived: a failure here is the stored data's
                parsed = driver.declared.for_operation(job.occ.operation.value, job.inst.additional_params,
                                                       extra_params)
            except BadRequest as e:
                raise OperationFailed(e.detail) from None
        return LcmContext(
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
            vims=edge(self.vim_registry) if self.vim_registry is not None else None,
            state=job.inst.driver_state.setdefault(driver.name or type(driver).__name__, {}),
            progress=edge(lambda m: self.progress(job, m)),
            nodes=edge(nodes) if nodes is not None else None,
            infra=job.infra,
            infra_ctx=infra_ctx,
            params=parsed,
            snapshots=self.snapshots,
            **kw,
        )


class HookCall:
    """The call of the management driver bound to a hook (`Stages.hook`), to be awaited. Awaited on
    its own, its log line is written (`flushed`) before the driver runs and the driver's state
    after it, however it ended. As a stage's body (`prepare(in_stage=True)` first), the stage's
    checkpoints write both: the line with its start, the state with its done checkpoint; the
    state of a driver that failed or was cancelled is written here before the failure goes on."""

    def __init__(self, stages: Stages, job: Job, hook: str, kw: dict[str, Any]) -> None:
        self.stages, self.job, self.hook, self.kw = stages, job, hook, kw
        self.driver: Any = stages.mgmt.for_hook(job.flavour, hook) if job.flavour is not None else None
        self.ctx: LcmContext | None = None
        self.in_stage = False

    def prepare(self, *, in_stage: bool = False) -> None:
        """Build the driver's context and add its progress line (written by the next write)."""
        self.in_stage = in_stage
        if self.driver is not None and self.ctx is None:
            self.ctx = self.stages.context(self.job, self.hook, self.driver, **self.kw)
            self.stages.progress(self.job, f"{self.hook}: management driver '{self.driver.name}'")

    def __await__(self) -> Generator[Any, None, None]:
        return self._call().__await__()

    async def _call(self) -> None:
        if self.driver is None:
            return
        job, store = self.job, self.stages.store
        if self.ctx is None:  # awaited on its own: the line is in the database before the driver's work
            self.prepare()
            await store.flushed(job)
        assert self.ctx is not None
        try:
            await self.driver.handle(self.hook, self.ctx)
        except BaseException:
            await store.persist(job)  # the driver's state, however the call ended
            raise
        if not self.in_stage:  # in a stage, its done checkpoint writes it
            await store.persist(job)


def cancel_point(job: Job) -> None:
    """Between stages: a GRACEFUL (or not yet acted on FORCEFUL) cancel stops the operation here."""
    if job.occ.is_cancel_pending:
        raise CancelRequested(
            f"cancelled ({job.occ.cancel_mode}) on request before stage '{job.current_stage}'; "
            "retry resumes it, rollback undoes it, fail ends it")


def failure_problem(job: Job, exc: Exception) -> dict[str, Any]:
    """The ProblemDetails a failed job records (naming the stage; the job's secrets scrubbed)."""
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


def override_params(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
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
