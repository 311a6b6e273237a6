"""Request-time checks of the Kubespray driver (before any occurrence or resource exists): the
parameters, the master/worker aspect ids and the CP names against the flavour, the package's
script path, the whole-dict rule of scale/heal overrides, a scale of the master aspect (an odd
etcd size, the quorum rules of domain/etcd_quorum.py against etcd as the last operation saw it,
never the first control plane), and no heal of a control plane.

Of the shared checks (cluster/checks.py) only those of keys this driver acts on run here: the
aspects and the CP names. Keys of the kubeadm driver that Kubespray configures itself (a storage
server, private registries, a cluster VIP, ...) are not in this driver's schema (params.py): they
are refused with 400 as unknown keys before this runs."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster.checks import check_aspects, check_cps
from vnfm.adapters.mgmt.cluster.topology import role_vdus
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.domain import etcd_quorum
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.scaling import scaled_levels, target_counts
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.kubernetes import node_name
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
            check_master_scale(request, instance, flavour, masters)
            return
        if kp.cluster.worker.aspect_id is not None and aspect != kp.cluster.worker.aspect_id:
            raise UnprocessableEntity(f"aspectId '{aspect}' is not the worker_node aspect "
                                      f"'{kp.cluster.worker.aspect_id}' nor the master_node aspect")
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


def check_master_scale(request: dict[str, Any], instance: VnfInstance, flavour: Flavour, master_vdus: set[str]) -> None:
    """A scale of the master aspect: the resulting etcd size odd (Kubespray stops on an even one),
    the quorum rules with the members the last operation found unhealthy counted as lost (the hooks
    check again against etcd as it is then), and never the first control plane (Kubespray cannot
    remove the first host of kube_control_plane)."""
    aspect, out = str(request.get("aspectId")), request.get("type") == "SCALE_OUT"
    steps = int(request.get("numberOfSteps") or 1)
    levels = scaled_levels(flavour, instance.scale_levels, aspect, steps, out)
    before = target_counts(flavour, instance.instantiation_level_id, instance.scale_levels)
    after = target_counts(flavour, instance.instantiation_level_id, levels)
    n_before = sum(before.get(v, 0) for v in master_vdus)
    n_after = sum(after.get(v, 0) for v in master_vdus)
    if n_after % 2 == 0:
        raise UnprocessableEntity(f"aspectId '{aspect}': {n_before} -> {n_after} masters: Kubespray's etcd needs an "
                                  "odd number of members (it stops on an even one); scale by an even number of "
                                  "masters (1 -> 3 -> 5)")
    masters = sorted((v for v in instance.resources.vnfcs if v.vdu_id in master_vdus and not v.never_built),
                     key=lambda v: v.seq)
    names = {v.id: node_name(v.name or v.id) for v in masters}
    seen = (instance.driver_state.get("kubespray") or {}).get("etcd") or {}
    unhealthy = {str(x) for x in seen.get("unhealthy") or []}
    members = [names[v.id] for v in masters]
    if out:
        etcd_quorum.check_add(members, unhealthy, n_after - n_before)
        return
    extra = request.get("additionalParams") or {}
    chosen = extra.get("vnfc_instance_ids") or extra.get("vnfcInstanceIds")
    if isinstance(chosen, list):
        removing = [v for v in masters if v.id in chosen]
    else:  # the engine's choice: the newest
        removing = masters[len(masters) - (n_before - n_after):]
    if masters and masters[0] in removing:
        raise UnprocessableEntity(f"scaling in would remove {names[masters[0].id]}, the first host of "
                                  "kube_control_plane, which Kubespray cannot remove; choose other masters")
    etcd_quorum.removal_order(members, unhealthy, [names[v.id] for v in removing])
