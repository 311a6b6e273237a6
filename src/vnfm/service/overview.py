"""What the web console shows, read from the records (no call to a cloud or a cluster): the fleet
at a glance (instances by state, the occurrences that need someone first, the clusters with their
node counts and versions) and an instance's parts (VNFCs, VIM, registries, storage, LB frontends).

Pure functions over domain objects; values are plain data for templates (the templates escape)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.model import InstantiationState, OpOcc, OpState, VnfInstance
from vnfm.domain.secrets import mask_secrets

# The order the fleet lists occurrences in: those waiting for an operator first.
ATTENTION = (OpState.FAILED_TEMP, OpState.ROLLING_BACK, OpState.PROCESSING, OpState.STARTING, OpState.FAILED)
CLUSTER_KEY = "k8s_cluster_installation_param"  # the kubeadm and Kubespray drivers' parameters


@dataclass
class Cluster:
    """A Kubernetes cluster a VNF instance is: its node counts by role and the version asked for."""

    masters: int
    workers: int
    version: str
    vim_id: str | None
    other: dict[str, int] = field(default_factory=dict)  # VNFCs of other VDUs (a storage server, ...)


def cluster_params(inst: VnfInstance) -> dict[str, Any] | None:
    found = inst.additional_params.get(CLUSTER_KEY)
    return found if isinstance(found, dict) else None


def cluster_of(inst: VnfInstance, default_version: str) -> Cluster | None:
    """The cluster `inst` built (None for a VNF that is no Kubernetes cluster, or not built yet);
    `default_version`: what the drivers install when the request names no version."""
    params = cluster_params(inst)
    facts = next((s for s in inst.driver_state.values() if isinstance(s, dict) and "master_vdus" in s), None)
    if params is None or facts is None or inst.instantiation_state != InstantiationState.INSTANTIATED:
        return None
    counts = inst.resources.counts()
    masters = sum(counts.get(v, 0) for v in facts.get("master_vdus", []))
    workers = sum(counts.get(v, 0) for v in facts.get("worker_vdus", []))
    roles = set(facts.get("master_vdus", [])) | set(facts.get("worker_vdus", []))
    version = str(params.get("kubernetes_version") or default_version)
    vim_id = facts.get("vim_id")
    return Cluster(masters, workers, version, vim_id if isinstance(vim_id, str) else None,
                   {k: n for k, n in sorted(counts.items()) if k not in roles})


def instances_by_state(instances: list[VnfInstance]) -> dict[str, int]:
    found = Counter(i.instantiation_state.value for i in instances)
    return {s.value: found.get(s.value, 0) for s in InstantiationState}


def attention_order(occs: list[OpOcc]) -> list[OpOcc]:
    """`occs` with those an operator must act on first, then running ones, the newest first in each."""
    rank = {s: n for n, s in enumerate(ATTENTION)}
    newest = sorted(occs, key=lambda o: o.state_entered_time, reverse=True)
    return sorted(newest, key=lambda o: rank.get(o.operation_state, len(ATTENTION)))


def driver_parts(inst: VnfInstance) -> dict[str, Any]:
    """The registries, storage and load-balancer frontends the instance's drivers configured
    (secrets masked: a registry's password never reaches a page)."""
    params = cluster_params(inst) or {}
    registries = params.get("private_registry_connection_info") or params.get("registries") or []
    storage = params.get("storage_server")
    pvs: list[str] = []
    frontends: list[dict[str, Any]] = []
    lb_address = None
    for state in inst.driver_state.values():
        if not isinstance(state, dict):
            continue
        pvs += [str(p) for p in state.get("pvs", []) if isinstance(p, str)]
        if isinstance(state.get("frontends"), list):
            frontends += [f for f in state["frontends"] if isinstance(f, dict)]
            lb_address = state.get("lb_address") or lb_address
    return mask_secrets({
        "registries": [r for r in registries if isinstance(r, dict)] if isinstance(registries, list) else [],
        "storage": storage if isinstance(storage, dict) else None,
        "pvs": pvs,
        "frontends": frontends,
        "lb_address": lb_address,
    })


def vnfc_rows(inst: VnfInstance) -> list[dict[str, Any]]:
    """One row per VNFC: VDU, name, server, addresses (floating first), volumes."""
    rows = []
    for v in sorted(inst.resources.vnfcs, key=lambda x: (x.vdu_id, x.seq)):
        addresses = [a for cp in v.cps for a in ([cp.floating_ip] if cp.floating_ip else []) + list(cp.ip_addresses)]
        rows.append({"id": v.id, "vdu": v.vdu_id, "name": v.name, "server": v.server_id,
                     "addresses": addresses, "volumes": [s.volume_id for s in v.storages if s.volume_id]})
    return rows
