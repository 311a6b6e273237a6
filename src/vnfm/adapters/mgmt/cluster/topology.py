"""Which VNFC is which node of the cluster, how the VNFM reaches it, and the session to act on it.

Shared by every Kubernetes-cluster driver (kubeadm, Kubespray). Roles come from the
`k8s_cluster_installation_param` (aspect ids and CP names), never from names or IP guesses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.domain.errors import OperationFailed
from vnfm.domain.resources import Vnfc
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.base import StepExecutor
from vnfm.nodesteps.kubernetes import node_name
from vnfm.service.ports import LcmContext, NodeHost, NodeLogin


@dataclass(frozen=True)
class Node:
    vnfc: Vnfc
    role: str  # "master" | "worker" | "storage" (the storage server: never a cluster node)
    name: str  # Kubernetes node name
    ssh: str  # address the VNFM reaches it at
    nic: str  # address the cluster uses

    @property
    def master(self) -> bool:
        return self.role == "master"


class Cluster:
    """The cluster's topology for one hook, and the node session to act on it."""

    def __init__(self, ctx: LcmContext, cp: P.ClusterParams, ex: StepExecutor, nodes: list[Node],
                 storage: Node | None = None) -> None:
        self.ctx = ctx
        self.p = cp
        self.ex = ex
        self.nodes = nodes  # cluster nodes only
        self.storage = storage  # the storage server (seed 001), when configured

    @property
    def masters(self) -> list[Node]:
        return [n for n in self.nodes if n.master]

    @property
    def workers(self) -> list[Node]:
        return [n for n in self.nodes if not n.master]

    def of(self, vnfcs: Sequence[Vnfc]) -> list[Node]:
        ids = {v.id for v in vnfcs}
        return [n for n in self.nodes if n.vnfc.id in ids]

    def admin(self, exclude: Sequence[Node] = ()) -> Node:
        """A master to run cluster-wide steps on (kubectl with the admin kubeconfig)."""
        ex = {n.vnfc.id for n in exclude}
        for m in self.masters:
            if m.vnfc.id not in ex:
                return m
        raise OperationFailed("no surviving master node to run cluster operations on")

    async def close(self) -> None:
        await self.ex.close()


# ============================================================================= roles and addresses
def role_vdus(flavour: Flavour, cp: P.ClusterParams) -> tuple[set[str], set[str]]:
    def vdus(node: P.NodeParams) -> set[str]:
        out: set[str] = set()
        for delta in flavour.aspect_deltas.get(node.aspect_id or "", {}).values():
            out |= set(delta)
        for cp_name in (node.ssh_cp_name, node.nic_cp_name):
            c = flavour.cps.get(cp_name)
            if c is not None:
                out.add(c.vdu_id)
        return out

    masters, workers = vdus(cp.master), vdus(cp.worker)
    both = masters & workers
    if both:
        raise OperationFailed(f"VDU(s) {', '.join(sorted(both))} are both master and worker by "
                              "k8s_cluster_installation_param (aspect_id / CP names)")
    if not masters:
        raise OperationFailed(f"no VDU of flavour '{flavour.id}' is a master: master_node.aspect_id "
                              f"'{cp.master.aspect_id}' has no deltas and CP '{cp.master.ssh_cp_name}' is unknown")
    return masters, workers


def address(v: Vnfc, cp_name: str, *, floating: bool, what: str) -> str:
    addr = v.address(cp_name, floating_first=floating)
    if addr is None:
        addr = (v.metadata.get("floating_ip_resources") or {}).get(cp_name)
    if not addr:
        raise OperationFailed(f"VNFC {v.name or v.id} has no address for {what} '{cp_name}'")
    return str(addr)


def topology(ctx: LcmContext, cp: P.ClusterParams, vnfcs: Sequence[Vnfc]) -> list[Node]:
    masters, workers = role_vdus(ctx.flavour, cp)
    out: list[Node] = []
    for v in sorted(vnfcs, key=lambda v: v.seq):
        if v.never_built:
            continue  # an interrupted scale-out left it without server or address: never a node
        if v.vdu_id in masters:
            np_: P.NodeParams = cp.master
            role = "master"
        elif v.vdu_id in workers:
            np_, role = cp.worker, "worker"
        else:
            continue  # e.g. a storage server: not a cluster node
        ssh = address(v, np_.ssh_cp_name, floating=True, what="ssh_cp_name")
        nic = address(v, np_.nic_cp_name, floating=False, what="nic_cp_name")
        out.append(Node(v, role, node_name(v.name or v.id), ssh, nic))
    return out


def storage_node(ctx: LcmContext, cp: P.ClusterParams, vnfcs: Sequence[Vnfc]) -> Node | None:
    """The storage server VNFC (seed 001): the VNFC of the VDU that has `storage_server.ssh_cp_name`."""
    ss = cp.storage_server
    if ss is None:
        return None
    key = f"{P.ROOT}.storage_server.ssh_cp_name"
    c = ctx.flavour.cps.get(ss.ssh_cp_name)
    if c is None:
        raise OperationFailed(f"{key}: CP '{ss.ssh_cp_name}' is not in flavour '{ctx.flavour.id}' (use a flavour "
                              "with a storage server VDU, e.g. simple_pv)")
    masters, workers = role_vdus(ctx.flavour, cp)
    if c.vdu_id in masters | workers:
        raise OperationFailed(f"{key}: CP '{ss.ssh_cp_name}' belongs to VDU '{c.vdu_id}', a Kubernetes node, "
                              "not a storage server")
    v = next((v for v in sorted(vnfcs, key=lambda v: v.seq) if v.vdu_id == c.vdu_id), None)
    if v is None:
        return None
    ssh = address(v, ss.ssh_cp_name, floating=True, what="storage_server.ssh_cp_name")
    nic = address(v, ss.ssh_cp_name, floating=False, what="storage_server.ssh_cp_name")
    return Node(v, "storage", node_name(v.name or v.id), ssh, nic)


# ============================================================================= opening the cluster
def params(ctx: LcmContext) -> P.ClusterParams:
    """The cluster parameters of this operation, as the engine parsed them for the hooks (the
    driver's declared merge rule; validated when the request arrived)."""
    root = ctx.params
    if not isinstance(root, P.KubeadmParams):
        raise OperationFailed(f"{P.ROOT}: the engine handed this hook no cluster parameters")
    for w in root.cluster.warnings:
        ctx.progress(w)
    return root.cluster


def login(cp: P.ClusterParams, n: Node) -> NodeLogin:
    p: Any = cp.master if n.master else cp.worker
    if n.role == "storage" and cp.storage_server is not None:
        p = cp.storage_server
    return NodeLogin(p.username, p.password, p.ssh_private_key)


def open_cluster(ctx: LcmContext, vnfcs: Sequence[Vnfc] | None = None,
                 extra_hosts: Sequence[NodeHost] = (), cp: P.ClusterParams | None = None) -> Cluster:
    """The cluster of this hook (nodes of `vnfcs`, default every VNFC) with a node session on the
    instance's VIM; the session also reaches `extra_hosts` (e.g. an external load balancer). `cp`:
    parameters a driver parsed itself (default: `params(ctx)`)."""
    cp = cp or params(ctx)
    nodes = topology(ctx, cp, ctx.resources.vnfcs if vnfcs is None else vnfcs)
    storage = storage_node(ctx, cp, ctx.resources.vnfcs)
    masters, workers = role_vdus(ctx.flavour, cp)
    ctx.state["master_vdus"] = sorted(masters)
    ctx.state["worker_vdus"] = sorted(workers)
    if storage is not None:
        ctx.state["storage_vdu"] = storage.vnfc.vdu_id
    if ctx.nodes is None:
        raise OperationFailed("no node access is available for this instance's VIM")
    hosts = [NodeHost(n.ssh, login(cp, n), n.vnfc.id) for n in [*nodes, *([storage] if storage else [])]]
    ex = ctx.nodes.session(ctx.instance.id, [*hosts, *extra_hosts], ctx.state.setdefault("host_keys", {}))
    return Cluster(ctx, cp, ex, nodes, storage)


async def pin(c: Cluster, nodes: Sequence[Node], repin: Sequence[Node] = ()) -> None:
    """Contact `nodes` now: a first contact pins each VNFC's host key, a later one must present it,
    so a changed key fails the hook before anything was changed anywhere. `repin`: VNFCs whose
    server was legitimately replaced (heal): their old pin is forgotten first."""
    pins: dict[str, str] = c.ctx.state.setdefault("host_keys", {})
    for n in repin:
        pins.pop(n.vnfc.id, None)
    await c.ex.verify_host_keys([n.ssh for n in nodes])


async def gather(aws: Sequence[Awaitable[Any]]) -> list[Any]:
    """Run in parallel; raise the first failure after all finished."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)
