"""The Kubespray cluster management driver (`mgmt-drivers-kubespray`, seed 002): the operator's
Ansible server runs Kubespray's playbooks on the VNF's VMs, an external load-balancer VM fronts
the API servers and the NodePorts and is the kubectl jump host, and the cluster is registered as a
Kubernetes VIM reached through it (TLS verified: the LB's addresses are in the API server
certificate, Kubespray's supplementary_addresses_in_ssl_keys).

Every hook is a sequence of idempotent typed node steps (nodesteps.kubespray, .lb, .kubernetes)
run through the node access the composition root gives (`ctx.nodes`), so a retry converges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vnfm.adapters.mgmt.cluster import backup, certs, etcd, vim
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, pin
from vnfm.adapters.mgmt.kubespray import lb, upgrade
from vnfm.adapters.mgmt.kubespray.install import install
from vnfm.adapters.mgmt.kubespray.masters import add_masters, remove_masters
from vnfm.adapters.mgmt.kubespray.nodes import add_workers, remove_workers, workers_only
from vnfm.adapters.mgmt.kubespray.params import DECLARED, ROOT
from vnfm.adapters.mgmt.kubespray.site import ansible_session, forget_vnfc_pins, open_site, params
from vnfm.adapters.mgmt.kubespray.validate import validate
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.certs import KUBESPRAY
from vnfm.nodesteps.kubernetes import UncordonNode
from vnfm.nodesteps.kubespray import KubesprayCheckInventory, KubesprayRemoveInventory
from vnfm.service.ports import LcmContext, MgmtDriver, PackageFiles


async def check_etcd(c: Cluster, m: Node, masters: Sequence[Node]) -> None:
    """After master `m`'s renewal: Kubespray's etcd (etcd_deployment_type host, its own certificates
    in /etc/ssl/etcd/ssl) has a member per master, every one healthy, asked on `m` with that host's
    Kubespray admin client certificate (admin-<node>.pem, as Kubespray's own etcdctl calls do)."""
    await etcd.check_members(c, m, masters, tls=upgrade.etcd_tls(m), by_name=False)


class KubesprayDriver(MgmtDriver):
    name = "kubespray"
    # the Ansible server and the inventory path are checked before instantiate creates any VM,
    # although seed 002's VNFD binds instantiate_end only; change_current_package_*: the upgrade
    # (Tacker's samples bind no hooks of change_vnfpkg)
    implicit_hooks = frozenset({"instantiate_start", "change_current_package_start", "change_current_package_end"})
    declared = DECLARED
    renews_certificates = True  # its heal_end renews certificates in place (service/heal_plan.py)

    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        if str(operation) == LcmOperation.CHANGE_VNFPKG:
            upgrade.check_change(instance, request.get("additionalParams") or {})
            return
        validate(operation, request, instance, flavour, package)

    # ------------------------------------------------------------------ instantiate / terminate
    async def instantiate_end(self, ctx: LcmContext) -> None:
        s = open_site(ctx)
        try:
            await install(s)
            await certs.record(s.c, KUBESPRAY)
        finally:
            await s.close()

    async def instantiate_start(self, ctx: LcmContext) -> None:
        """Before any VM exists: the Ansible server answers with its (now pinned) host key, has the
        Kubespray tree, and the inventory path holds no other cluster's inventory."""
        a = params(ctx).ansible
        ex = ansible_session(ctx, [a.ip_address])
        place = [a.ip_address, a.transferring_inventory_path]
        try:
            await ex.verify_host_keys([a.ip_address])
            res = await ex.run(a.ip_address, KubesprayCheckInventory(
                a.kubespray_root_path, a.transferring_inventory_path, ctx.instance.id, claim=True))
        except StepFailed as e:
            raise OperationFailed(f"{ROOT}.ansible: the Ansible server {a.ip_address} cannot take this cluster's "
                                  f"inventory: {e.reason} (nothing was created)") from None
        finally:
            await ex.close()
        places = ctx.state.setdefault("inventories", [])
        if place not in places:  # a rollback or terminate removes it
            places.append(place)
        layout = f" ({res.data['layout']})" if res.data.get("layout") else ""
        ctx.progress(f"kubespray: Ansible server {a.ip_address} checked: Kubespray at {a.kubespray_root_path}{layout}; "
                     f"inventory path {a.transferring_inventory_path} "
                     + ("claimed for this cluster (a copy of inventory/sample)" if res.data.get("created")
                        else "already this cluster's"))

    async def terminate_end(self, ctx: LcmContext) -> None:
        """The VIM goes; so does every inventory directory this cluster wrote (and nothing else on
        the Ansible server: not the Kubespray tree, not ~/.ssh/known_hosts)."""
        vim.deregister(ctx)
        a = params(ctx).ansible
        places = [tuple(p) for p in ctx.state.get("inventories") or []]
        if not places:
            return
        ex = ansible_session(ctx, [ip for ip, _ in places])
        try:
            for ip, path in places:
                try:
                    res = await ex.run(ip, KubesprayRemoveInventory(a.kubespray_root_path, path, ctx.instance.id))
                except (StepFailed, OperationFailed) as e:
                    if (ip, path) == (a.ip_address, a.transferring_inventory_path):
                        raise
                    why = e.reason if isinstance(e, StepFailed) else e.detail
                    ctx.progress(f"kubespray: inventory {path} on {ip} (written by a scale or heal with other "
                                 f"Ansible parameters) was not removed: {why}; remove it by hand")
                    continue
                if res.changed:
                    ctx.progress(f"kubespray: inventory {path} removed from the Ansible server {ip}")
        finally:
            await ex.close()
        ctx.state.pop("inventories", None)

    # ------------------------------------------------------------------ scale
    async def scale_start(self, ctx: LcmContext) -> None:
        if ctx.restored:  # rollback of a scale-in: the nodes it was draining or removing stay
            s = open_site(ctx)
            try:
                kept = s.c.of(ctx.restored)
                masters = [n for n in kept if n.master]
                if masters:  # those remove-node.yml already took out of etcd join again
                    ctx.progress(f"rolling back: control plane(s) {', '.join(n.name for n in masters)} stay")
                    await add_masters(s, masters)
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
            if any(n.master for n in removed):
                await remove_masters(s, removed)
            else:
                await remove_workers(s, removed)
        finally:
            await s.close()

    async def scale_end(self, ctx: LcmContext) -> None:
        s = open_site(ctx)
        try:
            added = [] if ctx.rollback else s.c.of(ctx.added)
            if any(n.master for n in added):
                await add_masters(s, added)
            else:
                await add_workers(s, added)
            await certs.record(s.c, KUBESPRAY)
        finally:
            await s.close()

    # ------------------------------------------------------------------ heal
    async def _renew(self, ctx: LcmContext) -> None:
        """Certificates renewed one master at a time (kubeadm-managed ones: Kubespray's etcd
        certificates are its own), etcd checked healthy between masters with Kubespray's etcd client
        certificate, then the LB's kubeconfig (the renewed admin.conf) and the VIM."""
        s = open_site(ctx)
        try:
            async def refresh() -> None:
                await lb.kubeconfig(s, s.c.admin())
                await vim.register(s.c, s.c.admin(), s.api_url, extra=lb.vim_extra(s))

            await pin(s.c, [s.lb_node])
            await certs.renew(s.c, KUBESPRAY, etcd_check=check_etcd, refresh=refresh)
        finally:
            await s.close()

    async def heal_start(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            ctx.state["heal_entire_vim_id"] = ctx.state.get("vim_id")
            forget_vnfc_pins(ctx)
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
        if (ctx.request.get("additionalParams") or {}).get("renew_certificates") is True:
            await self._renew(ctx)
            return
        if ctx.heal_entire:
            vim_id = ctx.state.get("heal_entire_vim_id") or ctx.state.get("vim_id")
            forget_vnfc_pins(ctx)
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
                await lb.reapply_cnf_parts(s)
            await certs.record(s.c, KUBESPRAY)
        finally:
            await s.close()


    # ------------------------------------------------------------------ change_vnfpkg (upgrade)
    async def change_current_package_start(self, ctx: LcmContext) -> None:
        """Phases snapshot and control_plane; with `ctx.rollback`, the undo (kubespray/upgrade.py)."""
        s = open_site(ctx)
        try:
            if ctx.rollback:
                await upgrade.roll_back(s, ctx.phase)
            else:
                await upgrade.upgrade(s, ctx.phase)
        finally:
            await s.close()

    async def change_current_package_end(self, ctx: LcmContext) -> None:
        """Phase workers."""
        await self.change_current_package_start(ctx)

    # ------------------------------------------------------------------ scheduled etcd backups
    def backup_schedule(self, instance: VnfInstance) -> tuple[float, int] | None:
        """The instance's own schedule (additionalParams.etcd_backup: interval, keep), if it has one."""
        b = DECLARED.parse(instance.additional_params).etcd_backup
        return (b.interval, b.keep) if b is not None else None

    async def etcd_backup(self, ctx: LcmContext, keep: int) -> dict[str, Any]:
        """A snapshot on a master (etcd as a systemd unit there, Kubespray's admin-<node> client
        certificate), copied into the VNFM's store, and its restore drill (cluster/backup.py)."""
        s = open_site(ctx)
        try:
            await pin(s.c, s.c.masters)
            return await backup.backup(s.c, keep, tls_of=upgrade.etcd_tls)
        finally:
            await s.close()
