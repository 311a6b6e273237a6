"""The kubeadm cluster management driver (`mgmt-drivers-kubernetes`): turns the VMs of a VNF
instance into a kubeadm Kubernetes cluster and keeps it whole through scale and heal (seeds 000,
004; cluster parts of 001/003).

Every hook is a sequence of idempotent typed node steps, so a retry re-runs the hook and converges.
Hosts are reached through the node access the composition root gives (`ctx.nodes`).
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster import backup, certs, endpoint, etcd, nodes, vim
from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cluster.checks import check_cluster
from vnfm.adapters.mgmt.cluster.topology import gather, open_cluster, pin
from vnfm.adapters.mgmt.kubeadm import cpscale, heal, restore, upgrade
from vnfm.adapters.mgmt.kubeadm.install import add_workers, install
from vnfm.adapters.mgmt.kubeadm.upgrade import check_added_version, check_change
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import LcmContext, MgmtDriver, PackageFiles, SnapshotStore


class KubeadmDriver(MgmtDriver):
    name = "kubeadm"
    declared = P.DECLARED
    renews_certificates = True  # its heal_end renews certificates in place (service/heal_plan.py)
    # Tacker's samples bind no change_current_package hooks: the driver of the other hooks runs them
    implicit_hooks = frozenset({"change_current_package_start", "change_current_package_end"})

    def __init__(self, snapshots: SnapshotStore | None = None) -> None:
        self.snapshots = snapshots  # the VNFM's etcd snapshots (read at request time: a single-master heal)

    # ------------------------------------------------------------------ request-time validation
    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        op = str(operation)
        extra = request.get("additionalParams") or {}
        if op != LcmOperation.INSTANTIATE and "etcd_backup" in extra:
            raise UnprocessableEntity("additionalParams.etcd_backup: the backup schedule is set at instantiate only "
                                      "(a later request would change it for that operation alone)")
        if op == LcmOperation.CHANGE_VNFPKG:
            check_change(P.ROOT, instance, extra)
            return
        if op not in (LcmOperation.INSTANTIATE, LcmOperation.SCALE, LcmOperation.HEAL):
            return
        cp = P.DECLARED.for_operation(op, instance.additional_params, extra).cluster
        check_cluster(cp, flavour, package)
        if op == LcmOperation.INSTANTIATE:
            return
        check_added_version(f"{P.ROOT}.kubernetes_version", instance, cp.kubernetes_version, op)
        if op == LcmOperation.SCALE:
            if cp.master.aspect_id is not None and request.get("aspectId") == cp.master.aspect_id:
                cpscale.validate(request, instance, flavour, cp, instance.driver_state.get(self.name) or {})
            return
        ids = request.get("vnfcInstanceId")
        if not ids:
            return  # entire cluster
        ids = [ids] if isinstance(ids, str) else list(ids)
        state = instance.driver_state.get(self.name) or {}
        master_vdus = set(state.get("master_vdus") or [])
        if not master_vdus:
            return  # unknown yet: decided in heal_start
        masters = [v for v in instance.resources.vnfcs if v.vdu_id in master_vdus]
        healed = [v for v in masters if v.id in ids]
        if healed and len(masters) == 1:
            restore.check_request(instance, masters, ids, state, self.snapshots)
        elif healed:
            etcd.check_quorum(masters, healed, etcd.recorded(state)[1])

    # ------------------------------------------------------------------ hooks
    async def instantiate_end(self, ctx: LcmContext) -> None:
        c = open_cluster(ctx)
        try:
            await install(c)
            await certs.record(c)
            await restore.capture_pki(c, c.masters[0], required=False)
        finally:
            await c.close()

    async def terminate_end(self, ctx: LcmContext) -> None:
        vim.deregister(ctx)  # the VIP, if one was reserved, went with the VNF's resources

    async def scale_start(self, ctx: LcmContext) -> None:
        if ctx.restored:
            await self._restore(ctx)
        if not ctx.removed:
            return
        c = open_cluster(ctx)
        try:
            removed = c.of(ctx.removed)
            admin = c.admin(exclude=removed)
            await pin(c, [admin])
            if any(n.master for n in removed):  # one at a time, etcd first (kubeadm/cpscale.py)
                await cpscale.scale_in(c, admin, [n for n in removed if n.master])
            workers = [n for n in removed if not n.master]
            verb = "rolling back: removing the joined" if ctx.rollback else "draining and removing"
            if workers:
                ctx.progress(f"{verb} node(s) {', '.join(n.name for n in workers)}")
            await gather([nodes.remove_worker(c, admin, n) for n in workers])
        finally:
            await c.close()

    async def _restore(self, ctx: LcmContext) -> None:
        """Rollback of a scale-in: the nodes it was draining stay (uncordoned)."""
        c = open_cluster(ctx)
        try:
            kept = c.of(ctx.restored)
            await cpscale.check_restorable(c, c.admin(exclude=kept), kept)
            ctx.progress(f"rolling back: uncordoning node(s) {', '.join(n.name for n in kept)}")
            await nodes.uncordon(c, c.admin(), kept)
        finally:
            await c.close()

    async def scale_end(self, ctx: LcmContext) -> None:
        c = open_cluster(ctx)
        try:
            added = [] if ctx.rollback else c.of(ctx.added)
            admin = c.admin(exclude=added)
            await pin(c, [admin, *added])
            if any(n.master for n in added):  # one at a time, as etcd learners (kubeadm/cpscale.py)
                await cpscale.scale_out(c, admin, [n for n in added if n.master])
            cp_endpoint, _ = await endpoint.endpoint(c)
            workers = [n for n in added if not n.master]
            if workers:
                await add_workers(c, admin, workers, cp_endpoint)
                ctx.progress(f"node(s) {', '.join(n.name for n in workers)} joined and Ready")
            await nodes.hosts(c, c.nodes)
            await cpscale.move_vim(c, admin)
            await certs.record(c)
            await restore.capture_pki(c, admin, required=False)
        finally:
            await c.close()

    async def heal_start(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            ctx.state["heal_entire_vim_id"] = ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            ctx.state.pop("vip", None)
            ctx.progress("healing the entire cluster: its VIM registration is kept and updated afterwards")
            return
        c = open_cluster(ctx)
        try:
            await heal.before(c)
        finally:
            await c.close()

    async def heal_end(self, ctx: LcmContext) -> None:
        if (ctx.request.get("additionalParams") or {}).get("renew_certificates") is True:
            c = open_cluster(ctx)
            try:
                await certs.renew(c)
                await restore.capture_pki(c, c.masters[0], required=False)
            finally:
                await c.close()
            return
        if ctx.heal_entire:
            vim_id = ctx.state.get("heal_entire_vim_id") or ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            ctx.state.pop("vip", None)
            if vim_id:
                ctx.state["vim_id"] = vim_id
            await self.instantiate_end(ctx)
            ctx.state.pop("heal_entire_vim_id", None)
            return
        c = open_cluster(ctx)
        try:
            await heal.after(c)
            await certs.record(c)
            await restore.capture_pki(c, c.admin(), required=False)
        finally:
            await c.close()


    # ------------------------------------------------------------------ change_vnfpkg (upgrade)
    async def change_current_package_start(self, ctx: LcmContext) -> None:
        """Phases snapshot and control_plane; with `ctx.rollback`, the undo (kubeadm/upgrade.py)."""
        c = open_cluster(ctx)
        try:
            await pin(c, c.nodes)
            if ctx.rollback:
                await upgrade.roll_back(c, ctx.phase)
            else:
                await upgrade.upgrade(c, ctx.phase)
            if ctx.phase == "control_plane":  # `kubeadm upgrade` renews the certificates (or a revert restores them)
                await certs.record(c)
                await restore.capture_pki(c, c.masters[0], required=False)
        finally:
            await c.close()

    async def change_current_package_end(self, ctx: LcmContext) -> None:
        """Phase workers."""
        await self.change_current_package_start(ctx)

    # ------------------------------------------------------------------ scheduled etcd backups
    def backup_schedule(self, instance: VnfInstance) -> tuple[float, int] | None:
        """The instance's own schedule (additionalParams.etcd_backup: interval, keep), if it has one."""
        b = P.DECLARED.parse(instance.additional_params).etcd_backup
        return (b.interval, b.keep) if b is not None else None

    async def etcd_backup(self, ctx: LcmContext, keep: int) -> dict[str, Any]:
        """A snapshot on a master, copied into the VNFM's store, and its restore drill
        (cluster/backup.py); outside any LCM operation (service/backups.py)."""
        c = open_cluster(ctx)
        try:
            await pin(c, c.masters)
            return await backup.backup(c, keep)
        finally:
            await c.close()
