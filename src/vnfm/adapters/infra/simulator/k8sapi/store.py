"""Reading and writing API objects in the twin's state, whatever keeps them: the twin's own records
for nodes, pods and PersistentVolumes (shown as API objects, written back field by field), the
`api.objects` store for every other kind."""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import json
import time
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError
from vnfm.adapters.infra.simulator.k8sapi.state import bump, objects, rv, stable_uid, ts_of
from vnfm.adapters.infra.simulator.twin.base import sha

TWIN_KINDS = ("nodes", "pods", "persistentvolumes")
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
DEFAULT_CONTAINER = {"name": "main", "image": "registry.k8s.io/pause:3.9"}


def _version(st: dict[str, Any]) -> str:
    v = str((st.get("cluster") or {}).get("version") or "1.30.0")
    return v if v.startswith("v") else f"v{v}"


def _meta(md: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in md.items() if v not in (None, {}, [])}


# ------------------------------------------------------------------ nodes
def node_object(st: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    name = str(rec["name"])
    taints = rec.get("taints")
    if taints is None:
        taints = [CONTROL_PLANE_TAINT] if rec.get("role") == "master" else []
    taints = [dict(t) for t in taints]
    if rec.get("cordoned"):
        taints.append(dict(UNSCHEDULABLE_TAINT))
    ready = bool(rec.get("ready"))
    created = ts_of(float(rec.get("ready_at") or time.time()))
    version = f"v{rec['version']}" if rec.get("version") else _version(st)
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    if rec.get("cordoned"):
        spec["unschedulable"] = True
    cond = {"type": "Ready", "status": "True" if ready else "False",
            "reason": "KubeletReady" if ready else "KubeletNotReady",
            "message": "kubelet is posting ready status" if ready else "container runtime network not ready",
            "lastHeartbeatTime": created, "lastTransitionTime": created}
    addresses = [{"type": "InternalIP", "address": a} for a in rec.get("addresses") or []]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": _meta({"name": name, "uid": stable_uid("node", name, str(rec.get("server_id"))),
                           "labels": dict(rec.get("labels") or {}), "annotations": dict(rec.get("annotations") or {}),
                           "creationTimestamp": created, "resourceVersion": str(rec.get("rv") or rv(st))}),
        "spec": spec,
        "status": {"conditions": [cond], "addresses": [*addresses, {"type": "Hostname", "address": name}],
                   "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                   "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                   "nodeInfo": {"kubeletVersion": version, "kubeProxyVersion": version, "operatingSystem": "linux",
                                "architecture": "amd64", "osImage": "Ubuntu 22.04 LTS (simulated)",
                                "containerRuntimeVersion": "containerd://1.7.0", "kernelVersion": "5.15.0",
                                "machineID": sha(name)[:32], "systemUUID": str(rec.get("server_id") or ""),
                                "bootID": sha(f"{name}/{rec.get('server_id')}")[:32]}},
    }


def _node_write(st: dict[str, Any], rec: dict[str, Any], obj: dict[str, Any]) -> None:
    spec = obj.get("spec") or {}
    md = obj.get("metadata") or {}
    rec["cordoned"] = bool(spec.get("unschedulable"))
    rec["labels"] = dict(md.get("labels") or {})
    rec["annotations"] = dict(md.get("annotations") or {})
    taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT["key"]]
    default = [CONTROL_PLANE_TAINT] if rec.get("role") == "master" else []
    if [{k: t.get(k) for k in ("key", "effect")} for t in taints] != default or any(t.get("value") for t in taints):
        rec["taints"] = taints
    else:
        rec.pop("taints", None)
    rec["rv"] = bump(st)


# ------------------------------------------------------------------ pods
def pod_ip(st: dict[str, Any], key: str) -> str:
    try:
        net = ipaddress.ip_network(str((st.get("cluster") or {}).get("pod_cidr") or "10.244.0.0/16"), strict=False)
    except ValueError:
        net = ipaddress.ip_network("10.244.0.0/16")
    n = int(hashlib.sha256(key.encode()).hexdigest(), 16) % max(net.num_addresses - 2, 1) + 1
    return str(net.network_address + n)


def claims_bound(st: dict[str, Any], rec: dict[str, Any]) -> list[str]:
    """The PersistentVolumeClaims the pod uses that are not Bound."""
    pvcs = objects(st, "persistentvolumeclaims")
    out = []
    for v in (rec.get("spec") or {}).get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and (pvcs.get(f"{rec['namespace']}/{claim}") or {}).get("status", {}).get("phase") != "Bound":
            out.append(str(claim))
    return out


def pod_ready(st: dict[str, Any], rec: dict[str, Any]) -> bool:
    node = st["nodes"].get(rec.get("node") or "")
    never = (st.get("faults") or {}).get("pods_never_ready") or []
    return bool(node and node.get("ready")) and not claims_bound(st, rec) \
        and not any(str(rec["name"]).startswith(p) for p in never)


def pod_object(st: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    key = f"{rec['namespace']}/{rec['name']}"
    node = rec.get("node")
    scheduled = bool(node) and node in st["nodes"]
    ready = scheduled and pod_ready(st, rec)
    created = str(rec.get("created") or ts_of(time.time()))
    spec = copy.deepcopy(rec.get("spec") or {"containers": [DEFAULT_CONTAINER]})
    if node:
        spec["nodeName"] = node
    annotations = dict(rec.get("annotations") or {})
    if rec.get("mirror"):
        annotations.setdefault("kubernetes.io/config.mirror", sha(key)[:32])
    owner = rec.get("owner")
    refs = [{**owner, "controller": True, "blockOwnerDeletion": True}] if owner else []
    conds = [(t, ready if t in ("Ready", "ContainersReady") else scheduled)
             for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]
    state: dict[str, Any] = {"running": {"startedAt": created}} if scheduled else \
        {"waiting": {"reason": "ContainerCreating"}}
    status: dict[str, Any] = {
        "phase": "Running" if scheduled else "Pending",
        "conditions": [{"type": t, "status": "True" if ok else "False", "lastTransitionTime": created}
                       for t, ok in conds],
        "containerStatuses": [{"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": ready,
                               "restartCount": 0, "started": scheduled, "state": state}
                              for c in spec.get("containers") or []],
        "qosClass": "BestEffort", "startTime": created,
    }
    if scheduled:
        addrs = st["nodes"][node].get("addresses") or []
        status.update(hostIP=addrs[0] if addrs else "", podIP=pod_ip(st, key))
        status["podIPs"] = [{"ip": status["podIP"]}]
    elif claims_bound(st, rec):
        status["conditions"][0].update(reason="Unschedulable", message="pod has unbound immediate "
                                       f"PersistentVolumeClaims: {', '.join(claims_bound(st, rec))}")
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": _meta({"name": rec["name"], "namespace": rec["namespace"],
                           "uid": rec.get("uid") or stable_uid("pod", key),
                           "generateName": rec.get("generate_name"), "labels": dict(rec.get("labels") or {}),
                           "annotations": annotations, "ownerReferences": refs, "creationTimestamp": created,
                           "resourceVersion": str(rec.get("rv") or rv(st))}),
        "spec": spec, "status": status,
    }


def pod_record(st: dict[str, Any], obj: dict[str, Any], rec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The twin's record of pod `obj` (created through the API, or `rec` updated)."""
    md = obj["metadata"]
    spec = copy.deepcopy(obj.get("spec") or {})
    node = spec.pop("nodeName", None)
    owners = [o for o in md.get("ownerReferences") or [] if o.get("controller")] or md.get("ownerReferences") or []
    owner = {k: owners[0].get(k) for k in ("apiVersion", "kind", "name", "uid")} if owners else None
    out = dict(rec) if rec else {"name": md["name"], "namespace": md["namespace"], "node": node, "mirror": False,
                                 "uid": md["uid"], "created": md["creationTimestamp"],
                                 "generate_name": md.get("generateName")}
    out.update(labels=dict(md.get("labels") or {}), annotations=dict(md.get("annotations") or {}), spec=spec,
               owner=owner if rec is None else out.get("owner"), rv=bump(st))
    out["daemonset"] = bool(out.get("owner") and out["owner"].get("kind") == "DaemonSet") or \
        bool(rec and rec.get("daemonset"))
    return out


# ------------------------------------------------------------------ persistent volumes
def pv_object(st: dict[str, Any], name: str, rec: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(rec.get("spec") or {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                                             "persistentVolumeReclaimPolicy": "Retain"})
    if rec.get("nfs_server") or rec.get("nfs_path"):
        spec["nfs"] = {"server": rec.get("nfs_server"), "path": rec.get("nfs_path")}
    claim = rec.get("claim")
    if claim:
        ns, _, cname = str(claim).rpartition("/")
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns or "default", "name": cname}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": _meta({"name": name, "uid": rec.get("uid") or stable_uid("pv", name),
                               "labels": dict(rec.get("labels") or {}),
                               "annotations": dict(rec.get("annotations") or {}),
                               "creationTimestamp": rec.get("ts") or ts_of(0),
                               "resourceVersion": str(rec.get("rv") or rv(st))}),
            "spec": spec, "status": {"phase": rec.get("phase") or "Available"}}


def pv_record(st: dict[str, Any], obj: dict[str, Any], rec: dict[str, Any] | None) -> dict[str, Any]:
    md = obj["metadata"]
    spec = copy.deepcopy(obj.get("spec") or {})
    spec.pop("claimRef", None)
    nfs = spec.pop("nfs", None) or {}
    out = dict(rec) if rec else {"phase": "Available", "claim": None, "created": 1, "uid": md["uid"],
                                 "ts": md["creationTimestamp"]}
    out.update(nfs_server=str(nfs.get("server") or ""), nfs_path=str(nfs.get("path") or ""), spec=spec,
               manifest_sha256=sha(json.dumps(obj.get("spec"), sort_keys=True)),
               labels=dict(md.get("labels") or {}), annotations=dict(md.get("annotations") or {}), rv=bump(st))
    return out


# ------------------------------------------------------------------ any kind
def read(st: dict[str, Any], plural: str, key: str) -> dict[str, Any] | None:
    if plural == "nodes":
        rec = st["nodes"].get(key)
        return node_object(st, rec) if rec else None
    if plural == "pods":
        rec = st["pods"].get(key)
        return pod_object(st, rec) if rec else None
    if plural == "persistentvolumes":
        rec = st["pvs"].get(key)
        return pv_object(st, key, rec) if rec else None
    obj = objects(st, plural).get(key)
    return copy.deepcopy(obj) if obj is not None else None


def keys(st: dict[str, Any], plural: str) -> list[str]:
    source = {"nodes": st["nodes"], "pods": st["pods"], "persistentvolumes": st["pvs"]}.get(plural)
    return sorted(source if source is not None else objects(st, plural))


def write(st: dict[str, Any], plural: str, key: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Store `obj` (created or replaced) and return it as the API shows it now."""
    if plural == "nodes":
        rec = st["nodes"].get(key)
        if rec is None:
            raise ApiError(405, "MethodNotAllowed", "nodes register themselves when they join the cluster")
        _node_write(st, rec, obj)
    elif plural == "pods":
        st["pods"][key] = pod_record(st, obj, st["pods"].get(key))
    elif plural == "persistentvolumes":
        st["pvs"][key] = pv_record(st, obj, st["pvs"].get(key))
    else:
        obj["metadata"]["resourceVersion"] = bump(st)
        objects(st, plural)[key] = copy.deepcopy(obj)
    out = read(st, plural, key)
    assert out is not None
    return out


def remove(st: dict[str, Any], plural: str, key: str) -> None:
    if plural == "nodes":
        st["nodes"].pop(key, None)
        for pod in st["pods"].values():
            if pod.get("node") == key:
                pod["node"] = None
    elif plural == "pods":
        st["pods"].pop(key, None)
    elif plural == "persistentvolumes":
        rec = st["pvs"].get(key) or {}
        if rec.get("phase") == "Bound":
            raise ApiError(409, "Conflict", f'persistentvolumes "{key}" is bound to claim {rec.get("claim")}: '
                                            "delete the claim first")
        st["pvs"].pop(key, None)
    else:
        objects(st, plural).pop(key, None)
    bump(st)
