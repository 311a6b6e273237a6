"""The Kubespray cluster management driver (`mgmt-drivers-kubespray`, seed 002): the operator's
Ansible server runs Kubespray's playbooks on the VNF's VMs, an external load-balancer VM fronts
the API servers and the NodePorts and is the kubectl jump host, and the cluster is registered as a
Kubernetes VIM reached through it (TLS verified: the LB's addresses are in the API server
certificate, Kubespray's supplementary_addresses_in_ssl_keys).

Every hook is a sequence of idempotent typed node steps (nodesteps.kubespray, .lb, .kubernetes)
run through the node access the composition root gives (`ctx.nodes`), so a retry converges.
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster import vim
from vnfm.adapters.mgmt.cluster.topology import pin
from vnfm.adapters.mgmt.kubespray import lb
from vnfm.adapters.mgmt.kubespray.install import install
from vnfm.adapters.mgmt.kubespray.nodes import add_workers, remove_workers, workers_only
from vnfm.adapters.mgmt.kubespray.site import open_site, params
from vnfm.adapters.mgmt.kubespray.validate import validate
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.kubernetes import UncordonNode
from vnfm.nodesteps.kubespray import KubesprayRemoveInventory
from vnfm.service.ports import LcmContext, MgmtDriver, NodeHost, NodeLogin, PackageFiles


class KubesprayDriver(MgmtDriver):
    name = "kubespray"

    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        validate(operation, request, instance, flavour, package)

    # ------------------------------------------------------------------ instantiate / terminate
    async def instantiate_end(self, ctx: LcmContext) -> None:
        s = open_site(ctx)
        try:
            await install(s)
        finally:
            await s.close()

    async def terminate_end(self, ctx: LcmContext) -> None:
        vim.deregister(ctx)
        kp = params(ctx)
        a = kp.ansible
        if ctx.nodes is None:
            raise OperationFailed("no node access is available for this instance's VIM")
        ex = ctx.nodes.session(ctx.instance.id, [NodeHost(a.ip_address, NodeLogin(a.username, a.password,
                                                                                    a.ssh_private_key))],
                               ctx.state.setdefault("host_keys", {}))
        try:
            res = await ex.run(a.ip_address, KubesprayRemoveInventory(a.kubespray_root_path,
                                                                      a.transferring_inventory_path, ctx.instance.id))
        finally:
            await ex.close()
        if res.changed:
            ctx.progress(f"kubespray: inventory {a.transferring_inventory_path} removed from the Ansible server "
                         f"{a.ip_address}")

    # ------------------------------------------------------------------ scale
    async def scale_start(self, ctx: LcmContext) -> None:
        if ctx.restored:  # rollback of a scale-in: the nodes it was draining stay (uncordoned)
            s = open_site(ctx)
            try:
                kept = s.c.of(ctx.restored)
                ctx.progress(f"rolling back: uncordoning node(s) {', '.join(n.name for n in kept)}")
                await pin(s.c, [s.lb_node])
                for n in kept:
                    await s.c.ex.run(s.lb_node.ssh, UncordonNode(n.name))
            finally:
                await s.close()
        if not ctx.removed:
            return
        s = open_site(ctx)
        try:
            removed = s.c.of(ctx.removed)
            verb = "rolling back: removing the added" if ctx.rollback else "removing"
            ctx.progress(f"{verb} node(s) {', '.join(n.name for n in removed)}")
            await remove_workers(s, removed)
        finally:
            await s.close()

    async def scale_end(self, ctx: LcmContext) -> None:
        s = open_site(ctx)
        try:
            await add_workers(s, [] if ctx.rollback else s.c.of(ctx.added))
        finally:
            await s.close()

    # ------------------------------------------------------------------ heal
    async def heal_start(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            ctx.state["heal_entire_vim_id"] = ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            ctx.progress("healing the entire cluster: the inventory is replaced and the VIM updated in place")
            return
        s = open_site(ctx)
        try:
            healed = s.c.of(ctx.healed)
            workers_only(healed, "healing")
            await remove_workers(s, healed)
        finally:
            await s.close()

    async def heal_end(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            vim_id = ctx.state.get("heal_entire_vim_id") or ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            if vim_id:
                ctx.state["vim_id"] = vim_id
            await self.instantiate_end(ctx)
            ctx.state.pop("heal_entire_vim_id", None)
            return
        s = open_site(ctx)
        try:
            lb_healed = s.lb is not None and s.lb.vnfc.id in {v.id for v in ctx.healed}
            if lb_healed:  # its server was replaced: the old pin goes before anything contacts it
                await pin(s.c, [s.lb_node], repin=[s.lb_node])
            await add_workers(s, s.c.of(ctx.healed))
            if lb_healed:
                await lb.configure(s)
                ctx.progress(f"external LB {s.lb_node.ssh} configured again after its VM was replaced")
        finally:
            await s.close()

