"""Control-plane scale of a kubeadm cluster (issue 27 item 4): the master aspect scales 1 -> 3 -> 5
and back in to 3, one master at a time, with etcd quorum kept at every step.

Policy (checked when the request arrives, from the etcd membership and health the driver last
observed; checked again against etcd itself before anything changes):
- the number of masters after the scale is odd (an even etcd tolerates no more failures than the
  odd size below it, with a larger quorum), and a scale-in keeps at least 3 (an HA control plane
  does not go back to a single master);
- a scale-out needs a quorum now (domain/etcd_quorum.check_add); a scale-in removes members one at
  a time, unhealthy ones first, each removal leaving a healthy quorum (removal_order, Cluster API's
  remediation rule: an unhealthy member counts as lost);
- 1 -> n makes the control plane HA: it needs the VIP, `master_node.cluster_vip`.

Scale-out: new masters join one at a time through the control-plane endpoint with
`kubeadm join --control-plane`; from Kubernetes 1.29 kubeadm's EtcdLearnerMode (beta, on by
default) adds the etcd member as a learner and promotes it once in sync, and the driver then
promotes any member still a learner (a no-op after kubeadm did) and checks every member votes and
answers; HAProxy (backends: the masters at that moment) and keepalived (priorities, peers) are
updated on every master after each join. Scale-in: each master leaves etcd first, then HAProxy and
keepalived on the others, then is drained and deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vnfm.adapters.mgmt.cluster import endpoint, etcd, nodes, registries, storage, vim
from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather, role_vdus
from vnfm.adapters.mgmt.kubeadm.install import join, prepare
from vnfm.domain import etcd_quorum
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import VnfInstance
from vnfm.domain.resources import Vnfc
from vnfm.domain.scaling import scaled_levels, target_counts
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.kubeadm import MoveControlPlaneEndpoint
from vnfm.nodesteps.kubernetes import WaitNodeReady
from vnfm.nodesteps.restore import KubeletServer

VIP_KEY = f"additionalParams.{P.ROOT}.master_node.cluster_vip"
VIM_PENDING = "vim_to_vip"


# ============================================================================= request time
def validate(request: dict[str, Any], instance: VnfInstance, flavour: Flavour, cp: P.ClusterParams,
             state: dict[str, Any]) -> None:
    """Refuse (422, with the numbers) a master-aspect scale that breaks the policy above."""
    out = request.get("type") == "SCALE_OUT"
    steps = request.get("numberOfSteps", 1)
    new_levels = scaled_levels(flavour, instance.scale_levels, str(request.get("aspectId")),
                               steps if isinstance(steps, int) else 1, out)
    master_vdus, _ = role_vdus(flavour, cp)
    before = _masters(target_counts(flavour, instance.instantiation_level_id, instance.scale_levels), master_vdus)
    after = _masters(target_counts(flavour, instance.instantiation_level_id, new_levels), master_vdus)
    what = f"{'scale-out' if out else 'scale-in'} of the masters {before} -> {after}"
    if after % 2 == 0:
        raise UnprocessableEntity(f"{what}: etcd needs an odd number of members (an even number tolerates no "
                                  "more failures than one member fewer); scale by an even number of masters")
    if not out and after < 3:
        raise UnprocessableEntity(f"{what}: an HA control plane does not go back to a single master (keep 3 or more)")
    if cp.master.cluster_vip is not None and state.get("vip") and str(cp.master.cluster_vip) != state["vip"]:
        raise UnprocessableEntity(f"{VIP_KEY}: '{cp.master.cluster_vip}' is not the control plane's VIP "
                                  f"{state['vip']} (a scale does not change it)")
    masters = [v for v in instance.resources.vnfcs if v.vdu_id in master_vdus]
    members, unhealthy = etcd.recorded(state)
    members = members or [etcd.member_name(v) for v in masters]
    try:
        if out:
            if before == 1 and state.get("ha") is not True and cp.master.cluster_vip is None and not state.get("vip"):
                raise UnprocessableEntity(f"{VIP_KEY}: is required to scale a single master out ({what}): the "
                                          "control plane becomes HA behind a keepalived VIP")
            etcd_quorum.check_add(members, unhealthy, after - before)
        else:
            removing = _removed(masters, before - after, request.get("additionalParams") or {})
            etcd_quorum.removal_order(members, unhealthy, [etcd.member_name(v) for v in removing])
    except UnprocessableEntity as e:
        if e.detail.startswith(VIP_KEY):
            raise
        sick = sorted(unhealthy & set(members))
        raise UnprocessableEntity(f"{what} with {', '.join(sick) or 'no member'} unhealthy (as last observed): "
                                  f"{e.detail}") from None


def _masters(counts: dict[str, int], master_vdus: set[str]) -> int:
    return sum(n for vdu, n in counts.items() if vdu in master_vdus)


def _removed(masters: Sequence[Vnfc], n: int, extra: dict[str, Any]) -> list[Vnfc]:
    """The masters a scale-in removes: those named in vnfcInstanceIds, else the newest (as the engine)."""
    ids = extra.get("vnfc_instance_ids") or extra.get("vnfcInstanceIds")
    newest = sorted(masters, key=lambda v: v.seq, reverse=True)
    if isinstance(ids, list):
        return [v for v in newest if v.id in ids]
    return newest[:n]


# ============================================================================= scale-out
async def scale_out(c: Cluster, admin: Node, added: Sequence[Node]) -> None:
    ctx = c.ctx
    new = {m.name for m in added}
    current = [m for m in c.masters if m.name not in new]
    seen = await etcd.observe(c, admin)
    base = [n for n in seen.members if n not in new]  # a retry finds the members an attempt added
    etcd_quorum.check_add(base, seen.unhealthy - new, len(added))
    for name in sorted(seen.learners & new):  # an interrupted attempt's learner: promote it first
        await etcd.promote(c, admin, next(m for m in added if m.name == name))
    converted = len(current) == 1 and ctx.state.get("ha") is not True
    if converted:
        await to_ha(c, current[0], added)
    cp_endpoint, _ = await endpoint.endpoint(c)
    await prepare(c, added)
    await nodes.hosts(c, c.nodes)
    await registries.connect(c, added)
    await storage.nfs_clients(c, added)
    for m in added:  # one at a time: each etcd member joins a cluster with a healthy quorum
        members = [*current, m]
        await endpoint.set_lb(c, [m], members)
        await endpoint.keepalived(c, [m], members)
        await join(c, admin, m, cp_endpoint)
        await etcd.promote(c, admin, m)
        await etcd.check_members(c, admin, members)
        await endpoint.set_lb(c, members, members)
        await endpoint.keepalived(c, members, members)
        ctx.progress(f"master {m.name} joined: etcd has {len(members)} voting members, all healthy (quorum "
                     f"{etcd_quorum.quorum(len(members))}); HAProxy and keepalived updated on {len(members)} masters")
        current = members


async def to_ha(c: Cluster, first: Node, added: Sequence[Node]) -> None:
    """The single control plane `first` becomes the first of an HA one behind the VIP."""
    vip = await endpoint.control_plane_vip(c)
    new_endpoint = f"{vip}:{endpoint.LB_PORT}"
    c.ctx.progress(f"turning the single control plane {first.name} into an HA one: VIP {vip}, HAProxy and "
                   f"keepalived on {first.name}, control-plane endpoint {new_endpoint}")
    await endpoint.set_lb(c, [first], [first])
    await endpoint.keepalived(c, [first], [first])
    masters = [first, *added]
    sans = sorted({vip} | {n.nic for n in masters} | {n.ssh for n in masters}
                  | ({a} if (a := endpoint.cluster_address(c, first)) else set()))
    await c.ex.run(first.ssh, MoveControlPlaneEndpoint(new_endpoint, tuple(sans)))
    c.ctx.state["ha"] = True
    c.ctx.state[VIM_PENDING] = True  # the VIM moves to the VIP at the end of the hook (a retry too)
    old = [n for n in c.nodes if n not in added]
    await gather([c.ex.run(n.ssh, KubeletServer(new_endpoint)) for n in old])
    await gather([c.ex.run(first.ssh, WaitNodeReady(n.name, c.p.node_ready_timeout)) for n in old])
    c.ctx.progress(f"control-plane endpoint moved to {new_endpoint}: API server certificate, kubeadm-config, "
                   "kubeconfigs, kube-proxy and cluster-info updated; every kubelet points at the VIP")


async def move_vim(c: Cluster, admin: Node) -> None:
    """After a 1 -> n scale (also its retry or rollback): the VIM reaches the API through the VIP."""
    if c.ctx.state.get(VIM_PENDING):
        _, api_url = await endpoint.endpoint(c)
        await vim.register(c, admin, api_url)
        c.ctx.state.pop(VIM_PENDING, None)


# ============================================================================= scale-in
async def scale_in(c: Cluster, admin: Node, removed: Sequence[Node]) -> None:
    """Each removed master leaves etcd (unhealthy first, quorum checked before anything changes),
    then HAProxy and keepalived of the others, then the cluster (drained, deleted)."""
    ctx = c.ctx
    seen = await etcd.observe(c, admin)
    present = [m.name for m in sorted(removed, key=lambda m: m.vnfc.seq, reverse=True) if m.name in seen.members]
    order = etcd_quorum.removal_order(seen.members, seen.unhealthy, present) if present else []
    left = [m for m in c.masters if m not in removed]
    members = list(seen.members)
    for m in sorted(removed, key=lambda m: order.index(m.name) if m.name in order else -1):
        if m.name in members:
            members.remove(m.name)
        healthy = len([n for n in members if n not in seen.unhealthy])
        ctx.progress(f"master {m.name} leaves etcd ({len(members)} members remain, {healthy} healthy, quorum "
                     f"{etcd_quorum.quorum(len(members))}), HAProxy/keepalived and the cluster")
        await etcd.remove_member(c, admin, m)
        await check_left(c, admin, members)
        await endpoint.set_lb(c, left, left)
        await endpoint.keepalived(c, left, left)
        await nodes.remove_worker(c, admin, m)  # drain then delete the node (control planes too)


async def check_left(c: Cluster, admin: Node, members: Sequence[str]) -> None:
    """After a removal: etcd has exactly `members`, and the healthy ones are a quorum."""
    seen = await etcd.observe(c, admin)
    if sorted(seen.members) != sorted(members):
        raise OperationFailed(f"etcd members are {sorted(seen.members)}, expected {sorted(members)}")
    healthy = len([n for n in seen.members if n not in seen.unhealthy])
    if healthy < etcd_quorum.quorum(len(seen.members)):
        raise OperationFailed(f"etcd lost its quorum: {healthy} of {len(seen.members)} members healthy")


async def check_restorable(c: Cluster, admin: Node, kept: Sequence[Node]) -> None:
    """A rolled back scale-in keeps its masters only if they are still etcd members."""
    masters = [m for m in kept if m.master]
    if not masters:
        return
    seen = await etcd.observe(c, admin)
    gone = [m.name for m in masters if m.name not in seen.members]
    if gone:
        raise OperationFailed(f"master(s) {', '.join(gone)} already left etcd: a rollback cannot bring them back; "
                              "retry the scale-in instead")
