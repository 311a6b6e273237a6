"""The health of one instance's VNFCs: the VIM's view of each server (its infrastructure driver's
`probe`: ERROR, SHUTOFF, gone, not answering) and, for a cluster VNF, its nodes' Ready condition
through the Kubernetes VIM the cluster registered (one `list_node` call). A VNFC is unhealthy
when either says so; the VIM's word comes first (a dead VM also makes its node NotReady)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vnfm.domain.alarms import CAUSE_NODE_ABSENT, CAUSE_NODE_NOT_READY, CAUSE_SERVER_DOWN, PerceivedSeverity
from vnfm.domain.errors import VnfmError
from vnfm.domain.model import Vim, VnfInstance
from vnfm.domain.vnfd import Vnfd
from vnfm.nodesteps.kubernetes import node_name
from vnfm.service.fm.alarms import Finding
from vnfm.service.ports import ClusterNodes, InfraContext, InfraDriver, NodeState


@dataclass(frozen=True)
class VnfcHealth:
    finding: Finding | None  # None: healthy
    role: str  # "master" / "worker" as the cluster's API says, "" when it is not a node


class HealthCheck:
    def __init__(self, infra: Mapping[str, InfraDriver], vim_of: Callable[[str | None], Vim | None],
                 vnfd_of: Callable[[str], Vnfd], nodes: ClusterNodes | None) -> None:
        self.infra = infra
        self.vim_of = vim_of
        self.vnfd_of = vnfd_of
        self.nodes = nodes

    async def check(self, inst: VnfInstance, cluster_vim: Vim | None, vim: Vim | None = None
                    ) -> dict[str, VnfcHealth]:
        """Every built VNFC of `inst` (VnfmError when the VIM cannot be asked at all); `vim`: the
        instance's, when the caller has it at hand."""
        vim = vim or await asyncio.to_thread(self.vim_of, inst.vim_id)
        if vim is None or vim.vim_type not in self.infra or not inst.flavour_id:
            raise VnfmError(f"VNF instance {inst.id}: its VIM {inst.vim_id} is not known")
        vnfd = await asyncio.to_thread(self.vnfd_of, inst.vnf_pkg_id)
        ctx = InfraContext(instance_id=inst.id, op_id="", vnfd=vnfd, flavour=vnfd.flavour(inst.flavour_id),
                           package=None, vim=vim, resources=inst.resources)
        driver = self.infra[vim.vim_type]
        vnfcs = [v for v in inst.resources.vnfcs if not v.never_built]
        nodes: dict[str, NodeState] | None = None
        if cluster_vim is not None and self.nodes is not None:
            try:
                nodes = await asyncio.to_thread(self.nodes, cluster_vim)
            except VnfmError:
                nodes = None  # the cluster's API does not answer: the VIM's view only
        down = await driver.probe_all(ctx, vnfcs)
        node_vdus = cluster_node_vdus(inst)
        out: dict[str, VnfcHealth] = {}
        for v, why in zip(vnfcs, down, strict=True):
            node = nodes.get(node_name(v.name or v.id)) if nodes is not None else None
            role = node.role if node is not None else ""
            handle = {"vimConnectionId": vim.id, "resourceId": v.server_id, "vimLevelResourceType": v.resource_type}
            if why is not None:
                out[v.id] = VnfcHealth(Finding(CAUSE_SERVER_DOWN, (why,), PerceivedSeverity.CRITICAL, handle), role)
            elif nodes is not None and node is None and v.vdu_id in node_vdus:
                out[v.id] = VnfcHealth(Finding(CAUSE_NODE_ABSENT, (
                    f"node {node_name(v.name or v.id)} is not in the cluster's API (it never joined, or it was "
                    "deleted)",), faulty_resource=handle), node_vdus[v.vdu_id])
            elif node is not None and not node.ready:
                out[v.id] = VnfcHealth(Finding(CAUSE_NODE_NOT_READY, (f"node {node_name(v.name or v.id)}: "
                                                                      f"{node.reason}",), faulty_resource=handle), role)
            else:
                out[v.id] = VnfcHealth(None, role)
        return out


def cluster_node_vdus(inst: VnfInstance) -> dict[str, str]:
    """VDU -> role of the VDUs a cluster driver made Kubernetes nodes (its state's `master_vdus` and
    `worker_vdus`, adapters/mgmt/cluster/topology.py); empty for any other VNF (a VNFC that is not
    a node, e.g. a storage server or a load balancer, is never expected in the cluster's API)."""
    out: dict[str, str] = {}
    for state in inst.driver_state.values():
        if isinstance(state, dict):
            out.update({str(vdu): "worker" for vdu in state.get("worker_vdus") or []})
            out.update({str(vdu): "master" for vdu in state.get("master_vdus") or []})
    return out
