"""The Docker private-registry VNF (`mgmt-drivers-private-registry`, seed 003): instantiate_end
installs Docker on the VM, loads the registry image from the package (or pulls it) and runs the
registry container; heal_end (one VNFC, or the entire VNF) does the same on the new VM. When the
registry's data lives on a volume that the heal kept, its images are still there; otherwise the
progress says that the registry starts empty.

Every hook is a sequence of idempotent typed node steps (nodesteps.registry_vnf, .storage) run
through the node access the composition root gives (`ctx.nodes`), so a retry converges. The SSH
password reaches only the node access (never a command line, a log or an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vnfm.adapters.mgmt.private_registry import params as R
from vnfm.adapters.mgmt.private_registry.install import Outcome, setup
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import VnfInstance
from vnfm.domain.resources import Vnfc
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import LcmContext, MgmtDriver, PackageFiles


def _params(ctx: LcmContext) -> R.RegistryParams:
    """This operation's parameters as the engine parsed them (the stored ones with a heal's keys)."""
    if not isinstance(ctx.params, R.PrivateRegistryRoot):
        raise OperationFailed(f"{R.ROOT}: the engine handed this hook no registry parameters")
    return ctx.params.registry


def _registry_vnfcs(ctx: LcmContext, rp: R.RegistryParams, vnfcs: Sequence[Vnfc]) -> list[Vnfc]:
    """The VNFCs that have the SSH CP (the registry VMs)."""
    cp = rp.ssh_cp_name.removesuffix("_FloatingIP")
    vdu = ctx.flavour.cps[cp].vdu_id if cp in ctx.flavour.cps else cp
    return [v for v in vnfcs if v.vdu_id == vdu]


def _record(ctx: LcmContext, v: Vnfc, out: Outcome) -> None:
    ctx.state.setdefault("registries", {})[v.id] = {"url": out.url, "address": out.address,
                                                   "on_volume": out.on_volume}


class PrivateRegistryDriver(MgmtDriver):
    name = "private-registry"
    declared = R.DECLARED

    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        R.validate(operation, request, instance, flavour, package)

    async def instantiate_end(self, ctx: LcmContext) -> None:
        rp = _params(ctx)
        vnfcs = _registry_vnfcs(ctx, rp, ctx.added or ctx.resources.vnfcs)
        if not vnfcs:
            raise OperationFailed(f"{R.ROOT}.ssh_cp_name: no VNFC of this VNF has CP '{rp.ssh_cp_name}'")
        for v in vnfcs:
            out = await setup(ctx, rp, v)
            _record(ctx, v, out)
            ctx.progress(f"private registry {v.name or v.id} answers at {out.url}/v2/")

    async def heal_start(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            ctx.state.pop("host_keys", None)

    async def heal_end(self, ctx: LcmContext) -> None:
        rp = _params(ctx)
        pins: dict[str, str] = ctx.state.setdefault("host_keys", {})
        if ctx.heal_entire:
            pins.clear()
            ctx.state.pop("registries", None)
            targets = _registry_vnfcs(ctx, rp, ctx.added or ctx.resources.vnfcs)
        else:
            targets = _registry_vnfcs(ctx, rp, ctx.healed)
        for v in targets:
            pins.pop(v.id, None)  # a new server: a new host key
            out = await setup(ctx, rp, v)
            _record(ctx, v, out)
            _heal_progress(ctx, v, out)


def _heal_progress(ctx: LcmContext, v: Vnfc, out: Outcome) -> None:
    name = v.name or v.id
    held = ", ".join(out.repositories) or "none"
    if out.on_volume and not out.fresh_volume and not ctx.heal_entire:
        ctx.progress(f"private registry {name} rebuilt at {out.url}: its data volume was kept "
                     f"({len(out.repositories)} repositories: {held})")
        return
    if ctx.heal_entire:
        why = "the entire VNF was re-created"
    elif out.on_volume:
        why = "its data volume was re-created"
    else:
        why = "its data was on the VM's disk"
    if out.repositories:  # e.g. a disk the infrastructure kept
        ctx.progress(f"private registry {name} rebuilt at {out.url} ({len(out.repositories)} repositories: {held})")
    else:
        ctx.progress(f"private registry {name} rebuilt at {out.url}: the registry starts empty ({why}; push "
                     "the images again)")
