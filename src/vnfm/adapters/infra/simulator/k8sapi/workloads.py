"""What the workload controllers of a cluster do, played at once on every reconcile: Deployments
keep `replicas` pods of their current template (a changed template replaces them; a scale-in
removes the pods with the lowest `controller.kubernetes.io/pod-deletion-cost` first, then
unscheduled / not ready / newest ones, as a ReplicaSet does), StatefulSets keep pods <name>-0..n-1
(in order; claims from volumeClaimTemplates), DaemonSets one pod per node that admits them."""

from __future__ import annotations

import copy
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.scheduling import admits, pods_on, schedule_pod
from vnfm.adapters.infra.simulator.k8sapi.state import (
    bump,
    new_uid,
    next_seq,
    now_ts,
    objects,
    stable_uid,
    suffix,
    template_hash,
)
from vnfm.adapters.infra.simulator.k8sapi.store import pod_ready

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
KINDS = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}


def owned(st: dict[str, Any], uid: str) -> dict[str, dict[str, Any]]:
    return {k: p for k, p in st["pods"].items() if (p.get("controller") or {}).get("uid") == uid}


def _new_pod(st: dict[str, Any], plural: str, key: str, w: dict[str, Any], name: str,
             labels: dict[str, str], node: str | None = None) -> str:
    ns = w["metadata"]["namespace"]
    tmpl = w["spec"].get("template") or {}
    tmd = tmpl.get("metadata") or {}
    uid = w["metadata"]["uid"]
    if plural == "deployments":
        h = labels["pod-template-hash"]
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{w['metadata']['name']}-{h}",
                 "uid": stable_uid(uid, h)}
    else:
        owner = {"apiVersion": "apps/v1", "kind": KINDS[plural], "name": w["metadata"]["name"], "uid": uid}
    spec = copy.deepcopy(tmpl.get("spec") or {})
    spec.pop("nodeName", None)
    pkey = f"{ns}/{name}"
    st["pods"][pkey] = {
        "name": name, "namespace": ns, "node": node, "labels": {**(tmd.get("labels") or {}), **labels},
        "annotations": dict(tmd.get("annotations") or {}), "daemonset": plural == "daemonsets", "mirror": False,
        "uid": new_uid(), "owner": owner, "controller": {"plural": plural, "key": key, "uid": uid},
        "spec": spec, "created": now_ts(), "rv": bump(st),
    }
    if node is None:
        schedule_pod(st, st["pods"][pkey])
    return pkey


def _removal_rank(st: dict[str, Any], p: dict[str, Any]) -> tuple[int, int, int, str, str]:
    try:
        cost = int((p.get("annotations") or {}).get(DELETION_COST, 0))
    except ValueError:
        cost = 0
    # a newer pod goes first: invert the creation time's characters for a descending sort
    newest_first = "".join(chr(0x10FFFF - ord(c)) for c in str(p.get("created") or ""))
    return (1 if p.get("node") else 0, 1 if pod_ready(st, p) else 0, cost, newest_first, str(p["name"]))


def deployment(st: dict[str, Any], key: str, d: dict[str, Any]) -> bool:
    h = template_hash(d["spec"].get("template"))
    mine = owned(st, d["metadata"]["uid"])
    changed = False
    for k, p in list(mine.items()):
        if p["labels"].get("pod-template-hash") != h:  # rolling update, played at once
            del st["pods"][k]
            del mine[k]
            changed = True
    want = int(d["spec"].get("replicas", 1))
    name = d["metadata"]["name"]
    while len(mine) < want:
        pod = f"{name}-{h}-{suffix(d['metadata']['uid'] + str(next_seq(st)))}"
        k = _new_pod(st, "deployments", key, d, pod, {"pod-template-hash": h})
        mine[k] = st["pods"][k]
        changed = True
    if len(mine) > want:
        for k in sorted(mine, key=lambda k: _removal_rank(st, mine[k]))[: len(mine) - want]:
            del st["pods"][k]
        changed = True
    return changed


def statefulset(st: dict[str, Any], key: str, s: dict[str, Any]) -> bool:
    ns, name = s["metadata"]["namespace"], s["metadata"]["name"]
    h = template_hash(s["spec"].get("template"))
    revision = f"{name}-{h}"
    want = int(s["spec"].get("replicas", 1))
    ordered = s["spec"].get("podManagementPolicy", "OrderedReady") != "Parallel"
    changed = False
    for k, p in list(owned(st, s["metadata"]["uid"]).items()):
        ordinal = str(p["name"]).rsplit("-", 1)[-1]
        if not ordinal.isdigit() or int(ordinal) >= want or p["labels"].get("controller-revision-hash") != revision:
            del st["pods"][k]
            changed = True
    for i in range(want):
        pod = f"{name}-{i}"
        pkey = f"{ns}/{pod}"
        if pkey not in st["pods"]:
            _claims(st, s, i)
            _new_pod(st, "statefulsets", key, s, pod, {"controller-revision-hash": revision,
                                                         "statefulset.kubernetes.io/pod-name": pod})
            rec = st["pods"][pkey]
            rec["spec"].setdefault("volumes", []).extend(
                {"name": t["metadata"]["name"],
                 "persistentVolumeClaim": {"claimName": f"{t['metadata']['name']}-{name}-{i}"}}
                for t in s["spec"].get("volumeClaimTemplates") or [])
            rec["spec"]["hostname"] = pod
            if s["spec"].get("serviceName"):
                rec["spec"]["subdomain"] = s["spec"]["serviceName"]
            schedule_pod(st, rec)
            changed = True
        if ordered and not pod_ready(st, st["pods"][pkey]):
            break  # OrderedReady: the next ordinal waits for this one
    return changed


def _claims(st: dict[str, Any], s: dict[str, Any], ordinal: int) -> None:
    ns, name = s["metadata"]["namespace"], s["metadata"]["name"]
    pvcs = objects(st, "persistentvolumeclaims")
    for t in s["spec"].get("volumeClaimTemplates") or []:
        claim = f"{t['metadata']['name']}-{name}-{ordinal}"
        if f"{ns}/{claim}" in pvcs:
            continue
        labels = dict((s["spec"].get("selector") or {}).get("matchLabels") or {})
        pvcs[f"{ns}/{claim}"] = {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": ns, "uid": new_uid(), "creationTimestamp": now_ts(),
                         "labels": labels, "resourceVersion": bump(st)},
            "spec": copy.deepcopy(t.get("spec") or {}), "status": {"phase": "Pending"},
        }


def daemonset(st: dict[str, Any], key: str, ds: dict[str, Any]) -> bool:
    name = ds["metadata"]["name"]
    spec = (ds["spec"].get("template") or {}).get("spec") or {}
    h = template_hash(ds["spec"].get("template"))
    eligible = {n for n, rec in st["nodes"].items() if admits(rec, spec, daemon=True)}
    changed = False
    have: dict[str, str] = {}
    for k, p in list(owned(st, ds["metadata"]["uid"]).items()):
        node = p.get("node")
        if node not in eligible or node in have or p["labels"].get("controller-revision-hash") != h:
            del st["pods"][k]
            changed = True
        else:
            have[str(node)] = k
    for node in sorted(eligible - set(have)):
        pod = f"{name}-{suffix(ds['metadata']['uid'] + str(next_seq(st)))}"
        _new_pod(st, "daemonsets", key, ds, pod, {"controller-revision-hash": h}, node=node)
        changed = True
    return changed


def garbage(st: dict[str, Any]) -> bool:
    """Pods whose controlling workload is gone are deleted (background propagation)."""
    changed = False
    for k, p in list(st["pods"].items()):
        ctl = p.get("controller")
        if ctl and (objects(st, ctl["plural"]).get(ctl["key"]) or {}).get("metadata", {}).get("uid") != ctl["uid"]:
            del st["pods"][k]
            changed = True
    return changed


def status(st: dict[str, Any], plural: str, w: dict[str, Any]) -> dict[str, Any]:
    """The status a workload's controller reports now."""
    mine = list(owned(st, w["metadata"]["uid"]).values())
    ready = sum(1 for p in mine if pod_ready(st, p))
    gen = w["metadata"].get("generation", 1)
    h = template_hash(w["spec"].get("template"))
    if plural == "daemonsets":
        spec = (w["spec"].get("template") or {}).get("spec") or {}
        desired = sum(1 for rec in st["nodes"].values() if admits(rec, spec, daemon=True))
        return {"currentNumberScheduled": len(mine), "desiredNumberScheduled": desired, "numberReady": ready,
                "numberAvailable": ready, "numberMisscheduled": 0, "updatedNumberScheduled": len(mine),
                "observedGeneration": gen, **({"numberUnavailable": desired - ready} if desired > ready else {})}
    want = int(w["spec"].get("replicas", 1))
    out: dict[str, Any] = {"observedGeneration": gen, "replicas": len(mine), "updatedReplicas": len(mine),
                           "readyReplicas": ready, "availableReplicas": ready}
    if plural == "statefulsets":
        rev = f"{w['metadata']['name']}-{h}"
        out.update(currentReplicas=len(mine), currentRevision=rev, updateRevision=rev, collisionCount=0)
        return {k: v for k, v in out.items() if v != 0 or k in ("replicas", "observedGeneration")}
    available = ready >= want
    out["conditions"] = [
        {"type": "Available", "status": "True" if available else "False",
         "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
         "message": "Deployment has minimum availability." if available else
         "Deployment does not have minimum availability."},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
         "message": f'ReplicaSet "{w["metadata"]["name"]}-{h}" has successfully progressed.'},
    ]
    if want > ready:
        out["unavailableReplicas"] = want - ready
    return {k: v for k, v in out.items() if v != 0 or k in ("replicas", "observedGeneration")}


CONTROLLERS = {"deployments": deployment, "statefulsets": statefulset, "daemonsets": daemonset}
__all__ = ["CONTROLLERS", "DELETION_COST", "garbage", "owned", "pods_on", "status"]
