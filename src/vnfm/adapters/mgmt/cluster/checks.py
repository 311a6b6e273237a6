"""Request-time checks of the cluster parameters against the flavour and the package, shared by the
Kubernetes-cluster drivers: what can be known from the request and the VNFD is refused when the
request arrives (422 naming the key), not after the VMs are built.

A CP name is accepted when it is a CP of the flavour, the floating IP of a VDU or CP
(`<id>_FloatingIP`, the seeds' convention), or a resource of one of the package's BaseHOT
templates (a floating IP or a VIP port the template declares itself).
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cluster.topology import role_vdus
from vnfm.domain.errors import OperationFailed, UnprocessableEntity, VnfmError
from vnfm.domain.vnfd import Flavour
from vnfm.packaging.tosca.yaml_safe import load_yaml_safely
from vnfm.service.ports import PackageFiles


def hot_resources(package: PackageFiles | None) -> set[str] | None:
    """The resource names of the package's HOT templates (None: no package to look in)."""
    if package is None:
        return None
    names: set[str] = set()
    for path in package.listing():
        if not path.lower().endswith((".yaml", ".yml")) or "hot" not in path.lower():
            continue
        try:
            doc: Any = load_yaml_safely(package.read(path), path)
        except (VnfmError, OSError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("resources"), dict):
            names |= {str(k) for k in doc["resources"]}
    return names


def cp_known(flavour: Flavour, name: str, resources: set[str] | None) -> bool:
    if name in flavour.cps:
        return True
    if name.endswith("_FloatingIP") and name[: -len("_FloatingIP")] in set(flavour.vdus) | set(flavour.cps):
        return True
    return resources is None or name in resources


def _unknown_cp(key: str, name: str, flavour: Flavour) -> UnprocessableEntity:
    known = ", ".join(sorted(flavour.cps)) or "none"
    return UnprocessableEntity(f"{P.ROOT}.{key}: '{name}' is neither a CP of flavour '{flavour.id}', the floating "
                               f"IP of one of its VDUs or CPs, nor a resource of the package's BaseHOT "
                               f"(CPs: {known})")


def check_cps(flavour: Flavour, names: list[tuple[str, str]], package: PackageFiles | None) -> None:
    """Each (key, CP name) names something the deployment will have; 422 naming the key otherwise."""
    resources: set[str] | None = None
    looked = False
    for key, name in names:
        if name in flavour.cps:
            continue
        if not looked:
            resources, looked = hot_resources(package), True
        if not cp_known(flavour, name, resources):
            raise _unknown_cp(key, name, flavour)


def check_aspects(cp: P.ClusterParams, flavour: Flavour) -> None:
    """master_node.aspect_id and worker_node.aspect_id, when given, are scaling aspects of the flavour."""
    for role, node in (("master_node", cp.master), ("worker_node", cp.worker)):
        if node.aspect_id is not None and node.aspect_id not in flavour.aspects:
            known = ", ".join(sorted(flavour.aspects)) or "none"
            raise UnprocessableEntity(f"{P.ROOT}.{role}.aspect_id: '{node.aspect_id}' is not a scaling aspect of "
                                      f"flavour '{flavour.id}' (aspects: {known})")


def check_cluster(cp: P.ClusterParams, flavour: Flavour, package: PackageFiles | None) -> tuple[set[str], set[str]]:
    """The shared parameters against the flavour and the package: aspects, CP names, the master and
    worker VDUs, the storage server, PV manifests and registry CA files. Returns (masters, workers)."""
    check_aspects(cp, flavour)
    names = [("master_node.ssh_cp_name", cp.master.ssh_cp_name), ("master_node.nic_cp_name", cp.master.nic_cp_name),
             ("master_node.cluster_cp_name", cp.master.cluster_cp_name),
             ("worker_node.ssh_cp_name", cp.worker.ssh_cp_name), ("worker_node.nic_cp_name", cp.worker.nic_cp_name)]
    names += [(f"{r.path.removeprefix(P.ROOT + '.')}.nfs_server_cp", r.nfs_server_cp) for r in cp.pv_registrations]
    check_cps(flavour, names, package)
    try:
        masters, workers = role_vdus(flavour, cp)
    except OperationFailed as e:
        raise UnprocessableEntity(f"{P.ROOT}: {e.detail}") from None
    _check_storage(cp, flavour, masters | workers)
    _check_files(cp, package)
    return masters, workers


def _check_storage(cp: P.ClusterParams, flavour: Flavour, nodes: set[str]) -> None:
    ss = cp.storage_server
    if ss is None:
        return
    key = f"{P.ROOT}.storage_server"
    c = flavour.cps.get(ss.ssh_cp_name)
    if c is None:
        raise UnprocessableEntity(f"{key}.ssh_cp_name: '{ss.ssh_cp_name}' is not a CP of flavour '{flavour.id}' "
                                  "(use a flavour with a storage server VDU, e.g. simple_pv)")
    if c.vdu_id in nodes:
        raise UnprocessableEntity(f"{key}.ssh_cp_name: '{ss.ssh_cp_name}' belongs to VDU '{c.vdu_id}', a Kubernetes "
                                  "node, not a storage server")
    vdu = flavour.vdus.get(c.vdu_id)
    have = set(vdu.storages) if vdu is not None and vdu.storages else set(flavour.storages)
    for i, v in enumerate(ss.volumes):
        if v.volume_resource_id not in have:
            raise UnprocessableEntity(f"{key}.cinder_volume_setup_params[{i}].volume_resource_id: "
                                      f"'{v.volume_resource_id}' is not a virtual storage of VDU '{c.vdu_id}' "
                                      f"(it has: {', '.join(sorted(have)) or 'none'})")


def _check_files(cp: P.ClusterParams, package: PackageFiles | None) -> None:
    if package is None:
        return
    files = [(f"{P.ROOT}.script_path", cp.script_path)] if cp.script_path else []
    files += [(f"{r.path}.pv_manifest_file_path", r.pv_manifest_file_path) for r in cp.pv_registrations]
    files += [(f"{r.path}.certificate_path", r.certificate_path) for r in cp.registries if r.certificate_path]
    for key, path in files:
        if not package.exists(path):
            raise UnprocessableEntity(f"{key}: '{path}' is not a file of the VNF package")
