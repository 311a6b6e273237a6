"""The control loop of a simulated cluster, run in the transaction of every API request (no
background thread, no sleep): nodes whose kubelet came up are Ready (the twin's rule), claims bind
to matching PersistentVolumes, workloads get their pods, pending pods are scheduled, and every
workload's status is brought up to date. Writes happen only when something changed."""

from __future__ import annotations

import re
import time
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi import accounts, budgets
from vnfm.adapters.infra.simulator.k8sapi.scheduling import schedule_pod
from vnfm.adapters.infra.simulator.k8sapi.services import allocate
from vnfm.adapters.infra.simulator.k8sapi.state import (
    DEFAULT_NAMESPACES,
    api_state,
    bump,
    new_uid,
    now_ts,
    objects,
)
from vnfm.adapters.infra.simulator.k8sapi.workloads import CONTROLLERS, garbage, status

_QUANTITY = re.compile(r"^([0-9.]+)([a-zA-Z]*)$")
_UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}


def quantity(text: Any) -> float:
    """A storage quantity ("1Gi", "500M", "1024") in bytes; 0 when it is not one."""
    m = _QUANTITY.match(str(text or "").strip())
    if not m or m.group(2) not in _UNITS:
        return 0.0
    try:
        return float(m.group(1)) * _UNITS[m.group(2)]
    except ValueError:
        return 0.0


def bootstrap(st: dict[str, Any]) -> None:
    """What a new cluster has: its namespaces and the `kubernetes` Service."""
    a = api_state(st)
    if a.get("bootstrapped"):
        return
    a["bootstrapped"] = True
    for ns in DEFAULT_NAMESPACES:
        objects(st, "namespaces").setdefault(ns, {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "uid": new_uid(), "creationTimestamp": now_ts(), "resourceVersion": bump(st),
                         "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    svc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "uid": new_uid(), "creationTimestamp": now_ts(),
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                                 "targetPort": 6443}]},
        "status": {"loadBalancer": {}}}
    allocate(st, "default/kubernetes", svc, None)
    svc["metadata"]["resourceVersion"] = bump(st)
    objects(st, "services")["default/kubernetes"] = svc


def _nodes(st: dict[str, Any]) -> bool:
    never = set((st.get("faults") or {}).get("never_ready") or [])
    changed = False
    for n in st["nodes"].values():
        if not n.get("ready") and n["name"] not in never and time.time() >= float(n.get("ready_at") or 0):
            n["ready"] = True
            changed = True
    return changed


def _fits(pv: dict[str, Any], pvc: dict[str, Any]) -> bool:
    spec, want = pv.get("spec") or {}, pvc.get("spec") or {}
    if want.get("volumeName") and want["volumeName"] != pv.get("_name"):
        return False
    if str(spec.get("storageClassName") or "") != str(want.get("storageClassName") or ""):
        return False
    if not set(want.get("accessModes") or []) <= set(spec.get("accessModes") or ["ReadWriteMany"]):
        return False
    size = quantity((spec.get("capacity") or {}).get("storage", "1Gi"))
    return size >= quantity(((want.get("resources") or {}).get("requests") or {}).get("storage"))


def _bind(st: dict[str, Any]) -> bool:
    changed = False
    for key, pvc in sorted(objects(st, "persistentvolumeclaims").items()):
        if (pvc.get("status") or {}).get("phase") == "Bound":
            continue
        free = sorted((quantity(((pv.get("spec") or {}).get("capacity") or {}).get("storage", "1Gi")), name)
                      for name, pv in st["pvs"].items()
                      if pv.get("phase", "Available") == "Available" and _fits({**pv, "_name": name}, pvc))
        if not free:
            continue
        name = free[0][1]
        pv = st["pvs"][name]
        pv.update(phase="Bound", claim=key, rv=bump(st))
        spec = pv.get("spec") or {}
        pvc["spec"]["volumeName"] = name
        pvc["status"] = {"phase": "Bound", "accessModes": spec.get("accessModes") or ["ReadWriteMany"],
                         "capacity": dict(spec.get("capacity") or {"storage": "1Gi"})}
        pvc["metadata"]["resourceVersion"] = bump(st)
        changed = True
    return changed


def release(st: dict[str, Any], claim_key: str) -> None:
    """A deleted claim gives its volume back as its reclaim policy says."""
    for name, pv in list(st["pvs"].items()):
        if pv.get("claim") != claim_key:
            continue
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy", "Retain")
        if policy == "Delete":
            del st["pvs"][name]
        else:
            pv.update(phase="Available" if policy == "Recycle" else "Released", claim=None, rv=bump(st))


def reconcile(st: dict[str, Any]) -> bool:
    """Bring the cluster to what its objects ask for; True when anything changed."""
    bootstrap(st)
    changed = _nodes(st)
    changed = _bind(st) or changed
    changed = garbage(st) or changed
    for plural, control in CONTROLLERS.items():
        for key, w in sorted(objects(st, plural).items()):
            changed = control(st, key, w) or changed
    for rec in list(st["pods"].values()):
        if rec.get("uid") and not rec.get("daemonset"):
            changed = schedule_pod(st, rec) or changed
    for plural in CONTROLLERS:
        for w in objects(st, plural).values():
            now = status(st, plural, w)
            if w.get("status") != now:
                w["status"] = now
                w["metadata"]["resourceVersion"] = bump(st)
                changed = True
    changed = accounts.reconcile(st, bump) or changed
    return budgets.refresh(st, bump) or changed
