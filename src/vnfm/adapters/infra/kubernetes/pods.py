"""The CNF's pods (its VNFCs, as Tacker reports CNF resources): which pods belong to which VDU's
workload, whether they are ready, and VNFC records that keep their ids across reads and heals."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.vnfd import Flavour
from vnfm.packaging.k8s_manifests import OWNER_LABEL, WORKLOAD_KINDS, Manifest

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


@dataclass
class Unit:
    """A VDU's Kubernetes object: a workload (its pods) or a bare Pod."""

    vdu_id: str
    manifest: Manifest
    pods: list[dict[str, Any]] = field(default_factory=list)


def units(flavour: Flavour, manifests: list[Manifest]) -> list[Unit]:
    """The manifests that are VDUs: a workload or Pod whose name is a VDU's name (or id)."""
    by_name: dict[str, str] = {}
    for vdu in flavour.vdus.values():
        by_name.setdefault(vdu.name, vdu.id)
        by_name.setdefault(vdu.id, vdu.id)
    return [Unit(by_name[m.name], m) for m in manifests
            if (m.kind in WORKLOAD_KINDS or m.kind == "Pod") and m.name in by_name]


def selector(m: Manifest) -> str:
    """The workload's pods: its selector, narrowed to its owner's pods (the template's owner label)."""
    labels = dict(((m.obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
    owner = ((((m.obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}).get(
        OWNER_LABEL)
    if owner:
        labels[OWNER_LABEL] = owner
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def pod_ready(pod: dict[str, Any]) -> bool:
    st = pod.get("status") or {}
    return st.get("phase") == "Running" and not (pod.get("metadata") or {}).get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def read_pods(api: client.ApiClient, u: Unit) -> list[dict[str, Any]]:
    core = client.CoreV1Api(api)
    ns = u.manifest.namespace or "default"
    if u.manifest.kind == "Pod":
        try:
            pod = api.sanitize_for_serialization(core.read_namespaced_pod(u.manifest.name, ns))
        except client.ApiException as e:
            if e.status == 404:
                return []
            raise
        mine = ((u.manifest.obj.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL)
        return [pod] if not mine or ((pod.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL) == mine else []
    found = core.list_namespaced_pod(ns, label_selector=selector(u.manifest)).items
    return sorted((api.sanitize_for_serialization(p) for p in found), key=lambda p: p["metadata"]["name"])


def workload_ready(api: client.ApiClient, u: Unit, replicas: int | None) -> bool:
    """The unit's pods are what its spec asks for, all Ready (none terminating)."""
    pods = u.pods
    if not all(pod_ready(p) for p in pods):
        return False
    if u.manifest.kind == "Pod":
        return len(pods) == 1
    if u.manifest.kind == "DaemonSet":
        ds = client.AppsV1Api(api).read_namespaced_daemon_set(u.manifest.name, u.manifest.namespace or "default")
        st = ds.status
        return st is not None and (st.number_ready or 0) == (st.desired_number_scheduled or 0) == len(pods)
    return replicas is None or len(pods) == replicas


def vnfcs(units_now: list[Unit], known: VnfResources, inherit: dict[str, list[str]] | None = None) -> VnfResources:
    """VNFC records of the pods: a pod already known keeps its VNFC id; a new pod of a VDU takes an
    id from `inherit[vdu]` (the VNFCs a heal replaced) before a new one."""
    by_pod = {v.server_id: v for v in known.vnfcs}
    spare = {k: list(v) for k, v in (inherit or {}).items()}
    seq = max((v.seq for v in known.vnfcs), default=0)
    out: list[Vnfc] = []
    for u in units_now:
        for p in u.pods:
            md, spec, st = p["metadata"], p.get("spec") or {}, p.get("status") or {}
            old = by_pod.get(md["name"])
            if old is not None:
                vid, vseq, created = old.id, old.seq, old.created_at
            else:
                ids = spare.get(u.vdu_id) or []
                vid = ids.pop(0) if ids else str(uuid.uuid4())
                prev = known.by_id(vid)
                seq += 1
                vseq, created = (prev.seq if prev else seq), str(md.get("creationTimestamp") or "")
            out.append(Vnfc(id=vid, vdu_id=u.vdu_id, server_id=md["name"], name=md["name"],
                            resource_type=u.manifest.kind, seq=vseq, created_at=created,
                            metadata={"namespace": md.get("namespace"), "node": spec.get("nodeName"),
                                      "podIP": st.get("podIP"), "uid": md.get("uid"),
                                      "workload": f"{u.manifest.kind}/{u.manifest.name}"}))
    return VnfResources(vnfcs=out, stack_id=known.stack_id)
