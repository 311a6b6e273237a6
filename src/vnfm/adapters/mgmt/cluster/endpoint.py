"""The cluster's control-plane endpoint: one master's API server, or in HA a VIP held by keepalived
in front of HAProxy on every master. The VIP is an address the infrastructure driver reserves
(`InfraDriver.reserve_address`): a management driver never picks addresses itself."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, address, gather
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.nodesteps.lb import Backend, HaproxySetBackends, KeepalivedVip

API_PORT = 6443
LB_PORT = 8383  # HAProxy on every master, in front of all API servers (HA)
VIP_PURPOSE = "control-plane-vip"


def cluster_address(c: Cluster, m: Node) -> str | None:
    try:
        return address(m.vnfc, c.p.master.cluster_cp_name, floating=True, what="cluster_cp_name")
    except OperationFailed:
        return None


async def endpoint(c: Cluster) -> tuple[str, str]:
    """(control-plane endpoint address:port, API URL for the VIM)."""
    masters = c.masters
    if not masters:
        raise OperationFailed("the cluster has no master node")
    if len(masters) == 1 and c.ctx.state.get("ha") is not True:
        m = masters[0]
        api = cluster_address(c, m) or m.ssh
        return f"{m.nic}:{API_PORT}", f"https://{api}:{API_PORT}"
    vip = await control_plane_vip(c)
    return f"{vip}:{LB_PORT}", f"https://{vip}:{LB_PORT}"


async def control_plane_vip(c: Cluster) -> str:
    """The HA VIP: `master_node.cluster_vip` when given; else the address of a dedicated VIP
    resource the package declares (cluster_cp_name naming e.g. Tacker's `vip_CP` port); else an
    address the infrastructure driver reserves on the network of `cluster_cp_name`."""
    st = c.ctx.state
    if st.get("vip"):
        return str(st["vip"])
    vip = c.p.master.cluster_vip
    if vip is None:
        name = c.p.master.cluster_cp_name
        own = {n.nic for n in c.masters} | {n.ssh for n in c.masters}
        for v in c.ctx.resources.vnfcs:  # a dedicated VIP resource (e.g. "vip_CP" floating IP name)
            addr = (v.metadata.get("floating_ip_resources") or {}).get(name)
            if addr and addr not in own:
                vip = addr
    if vip is None:
        ctx = c.ctx
        if ctx.infra is None or ctx.infra_ctx is None:
            raise OperationFailed("an HA cluster needs a VIP: set additionalParams.k8s_cluster_installation_param."
                                  "master_node.cluster_vip")
        try:
            vip = await ctx.infra.reserve_address(ctx.infra_ctx, c.p.master.cluster_cp_name, VIP_PURPOSE)
        except UnprocessableEntity as e:
            raise OperationFailed(f"an HA cluster needs a VIP: {e.detail} (additionalParams."
                                  "k8s_cluster_installation_param.master_node.cluster_vip)") from None
        ctx.progress(f"control-plane VIP {vip} reserved on the network of CP '{c.p.master.cluster_cp_name}'")
    st["vip"] = vip
    return vip


def backends(masters: Sequence[Node]) -> tuple[Backend, ...]:
    return tuple(Backend(m.name, m.nic, API_PORT) for m in masters)


async def set_lb(c: Cluster, on: Sequence[Node], backends_of: Sequence[Node]) -> None:
    step = HaproxySetBackends(backends(backends_of), frontend_port=LB_PORT)
    await gather([c.ex.run(m.ssh, step) for m in on])


async def keepalived(c: Cluster, masters: Sequence[Node], members: Sequence[Node] | None = None) -> None:
    """keepalived on `masters`: the VIP, a priority by the master's place in the cluster (the first
    highest), the other `members` (default: every master) as unicast peers."""
    vip = await control_plane_vip(c)
    order = {m.vnfc.id: i for i, m in enumerate(c.masters)}
    peers = c.masters if members is None else members
    await gather([c.ex.run(m.ssh, KeepalivedVip(vip, m.nic, max(1, 150 - 10 * order.get(m.vnfc.id, 0)),
                                                tuple(o.nic for o in peers if o is not m)))
                  for m in masters])
