"""Healing a kubeadm cluster's VNFCs: before the VMs are replaced (heal_start) the nodes leave the
cluster (workers drained; masters leave etcd and HAProxy with quorum kept); afterwards (heal_end)
the new VMs join again. The storage server's PVs are taken down and registered again. The only
master of a single-master cluster is restored from an etcd snapshot instead (restore.py)."""

from __future__ import annotations

from vnfm.adapters.mgmt.cluster import endpoint, etcd, nodes, registries, storage
from vnfm.adapters.mgmt.cluster.topology import Cluster, pin
from vnfm.adapters.mgmt.kubeadm import restore
from vnfm.adapters.mgmt.kubeadm.install import join, prepare
from vnfm.nodesteps.kubernetes import DeleteNode


async def before(c: Cluster) -> None:
    ctx = c.ctx
    healed = c.of(ctx.healed)
    hm = [n for n in healed if n.master]
    if hm and len(c.masters) == 1:
        await restore.before(c)
        return
    survivors = [m for m in c.masters if m not in hm]
    admin = c.admin(exclude=healed)
    await pin(c, survivors)
    if hm:  # counting the members observed unhealthy now as lost
        seen = await etcd.observe(c, admin)
        etcd.check_quorum([n.vnfc for n in c.masters], [n.vnfc for n in hm], seen.unhealthy)
    for w in (n for n in healed if not n.master):
        ctx.progress(f"draining and removing worker {w.name} before its VM is replaced")
        await nodes.remove_worker(c, admin, w)
    for m in hm:
        ctx.progress(f"removing master {m.name} from etcd, HAProxy and the cluster")
        await etcd.remove_member(c, admin, m)
        await etcd.check_members(c, admin, survivors)
        await endpoint.set_lb(c, survivors, survivors)
        await c.ex.run(admin.ssh, DeleteNode(m.name))
    if storage.storage_healed(c):
        await storage.heal_start(c, admin)


async def after(c: Cluster) -> None:
    ctx = c.ctx
    healed = c.of(ctx.healed)
    if len(c.masters) == 1 and any(n.master for n in healed):
        await restore.after(c)
        return
    admin = c.admin(exclude=healed)
    await pin(c, [admin, *healed], repin=healed)
    cp_endpoint, _ = await endpoint.endpoint(c)
    await prepare(c, healed)
    await nodes.hosts(c, healed)
    await registries.connect(c, healed)
    await storage.nfs_clients(c, healed)
    for n in healed:
        if n.master:
            await endpoint.set_lb(c, [n], c.masters)
            await endpoint.keepalived(c, [n])
        await join(c, admin, n, cp_endpoint)
        ctx.progress(f"{n.role} {n.name} re-joined and Ready")
    if any(n.master for n in healed):
        await endpoint.set_lb(c, c.masters, c.masters)
        await etcd.check_members(c, admin, c.masters)
    if storage.storage_healed(c):
        await storage.heal_end(c, admin)
