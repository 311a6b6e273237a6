"""Request-time checks of the Kubespray driver (before any occurrence or resource exists): the
parameters, the master/worker aspect ids and the CP names against the flavour, the package's
script path, the whole-dict rule of scale/heal overrides, scaling of workers only, and no heal of a
control plane.

Of the shared checks (cluster/checks.py) only those of keys this driver acts on run here: the
aspects and the CP names. Keys of the kubeadm driver that Kubespray configures itself (a storage
server, private registries, a cluster VIP, ...) are not in this driver's schema (params.py): they
are refused with 400 as unknown keys before this runs."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster.checks import check_aspects, check_cps
from vnfm.adapters.mgmt.cluster.topology import role_vdus
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import PackageFiles


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
    if op != LcmOperation.INSTANTIATE and "etcd_backup" in extra:
        raise UnprocessableEntity("additionalParams.etcd_backup: the backup schedule is set at instantiate only "
                                  "(a later request would change it for that operation alone)")
    if op == LcmOperation.INSTANTIATE:
        check_flavour(K.parse(extra), flavour, package)
        return
    if op not in (LcmOperation.SCALE, LcmOperation.HEAL):
        return
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
