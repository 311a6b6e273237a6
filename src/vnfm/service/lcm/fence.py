"""Fencing to the edge: every side effect a runner makes goes through a port wrapped here, and is
preceded by a cheap check (`Liveness.owns`: one read by primary key, no lock) that the runner
still owns its occurrence at the epoch it loaded. A process paused past the takeover time (or
whose occurrence was failed or retried meanwhile) stops before its next cloud call, SSH step or
Kubernetes API write, not only at its next database write.

- `FencedInfra`: the infrastructure driver an operation and its hooks get (`job.infra`); every call
  that changes the cloud is checked (reads, `current` and `probe`, are not), and while a call runs
  progress and each progress line it reports is checked (before it is reported) too (the
  Kubernetes driver reports one per object it applies, the simulator one per server), so a call
  resumed mid-way stops at its next step and reports nothing more; a refusal is remembered.
- `FencedNodeAccess` / `FencedExecutor`: every node step (one check per step, or per batch of the
  same step on several hosts).
- `FencedVims`: registering, updating or deleting a VIM; a hook's progress lines are checked too.
Notifications need no check here: they are staged in the fenced write of the state they report.
A check is not a lock: a takeover between a check and the call it precedes is not excluded, the
calls take absolute targets so that the new owner converges anyway. A check that found the
occurrence owned less than `fresh_for` seconds ago (monotonic clock: half a beat interval) is
not repeated, so a busy runner reads at most a few times a second; a job write that succeeded
counts as such a check (the write is fenced by the same owner and epoch: it found the occurrence
owned when it was sent), so the first side effect after a stage's start write reads nothing; a
pause longer than that (a takeover needs six beat intervals) always reads again, so a resumed
zombie stops at its next step. The step that was in flight when the process was paused completes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from vnfm.domain.model import Vim
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.nodesteps.base import NodeStep, StepExecutor, StepResult
from vnfm.service.lcm.job import Job, OwnershipLost
from vnfm.service.ports import InfraContext, InfraDriver, Liveness, NodeAccess, NodeHost, VimRegistry


class Fence:
    """The check of one job: it still owns its occurrence (owner and epoch it was loaded with)."""

    def __init__(self, liveness: Liveness, job: Job, *, lost: Callable[[], bool] = lambda: False,
                 fresh_for: float = 0.0) -> None:
        self.liveness = liveness
        self.job = job
        self._lost = lost  # what this process already knows (the heartbeat found it taken over)
        self.fresh_for = fresh_for
        self._owned_at = -1e18  # monotonic time of the last read that found it owned
        self._refused: OwnershipLost | None = None  # a lost occurrence stays lost (an epoch only grows)
        self.checks = 0

    def _refuse(self) -> OwnershipLost:
        owner, epoch = self.job.fence
        self._refused = OwnershipLost(f"occurrence {self.job.occ.id} is no longer owned by {owner or 'nobody'} "
                                      f"(epoch {epoch}): not acting on it")
        return self._refused

    def _known_lost(self) -> OwnershipLost | None:
        if self.job.writer.lost is not None:
            return self.job.writer.lost
        if self._refused is not None:
            return self._refused
        return self._refuse() if self._lost() else None

    def _fresh(self) -> bool:
        """Found owned (by a read, or by a fenced job write) less than `fresh_for` seconds ago."""
        return time.monotonic() - max(self._owned_at, self.job.writer.owned_at) < self.fresh_for

    def _owned(self) -> bool:
        self.checks += 1
        owner, epoch = self.job.fence
        asked = time.monotonic()
        owned = self.liveness.owns(self.job.occ.id, owner, epoch)
        if owned:
            self._owned_at = asked
        return owned

    async def check(self) -> None:
        """Raise OwnershipLost unless the occurrence is still this runner's (a read in a thread)."""
        known = self._known_lost()
        if known is not None:
            raise known
        if not self._fresh() and not await asyncio.to_thread(self._owned):
            raise self._refuse()

    def check_sync(self) -> None:
        """The same, blocking (from a worker thread, or from the event loop where a driver
        reports progress: one read by primary key, at most every `fresh_for` seconds)."""
        known = self._known_lost()
        if known is not None:
            raise known
        if not self._fresh() and not self._owned():
            raise self._refuse()

    def checked_progress(self, progress: Callable[[str], None]) -> Callable[[str], None]:
        """`progress`, checked first: a runner that lost its occurrence reports nothing more (a
        driver reporting from several tasks at once, one per server, stops at every one)."""
        def report(message: str) -> None:
            self.check_sync()
            progress(message)
        return report


class FencedInfra(InfraDriver):
    def __init__(self, inner: InfraDriver, fence: Fence) -> None:
        self.inner = inner
        self.fence = fence
        self.vim_type = inner.vim_type

    async def _ctx(self, ctx: InfraContext) -> InfraContext:
        await self.fence.check()
        return replace(ctx, progress=self.fence.checked_progress(ctx.progress))

    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        return await self.inner.deploy(await self._ctx(ctx), counts)

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        return await self.inner.update(await self._ctx(ctx), counts, remove)

    async def heal(self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True) -> VnfResources:
        return await self.inner.heal(await self._ctx(ctx), vnfc_ids, keep_storage=keep_storage)

    async def undeploy(self, ctx: InfraContext) -> None:
        await self.inner.undeploy(await self._ctx(ctx))

    async def current(self, ctx: InfraContext) -> VnfResources:
        return await self.inner.current(ctx)

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        return await self.inner.probe(ctx, vnfc)

    async def reserve_address(self, ctx: InfraContext, cp_name: str, purpose: str) -> str:
        return await self.inner.reserve_address(await self._ctx(ctx), cp_name, purpose)

    async def release_address(self, ctx: InfraContext, purpose: str) -> None:
        await self.inner.release_address(await self._ctx(ctx), purpose)

    def __getattr__(self, name: str) -> Any:  # driver-specific extras (e.g. the simulator's node access)
        return getattr(self.inner, name)


class FencedExecutor(StepExecutor):
    def __init__(self, inner: StepExecutor, fence: Fence) -> None:
        self.inner = inner
        self.fence = fence

    async def run(self, host: str, step: NodeStep) -> StepResult:
        await self.fence.check()
        return await self.inner.run(host, step)

    async def run_many(self, hosts: Iterable[str], step: NodeStep) -> dict[str, StepResult]:
        await self.fence.check()
        return await self.inner.run_many(hosts, step)

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        await self.fence.check()
        await self.inner.verify_host_keys(hosts)

    async def close(self) -> None:
        await self.inner.close()

    def note(self, key: str, value: Any) -> None:
        self.inner.note(key, value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class FencedNodeAccess(NodeAccess):
    def __init__(self, inner: NodeAccess, fence: Fence) -> None:
        self.inner = inner
        self.fence = fence

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> StepExecutor:
        return FencedExecutor(self.inner.session(instance_id, hosts, pins), self.fence)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class FencedVims:
    """The VIM registry a hook gets: reads as they are, writes checked (a blocking read, like the
    registry's own writes)."""

    def __init__(self, inner: VimRegistry, fence: Fence) -> None:
        self.inner = inner
        self.fence = fence

    def list(self) -> list[Vim]:
        return self.inner.list()

    def get(self, vim_id: str) -> Vim | None:
        return self.inner.get(vim_id)

    def register(self, vim: Vim) -> Vim:
        self.fence.check_sync()
        return self.inner.register(vim)

    def update(self, vim: Vim) -> Vim:
        self.fence.check_sync()
        return self.inner.update(vim)

    def delete(self, vim_id: str) -> None:
        self.fence.check_sync()
        self.inner.delete(vim_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def fenced(job: Job, fence: Fence) -> Job:
    """Wrap the job's infrastructure driver now, and the node access, VIM registry and progress
    callback its hooks get (`job.edge`, used by `Stages.context`), in `fence`."""
    if job.infra is not None and not isinstance(job.infra, FencedInfra):
        job.infra = FencedInfra(job.infra, fence)

    def edge(port: Any) -> Any:
        if isinstance(port, NodeAccess):
            return FencedNodeAccess(port, fence)
        if callable(port):  # a hook's progress callback: a driver reports a step it carried out
            return fence.checked_progress(port)
        return FencedVims(port, fence)

    job.edge = edge
    return job
