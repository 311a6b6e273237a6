"""The scheduler of a simulated cluster: a pending pod goes to a Ready, schedulable node whose taints
it tolerates and whose labels match its nodeSelector, the one with the fewest pods (then by name):
deterministic. A pod whose claims are not Bound stays Pending."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.state import bump
from vnfm.adapters.infra.simulator.k8sapi.store import CONTROL_PLANE_TAINT, claims_bound

# what the DaemonSet controller adds to its pods' tolerations
DAEMON_TOLERATIONS = [{"key": k, "operator": "Exists"} for k in (
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure")]


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t.get("key") == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and str(t.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def admits(node: dict[str, Any], spec: dict[str, Any], *, daemon: bool = False) -> bool:
    """Whether `node` (a twin record) admits a pod of `spec` (taints, nodeSelector; a DaemonSet's pods
    go to cordoned and NotReady nodes too)."""
    taints = node.get("taints")
    if taints is None:
        taints = [CONTROL_PLANE_TAINT] if node.get("role") == "master" else []
    tolerations = [*(spec.get("tolerations") or []), *(DAEMON_TOLERATIONS if daemon else [])]
    if any(t.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t) for t in taints):
        return False
    labels = node.get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    return daemon or (bool(node.get("ready")) and not node.get("cordoned"))


def pods_on(st: dict[str, Any], node: str) -> int:
    return sum(1 for p in st["pods"].values() if p.get("node") == node)


def schedule_pod(st: dict[str, Any], rec: dict[str, Any]) -> bool:
    """Bind a pending pod to a node; False when none fits (it stays Pending)."""
    if rec.get("node") in st["nodes"] or rec.get("mirror") or claims_bound(st, rec):
        return False
    spec = rec.get("spec") or {}
    fits = [n for n, node in st["nodes"].items() if admits(node, spec)]
    if not fits:
        if rec.get("node") is not None:
            rec["node"] = None
            rec["rv"] = bump(st)
            return True
        return False
    rec["node"] = min(fits, key=lambda n: (pods_on(st, n), n))
    rec["rv"] = bump(st)
    return True
