"""The external load balancer VM: HAProxy in front of the API servers (`*:8383` -> every master's
:6443) and a NodePort pool listing every node (the cluster's part of the LB's configuration, owner
"cluster": other owners' parts, e.g. a CNF's NodePort frontends, stay untouched), and the admin
kubeconfig that makes it the kubectl jump host."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vnfm.adapters.mgmt.cluster.topology import Node
from vnfm.adapters.mgmt.cnf_nodeport import part
from vnfm.adapters.mgmt.kubespray.site import API_PORT, LB_API_PORT, LB_OWNER, Site
from vnfm.nodesteps.kubespray import InstallKubeconfig, ReadKubeconfig
from vnfm.nodesteps.lb import Backend, Frontend, LbFrontends, ServerPool

NODEPORT_POOL = "nodeport"
VIM_POOL_KEY = "nodeport_pool"  # in the VIM's extra: where CNF NodePort frontends route (see cnf_nodeport)


def lb_addresses(s: Site) -> list[str]:
    """Every address of the LB VM (fixed and floating): a CNF's request may name any of them."""
    lb = s.lb_node
    found = {lb.ssh, lb.nic}
    for cp in lb.vnfc.cps:
        found.update(cp.ip_addresses)
        if cp.floating_ip:
            found.add(cp.floating_ip)
    return sorted(a for a in found if a)


def vim_extra(s: Site) -> dict[str, Any]:
    """What the cluster's VIM tells CNF drivers: the LB (its addresses) and its NodePort pool,
    which this driver keeps equal to the cluster's nodes through scale and heal."""
    return {VIM_POOL_KEY: {"addresses": lb_addresses(s), "owner": LB_OWNER, "name": NODEPORT_POOL}}


def frontends_step(masters: Sequence[Node], nodes: Sequence[Node]) -> LbFrontends:
    api = Frontend("k8s-api", LB_API_PORT, tuple(Backend(m.name, m.nic, API_PORT) for m in masters))
    pool = ServerPool(NODEPORT_POOL, tuple((n.name, n.nic) for n in nodes))
    return LbFrontends(LB_OWNER, (api,), pools=(pool,))


async def set_frontends(s: Site, nodes: Sequence[Node] | None = None) -> None:
    """The cluster's part of the LB: the API frontend and the NodePort pool of `nodes` (default:
    every node of the cluster)."""
    nodes = s.c.nodes if nodes is None else nodes
    lb = s.lb_node
    res = await s.c.ex.run(lb.ssh, frontends_step([n for n in nodes if n.master], nodes))
    if res.changed:
        s.ctx.progress(f"external LB {lb.ssh}: *:{LB_API_PORT} -> {len([n for n in nodes if n.master])} API "
                       f"server(s), NodePort pool of {len(nodes)} node(s) (HAProxy reloaded)")


async def kubeconfig(s: Site, admin: Node) -> None:
    """The admin kubeconfig of `admin`, carried through the VNFM's memory to the LB."""
    lb = s.lb_node
    data = (await s.c.ex.run(admin.ssh, ReadKubeconfig())).data
    res = await s.c.ex.run(lb.ssh, InstallKubeconfig(str(data["kubeconfig"]), f"https://{lb.nic}:{LB_API_PORT}"))
    if res.changed:
        s.ctx.progress(f"external LB {lb.ssh}: kubeconfig installed (kubectl jump host)")


async def reapply_cnf_parts(s: Site) -> None:
    """After the LB's VM was replaced: every CNF's part of it again (their NodePort frontends, routed
    to this cluster's pool), read from the CNFs' own records; a CNF whose part cannot be rebuilt
    here (it lists nodes, not the pool) is named as needing a heal."""
    vims, lb = s.ctx.vims, s.lb_node
    for d in vims.dependents(s.ctx.instance.id) if vims is not None else []:
        state = d.driver_state.get(part.STATE_KEY) or {}
        step = part.restore(d.instance_id, state, lb_addresses(s))
        if step is not None:
            await s.c.ex.run(lb.ssh, step)
            ports = ", ".join(str(f.port) for f in step.frontends)
            s.ctx.progress(f"external LB {lb.ssh}: NodePort frontend(s) {ports} of CNF {d.label} re-applied")
        elif part.on_lb(state, lb_addresses(s)):
            s.ctx.progress(f"warning: external LB {lb.ssh}: the NodePort frontends of CNF {d.label} list nodes, not "
                           "this cluster's pool, and were not re-applied: heal that CNF (entire)")


async def configure(s: Site) -> None:
    await s.c.ex.verify_host_keys([s.lb_node.ssh])
    await set_frontends(s)
    await kubeconfig(s, s.c.admin())
