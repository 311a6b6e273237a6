"""Request-time checks of the Kubespray driver (before any occurrence or resource exists): the
parameters, the master/worker aspect ids and the CP names against the flavour, the package's
script path, the whole-dict rule of scale/heal overrides, scaling of workers only, and no heal of a
control plane.

Of the shared checks (cluster/checks.py) only those of keys this driver acts on run here: the
aspects and the CP names. The keys of the shared model this driver never acts on (UNSUPPORTED: a
storage server and NFS PVs, private registries, a cluster VIP, the kubeadm install script, ...)
are refused with a 422 naming each, so a request never ends COMPLETED having ignored them: Kubespray
configures those itself through its inventory. `lcm-operation-user-data(-class)` lie outside
k8s_cluster_installation_param and are accepted as everywhere in vnfm (the infra driver never runs
package Python: adapters/infra/openstack/hot.py)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster.checks import check_aspects, check_cps
from vnfm.adapters.mgmt.cluster.topology import role_vdus
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import PackageFiles

# the shared model's keys (adapters/mgmt/cluster/params.py) that the Kubespray driver never acts on
UNSUPPORTED: dict[str, tuple[str, ...]] = {
    "": ("script_path", "kubernetes_version", "node_ready_timeout", "storage_server", "pv_registration_params",
         "private_registry_connection_info"),
    "master_node": ("cluster_cp_name", "cluster_vip"),
    "proxy": ("k8s_node_cidr",),
}


def check_unsupported(extra: dict[str, Any] | None) -> None:
    """UnprocessableEntity naming every key of UNSUPPORTED the request's additionalParams give."""
    root = (extra or {}).get(K.KEY)
    if not isinstance(root, dict):
        return  # parse() names a missing or malformed root
    found: list[str] = []
    for parent, keys in UNSUPPORTED.items():
        d = root.get(parent) if parent else root
        if isinstance(d, dict):
            found += [f"{K.ROOT}.{parent + '.' if parent else ''}{k}" for k in keys if d.get(k) is not None]
    if found:
        raise UnprocessableEntity(f"{', '.join(found)}: not supported by the Kubespray driver (Kubespray "
                                  "configures the cluster itself through its inventory); remove "
                                  f"{'it' if len(found) == 1 else 'them'} from the request")


def check_flavour(kp: K.KubesprayParams, flavour: Flavour, package: PackageFiles | None) -> tuple[set[str], set[str]]:
    """(master VDUs, worker VDUs); UnprocessableEntity naming the key that does not fit."""
    cp = kp.cluster
    check_aspects(cp, flavour)
    names = [("master_node.ssh_cp_name", cp.master.ssh_cp_name), ("master_node.nic_cp_name", cp.master.nic_cp_name),
             ("worker_node.ssh_cp_name", cp.worker.ssh_cp_name), ("worker_node.nic_cp_name", cp.worker.nic_cp_name),
             ("external_lb_param.ssh_cp_name", kp.lb.ssh_cp_name)]
    check_cps(flavour, names, package)  # a CP, `<VDU or CP>_FloatingIP`, or a resource of the BaseHOT
    try:
        masters, workers = role_vdus(flavour, cp)
    except OperationFailed as e:
        raise UnprocessableEntity(e.detail) from None
    lb = kp.lb.ssh_cp_name
    lb_vdu = flavour.cps[lb].vdu_id if lb in flavour.cps else lb[: -len("_FloatingIP")]
    if lb_vdu in masters | workers:
        raise UnprocessableEntity(f"{K.ROOT}.external_lb_param.ssh_cp_name: '{lb}' belongs to VDU '{lb_vdu}', a "
                                  "Kubernetes node; the external load balancer needs a VDU of its own")
    if package is not None and not package.exists(kp.lb.script_path):
        raise UnprocessableEntity(f"{K.ROOT}.external_lb_param.script_path: '{kp.lb.script_path}' is not a file "
                                  "of the VNF package")
    return masters, workers


def validate(operation: str, request: dict[str, Any], instance: VnfInstance, flavour: Flavour,
             package: PackageFiles | None) -> None:
    op = str(operation)
    extra = request.get("additionalParams") or {}
    if op in (LcmOperation.INSTANTIATE, LcmOperation.SCALE, LcmOperation.HEAL):
        check_unsupported(extra)
    if op == LcmOperation.INSTANTIATE:
        check_flavour(K.parse(extra), flavour, package)
        return
    if op not in (LcmOperation.SCALE, LcmOperation.HEAL):
        return
    K.check_whole(extra)
    kp = K.parse(K.override(instance.additional_params, extra))
    masters, _ = check_flavour(kp, flavour, package)
    if op == LcmOperation.SCALE:
        aspect = request.get("aspectId")
        if kp.cluster.master.aspect_id is not None and aspect == kp.cluster.master.aspect_id:
            raise UnprocessableEntity(f"aspectId '{aspect}' is the master_node aspect: the Kubespray driver scales "
                                      "workers only (a single control plane); scale the worker aspect")
        if kp.cluster.worker.aspect_id is not None and aspect != kp.cluster.worker.aspect_id:
            raise UnprocessableEntity(f"aspectId '{aspect}' is not the worker_node aspect "
                                      f"'{kp.cluster.worker.aspect_id}': only workers scale")
        return
    ids = request.get("vnfcInstanceId")
    if not ids:
        return  # the entire cluster
    ids = [ids] if isinstance(ids, str) else list(ids)
    healed_masters = [v for v in instance.resources.vnfcs if v.id in ids and v.vdu_id in masters]
    if healed_masters:
        n = sum(1 for v in instance.resources.vnfcs if v.vdu_id in masters)
        names = ", ".join(v.name or v.id for v in healed_masters)
        why = ("the cluster has a single control plane (its etcd and API server would be lost)" if n == 1 else
               "the Kubespray driver does not replace control planes")
        raise UnprocessableEntity(f"healing master {names} is refused: {why}; heal the entire VNF instead (a heal "
                                  "request without vnfcInstanceId rebuilds the cluster and keeps its VIM)")
