"""Server-side printing (`Accept: ...;as=Table`): the columns `kubectl get` shows for each kind."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

Row = list[Any]


def age(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        then = dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "<unknown>"
    s = max(int((dt.datetime.now(dt.UTC) - then).total_seconds()), 0)
    m, h, d = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if h < 3:
        return f"{m}m"
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if d < 2:
        return f"{h}h"
    return f"{d}d{h % 24}h" if d < 8 and h % 24 else f"{d}d"


def _node(o: dict[str, Any]) -> Row:
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in o["status"].get("conditions") or [])
    status = ("Ready" if ready else "NotReady") + (",SchedulingDisabled" if o["spec"].get("unschedulable") else "")
    roles = sorted(k.split("/", 1)[1] for k in o["metadata"].get("labels") or {}
                   if k.startswith("node-role.kubernetes.io/"))
    return [status, ",".join(roles) or "<none>", age(o["metadata"].get("creationTimestamp")),
            o["status"].get("nodeInfo", {}).get("kubeletVersion", "")]


def _pod(o: dict[str, Any]) -> Row:
    cs = o["status"].get("containerStatuses") or []
    status = o["status"].get("phase", "")
    if status == "Pending" and o["spec"].get("nodeName"):
        status = "ContainerCreating"
    return [f"{sum(1 for c in cs if c.get('ready'))}/{len(cs)}", status, 0,
            age(o["metadata"].get("creationTimestamp")), o["status"].get("podIP") or "<none>",
            o["spec"].get("nodeName") or "<none>"]


def _ports(spec: dict[str, Any]) -> str:
    out = []
    for p in spec.get("ports") or []:
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        out.append(f"{p.get('port')}{node}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _service(o: dict[str, Any]) -> Row:
    s = o["spec"]
    return [s.get("type", "ClusterIP"), s.get("clusterIP") or "<none>", "<none>", _ports(s),
            age(o["metadata"].get("creationTimestamp"))]


def _deploy(o: dict[str, Any]) -> Row:
    st = o.get("status") or {}
    return [f"{st.get('readyReplicas', 0)}/{o['spec'].get('replicas', 1)}", st.get("updatedReplicas", 0),
            st.get("availableReplicas", 0), age(o["metadata"].get("creationTimestamp"))]


def _sts(o: dict[str, Any]) -> Row:
    st = o.get("status") or {}
    return [f"{st.get('readyReplicas', 0)}/{o['spec'].get('replicas', 1)}", age(o["metadata"].get("creationTimestamp"))]


def _ds(o: dict[str, Any]) -> Row:
    st = o.get("status") or {}
    sel = ",".join(f"{k}={v}" for k, v in ((o["spec"].get("template") or {}).get("spec") or {}).get(
        "nodeSelector", {}).items())
    return [st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0), st.get("numberReady", 0),
            st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0), sel or "<none>",
            age(o["metadata"].get("creationTimestamp"))]


def _pvc(o: dict[str, Any]) -> Row:
    st = o.get("status") or {}
    return [st.get("phase", ""), o["spec"].get("volumeName", ""), (st.get("capacity") or {}).get("storage", ""),
            ",".join(st.get("accessModes") or []), o["spec"].get("storageClassName") or "",
            age(o["metadata"].get("creationTimestamp"))]


def _pv(o: dict[str, Any]) -> Row:
    ref = o["spec"].get("claimRef")
    return [(o["spec"].get("capacity") or {}).get("storage", ""), ",".join(o["spec"].get("accessModes") or []),
            o["spec"].get("persistentVolumeReclaimPolicy", ""), o["status"].get("phase", ""),
            f"{ref['namespace']}/{ref['name']}" if ref else "", o["spec"].get("storageClassName") or "",
            age(o["metadata"].get("creationTimestamp"))]


def _plain(o: dict[str, Any]) -> Row:
    return [age(o["metadata"].get("creationTimestamp"))]


def _ns(o: dict[str, Any]) -> Row:
    return [(o.get("status") or {}).get("phase", "Active"), age(o["metadata"].get("creationTimestamp"))]


def _cm(o: dict[str, Any]) -> Row:
    return [len(o.get("data") or {}) + len(o.get("binaryData") or {}), age(o["metadata"].get("creationTimestamp"))]


def _secret(o: dict[str, Any]) -> Row:
    return [o.get("type", "Opaque"), len(o.get("data") or {}), age(o["metadata"].get("creationTimestamp"))]


def _sa(o: dict[str, Any]) -> Row:
    return [len(o.get("secrets") or []), age(o["metadata"].get("creationTimestamp"))]


def _pdb(o: dict[str, Any]) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [str(spec.get("minAvailable", "N/A")), str(spec.get("maxUnavailable", "N/A")),
            st.get("disruptionsAllowed", 0), age(o["metadata"].get("creationTimestamp"))]


def _crb(o: dict[str, Any]) -> Row:
    ref = o.get("roleRef") or {}
    return [f"{ref.get('kind', '')}/{ref.get('name', '')}", age(o["metadata"].get("creationTimestamp"))]


# kind -> (column names after Name; names listed in WIDE only show with -o wide, row)
COLUMNS: dict[str, tuple[list[str], Callable[[dict[str, Any]], Row]]] = {
    "nodes": (["Status", "Roles", "Age", "Version"], _node),
    "pods": (["Ready", "Status", "Restarts", "Age", "IP", "Node"], _pod),
    "services": (["Type", "Cluster-IP", "External-IP", "Port(s)", "Age"], _service),
    "deployments": (["Ready", "Up-to-date", "Available", "Age"], _deploy),
    "statefulsets": (["Ready", "Age"], _sts),
    "daemonsets": (["Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"], _ds),
    "persistentvolumeclaims": (["Status", "Volume", "Capacity", "Access Modes", "StorageClass", "Age"], _pvc),
    "persistentvolumes": (["Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "Age"],
                          _pv),
    "namespaces": (["Status", "Age"], _ns),
    "configmaps": (["Data", "Age"], _cm),
    "secrets": (["Type", "Data", "Age"], _secret),
    "serviceaccounts": (["Secrets", "Age"], _sa),
    "poddisruptionbudgets": (["Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], _pdb),
    "clusterrolebindings": (["Role", "Age"], _crb),
}
WIDE = {"IP", "Node"}


def table(plural: str, body: dict[str, Any]) -> dict[str, Any]:
    """A list or one object as a meta.k8s.io/v1 Table."""
    names, row = COLUMNS.get(plural, (["Age"], _plain))
    items = body.get("items") if "items" in body else [body]
    cols = [{"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}]
    cols += [{"name": n, "type": "string", "format": "", "description": n, "priority": 1 if n in WIDE else 0}
             for n in names]
    rows = [{"cells": [o["metadata"]["name"], *row(o)],
             "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": o["metadata"]}} for o in items or []]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": (body.get("metadata") or {}).get("resourceVersion", "")},
            "columnDefinitions": cols, "rows": rows}
