"""What the state view (`vnfm sim state`, GET /sim/v1/state/{id}) shows of the objects created
through a simulated cluster's API: workloads with replicas, Services with their node ports, pods
with their node and readiness, and the names of everything else (never a Secret's or ConfigMap's data)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.kinds import WORKLOADS


def api_summary(st: dict[str, Any]) -> dict[str, Any]:
    objs: dict[str, dict[str, Any]] = (st.get("api") or {}).get("objects") or {}
    out: dict[str, Any] = {}
    for plural in WORKLOADS:
        out[plural] = {k: {"replicas": (w.get("spec") or {}).get("replicas"),
                           "ready": (w.get("status") or {}).get("readyReplicas",
                                                               (w.get("status") or {}).get("numberReady", 0))}
                       for k, w in sorted((objs.get(plural) or {}).items())}
    out["services"] = {k: {"type": (s.get("spec") or {}).get("type", "ClusterIP"),
                           "node_ports": [p["nodePort"] for p in (s.get("spec") or {}).get("ports") or []
                                          if p.get("nodePort")]}
                       for k, s in sorted((objs.get("services") or {}).items())}
    for plural in ("namespaces", "configmaps", "secrets", "persistentvolumeclaims"):
        out[plural] = sorted(objs.get(plural) or {})
    nodes = st.get("nodes") or {}
    out["pods"] = {k: {"node": p.get("node"), "node_ready": bool((nodes.get(p.get("node") or "") or {}).get("ready"))}
                   for k, p in sorted((st.get("pods") or {}).items()) if p.get("uid")}
    return out
