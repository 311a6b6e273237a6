"""Built-in drivers that need no guest access.

`noop` does nothing. `vm-readiness` checks, at the end of every operation that adds or replaces
VNFCs, that each of those VNFCs' servers is up and reachable through the infrastructure driver's
probe, waiting with a deadline (not a fixed sleep). It stands in for `mgmt-drivers-kubernetes`
until the Kubernetes cluster driver is installed (see the Kubernetes driver issue).
"""

from __future__ import annotations

import asyncio
import time

from vnfm.domain.errors import OperationFailed
from vnfm.domain.resources import Vnfc
from vnfm.service.ports import LcmContext, MgmtDriver


class NoopDriver(MgmtDriver):
    name = "noop"


class VmReadinessDriver(MgmtDriver):
    name = "vm-readiness"

    def __init__(self, deadline: float = 60.0) -> None:
        self.deadline = deadline

    async def _wait(self, ctx: LcmContext, vnfcs: list[Vnfc]) -> None:
        if ctx.infra is None or ctx.infra_ctx is None or not vnfcs:
            return
        infra, ictx = ctx.infra, ctx.infra_ctx
        deadline = time.monotonic() + float(ctx.additional_params.get("vnfc_ready_timeout", self.deadline))

        async def one(v: Vnfc) -> None:
            delay = 0.02
            while True:
                reason = await infra.probe(ictx, v)
                if reason is None:
                    return
                if time.monotonic() >= deadline:
                    raise OperationFailed(f"VNFC {v.id} ({v.name or v.vdu_id}) is not ready: {reason}")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

        await asyncio.gather(*(one(v) for v in vnfcs))
        ctx.progress(f"{len(vnfcs)} VNFC(s) up and reachable")

    async def instantiate_end(self, ctx: LcmContext) -> None:
        await self._wait(ctx, ctx.added)

    async def scale_end(self, ctx: LcmContext) -> None:
        await self._wait(ctx, ctx.added)

    async def heal_end(self, ctx: LcmContext) -> None:
        await self._wait(ctx, ctx.healed or ctx.added)
