"""Building a kubeadm cluster: prepare every node, HAProxy + keepalived in HA, init the first
master, join the other masters one at a time and the workers in parallel, storage, VIM."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster import endpoint, etcd, nodes, registries, storage, vim
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather, pin
from vnfm.nodesteps.kubeadm import JoinInfo, KubeadmInit, KubeadmJoin, PrepareNode
from vnfm.nodesteps.kubernetes import LabelNode, WaitNodeReady


def cert_sans(c: Cluster, cp_endpoint: str, api_url: str) -> tuple[str, ...]:
    """The API server certificate's extra names: every master's addresses, the endpoint, the VIM's URL host."""
    return tuple(sorted({n.nic for n in c.masters} | {n.ssh for n in c.masters} | {cp_endpoint.rsplit(":", 1)[0]}
                        | {api_url.split("//", 1)[1].rsplit(":", 1)[0]}))


async def prepare(c: Cluster, on: Sequence[Node]) -> None:
    px = c.p.proxy
    no_proxy = ",".join([*px.no_proxy, *([px.k8s_node_cidr] if px.k8s_node_cidr else []),
                         c.p.master.pod_cidr, c.p.master.cluster_cidr, "127.0.0.1", "localhost"])
    await gather([c.ex.run(n.ssh, PrepareNode(n.name, c.p.kubernetes_version, px.http_proxy,
                                              px.https_proxy, no_proxy)) for n in on])


async def join(c: Cluster, admin: Node, n: Node, cp_endpoint: str) -> None:
    info = (await c.ex.run(admin.ssh, JoinInfo())).data
    await c.ex.run(n.ssh, KubeadmJoin(n.name, n.nic, cp_endpoint, n.master, info["token"],
                                      info["ca_cert_hash"], info.get("certificate_key") if n.master else None))
    await c.ex.run(admin.ssh, WaitNodeReady(n.name, c.p.node_ready_timeout))
    if not n.master:
        await c.ex.run(admin.ssh, LabelNode(n.name, (("node-role.kubernetes.io/worker", ""),)))


async def add_workers(c: Cluster, admin: Node, added: Sequence[Node], cp_endpoint: str) -> None:
    """New worker VMs become Ready nodes (parallel joins)."""
    await prepare(c, added)
    await registries.connect(c, added)
    await storage.nfs_clients(c, added)
    await gather([join(c, admin, n, cp_endpoint) for n in added])


async def install(c: Cluster) -> None:
    masters, workers = c.masters, c.workers
    ha = len(masters) > 1
    c.ctx.state["ha"] = ha
    await pin(c, c.nodes)
    cp_endpoint, api_url = await endpoint.endpoint(c)
    c.ctx.progress(f"installing Kubernetes {c.p.kubernetes_version}: {len(masters)} master(s), "
                   f"{len(workers)} worker(s), control-plane endpoint {cp_endpoint}")
    await prepare(c, c.nodes)
    await nodes.hosts(c, c.nodes)
    await registries.connect(c, c.nodes)
    if ha:
        await endpoint.set_lb(c, masters, masters)
        await endpoint.keepalived(c, masters)
    first = masters[0]
    await c.ex.run(first.ssh, KubeadmInit(first.name, first.nic, cp_endpoint, c.p.master.pod_cidr,
                                          c.p.master.cluster_cidr, c.p.kubernetes_version,
                                          cert_sans(c, cp_endpoint, api_url)))
    await c.ex.run(first.ssh, WaitNodeReady(first.name, c.p.node_ready_timeout))
    for m in masters[1:]:  # one at a time: each etcd member joins a healthy cluster
        await join(c, first, m, cp_endpoint)
    await gather([join(c, first, w, cp_endpoint) for w in workers])
    if ha:
        await etcd.check_members(c, first, masters)
    c.ctx.progress(f"{len(c.nodes)} node(s) Ready")
    await storage.setup(c, first)
    await vim.register(c, first, api_url)
