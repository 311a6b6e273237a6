"""The verbs of the simulated API on one cluster's state: list, get, create, replace (PUT), patch,
delete, plus the subresources clients use (pods/eviction, <workload>/scale, <kind>/status). Each
call runs inside one transaction of the simulated cloud; the cluster's control loop runs after
every write, so what a client reads back is what the cluster's controllers made of it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi import controller, services, store
from vnfm.adapters.infra.simulator.k8sapi.budgets import blocking_budget
from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError, already_exists, not_found
from vnfm.adapters.infra.simulator.k8sapi.kinds import KINDS, WORKLOADS, Kind
from vnfm.adapters.infra.simulator.k8sapi.openapi import TOP as NO_STATUS
from vnfm.adapters.infra.simulator.k8sapi.openapi import unknown_fields
from vnfm.adapters.infra.simulator.k8sapi.patch import apply_patch
from vnfm.adapters.infra.simulator.k8sapi.selectors import field_matcher, label_matcher, selector_string
from vnfm.adapters.infra.simulator.k8sapi.state import DEFAULT_NAMESPACES, bump, key_of, new_uid, now_ts, rv, suffix
from vnfm.adapters.infra.simulator.k8sapi.validate import check, check_name
from vnfm.adapters.infra.simulator.twin.cluster import blocking_pdb

# kinds whose DELETE answers the deleted object rather than a Status (what the clients deserialize)
RETURN_DELETED = ("pods", "services", "persistentvolumeclaims", "persistentvolumes")


@dataclass
class Call:
    method: str
    kind: Kind
    namespace: str | None = None
    name: str | None = None
    sub: str | None = None
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None
    content_type: str = "application/json"

    @property
    def key(self) -> str:
        return key_of(self.namespace if self.kind.namespaced else None, str(self.name))


def run(st: dict[str, Any], call: Call) -> tuple[int, dict[str, Any]]:
    """One API call on the cluster state `st`: (HTTP status, body)."""
    controller.reconcile(st)
    if call.kind.namespaced and call.namespace is None and (call.name is not None or call.method != "GET"):
        raise ApiError(404, "NotFound", f"the server could not find the requested resource ({call.kind.plural} "
                                        "needs a namespace)")
    if call.sub is not None:
        return _subresource(st, call)
    if call.name is None:
        if call.method == "GET":
            return 200, _list(st, call)
        if call.method == "POST":
            return 201, _create(st, call)
        raise ApiError(405, "MethodNotAllowed", f"{call.method} is not supported on a collection")
    if call.method == "GET":
        return 200, _get(st, call)
    if call.method == "PUT":
        return 200, _replace(st, call, _body(call))
    if call.method == "PATCH":
        return 200, _replace(st, call, apply_patch(_get(st, call), call.body, call.content_type))
    if call.method == "DELETE":
        return 200, _delete(st, call)
    raise ApiError(405, "MethodNotAllowed", f"{call.method} is not supported")


def _body(call: Call) -> dict[str, Any]:
    body = call.body
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", "the request body must be a JSON object")
    if body.get("kind") not in (None, call.kind.kind) or body.get("apiVersion") not in (None, call.kind.api_version):
        raise ApiError(400, "BadRequest", f"the body is a {body.get('apiVersion')} {body.get('kind')}, not a "
                                          f"{call.kind.api_version} {call.kind.kind}")
    body = copy.deepcopy(body)
    body["apiVersion"], body["kind"] = call.kind.api_version, call.kind.kind
    md = body.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise ApiError(400, "BadRequest", "metadata must be an object")
    if call.kind.namespaced:
        if md.get("namespace") not in (None, "", call.namespace):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace "
                                              "sent on the request")
        md["namespace"] = call.namespace
    else:
        md.pop("namespace", None)
    return body


def _strict(call: Call, obj: dict[str, Any]) -> None:
    """fieldValidation=Strict (what kubectl sends): an undeclared field is refused (openapi.py)."""
    if call.query.get("fieldValidation") != "Strict":
        return
    unknown = unknown_fields(call.kind, obj)
    if unknown:
        k = call.kind
        raise ApiError(400, "BadRequest", f'{k.kind} in version "{k.version}" cannot be handled as a {k.kind}: '
                                          f'strict decoding error: {", ".join(f"unknown field {u!r}" for u in unknown)}'
                       .replace("'", '"'))


def _get(st: dict[str, Any], call: Call) -> dict[str, Any]:
    obj = store.read(st, call.kind.plural, call.key)
    if obj is None:
        raise not_found(call.kind.plural, str(call.name), call.kind.group)
    return obj


def _list(st: dict[str, Any], call: Call) -> dict[str, Any]:
    labels = label_matcher(call.query.get("labelSelector"))
    fields = field_matcher(call.query.get("fieldSelector"))
    items = []
    for key in store.keys(st, call.kind.plural):
        if call.kind.namespaced and call.namespace is not None and not key.startswith(f"{call.namespace}/"):
            continue
        obj = store.read(st, call.kind.plural, key)
        if obj is not None and labels(obj["metadata"].get("labels") or {}) and fields(obj):
            items.append(obj)
    return {"kind": f"{call.kind.kind}List", "apiVersion": call.kind.api_version,
            "metadata": {"resourceVersion": rv(st)}, "items": items}


def _namespace_exists(st: dict[str, Any], ns: str | None) -> None:
    if ns is not None and store.read(st, "namespaces", ns) is None:
        raise not_found("namespaces", ns)


def _register(st: dict[str, Any], call: Call, obj: dict[str, Any]) -> dict[str, Any]:
    """A kubelet registers its Node (POST): a control plane when labelled so; Ready at once unless
    the twin's `never_ready` fault names it."""
    md = obj["metadata"]
    name = str(md.get("name") or "")
    check_name(call.kind, name)
    if name in st["nodes"]:
        raise already_exists("nodes", name)
    labels = dict(md.get("labels") or {})
    addresses = [a.get("address") for a in (obj.get("status") or {}).get("addresses") or []
                 if isinstance(a, dict) and a.get("type") == "InternalIP"]
    st["nodes"][name] = {"name": name, "server_id": None, "addresses": addresses, "labels": labels,
                         "role": "master" if "node-role.kubernetes.io/control-plane" in labels else "worker",
                         "cordoned": bool((obj.get("spec") or {}).get("unschedulable")), "ready": False,
                         "ready_at": 0.0, "rv": bump(st)}
    call.name = name
    controller.reconcile(st)
    return _get(st, call)


def _create(st: dict[str, Any], call: Call) -> dict[str, Any]:
    if call.kind.plural == "nodes":
        obj = _body(call)
        _strict(call, obj)
        return _register(st, call, obj)
    obj = _body(call)
    md = obj["metadata"]
    if not md.get("name"):
        if not md.get("generateName"):
            raise ApiError(422, "Invalid", f"{call.kind.kind}: metadata.name: Required value: name or generateName "
                                           "is required")
        md["name"] = f"{md['generateName']}{suffix(new_uid())}"
    call.name = md["name"]
    _namespace_exists(st, call.namespace if call.kind.namespaced else None)
    if store.read(st, call.kind.plural, call.key) is not None:
        raise already_exists(call.kind.plural, call.name, call.kind.group)
    _strict(call, obj)
    check(call.kind, obj)
    md.update(uid=new_uid(), creationTimestamp=now_ts(), generation=1)
    for k in ("resourceVersion", "deletionTimestamp", "managedFields"):
        md.pop(k, None)
    if call.kind.kind not in NO_STATUS:
        obj["status"] = {"Namespace": {"phase": "Active"}, "PersistentVolumeClaim": {"phase": "Pending"}}.get(
            call.kind.kind, {})
    if call.kind.plural == "services":
        services.allocate(st, call.key, obj, None)
    store.write(st, call.kind.plural, call.key, obj)
    controller.reconcile(st)
    return _get(st, call)


def _replace(st: dict[str, Any], call: Call, body: Any) -> dict[str, Any]:
    old = _get(st, call)
    call.body = body
    obj = _body(call)
    md = obj["metadata"]
    if md.get("name") not in (None, call.name):
        raise ApiError(400, "BadRequest", f"the name of the object ({md.get('name')}) does not match the name on "
                                          f"the URL ({call.name})")
    md["name"] = call.name
    if md.get("resourceVersion") not in (None, "", old["metadata"].get("resourceVersion")):
        raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {call.kind.plural} "{call.name}": the '
                                        "object has been modified; please apply your changes to the latest version "
                                        "and try again", kind=call.kind.plural, name=str(call.name))
    _strict(call, obj)
    check(call.kind, obj)
    for k in ("uid", "creationTimestamp"):
        md[k] = old["metadata"].get(k)
    generation = int(old["metadata"].get("generation") or 1)
    md["generation"] = generation + 1 if obj.get("spec") != old.get("spec") else generation
    if "status" in old:
        obj["status"] = old["status"]
    if call.kind.plural == "services":
        services.allocate(st, call.key, obj, old)
    store.write(st, call.kind.plural, call.key, obj)
    controller.reconcile(st)
    return _get(st, call)


def _delete_options(call: Call) -> dict[str, Any]:
    opts = dict(call.body) if isinstance(call.body, dict) else {}
    for k in ("propagationPolicy", "gracePeriodSeconds"):
        if k in call.query:
            opts[k] = call.query[k]
    return opts


def _delete(st: dict[str, Any], call: Call) -> dict[str, Any]:
    obj = _get(st, call)
    plural = call.kind.plural
    if plural == "namespaces":
        if call.name in DEFAULT_NAMESPACES[:3]:
            raise ApiError(403, "Forbidden", f'namespaces "{call.name}" is forbidden: this namespace may not be '
                                             "deleted")
        for k in KINDS:
            if k.namespaced:
                for key in store.keys(st, k.plural):
                    if key.startswith(f"{call.name}/"):
                        _drop(st, k, key, {})
    _drop(st, call.kind, call.key, _delete_options(call))
    controller.reconcile(st)
    if plural in RETURN_DELETED:  # as kube-apiserver answers for these: the object as it was deleted
        obj["metadata"]["deletionTimestamp"] = now_ts()
        return obj
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": call.name, "group": call.kind.group, "kind": plural,
                        "uid": obj["metadata"].get("uid")}}


def _drop(st: dict[str, Any], kind: Kind, key: str, opts: dict[str, Any]) -> None:
    if kind.plural == "services":
        services.release(st, key)
    elif kind.plural == "persistentvolumeclaims":
        controller.release(st, key)
    elif kind.plural in WORKLOADS and opts.get("propagationPolicy") == "Orphan":
        uid = (store.read(st, kind.plural, key) or {}).get("metadata", {}).get("uid")
        for p in st["pods"].values():
            if (p.get("controller") or {}).get("uid") == uid:
                p["controller"], p["owner"] = None, None
    store.remove(st, kind.plural, key)


def _subresource(st: dict[str, Any], call: Call) -> tuple[int, dict[str, Any]]:
    plural, sub = call.kind.plural, call.sub
    if sub == "status" and call.method == "GET":
        return 200, _get(st, call)
    if plural == "pods" and sub == "eviction" and call.method == "POST":
        return 201, _evict(st, call)
    if plural in ("deployments", "statefulsets") and sub == "scale":
        return 200, _scale(st, call)
    raise ApiError(405, "MethodNotAllowed", f"{call.method} {plural}/{sub} is not supported")


def _evict(st: dict[str, Any], call: Call) -> dict[str, Any]:
    _get(st, call)
    rec = st["pods"][call.key]
    found = blocking_budget(st, rec)
    if found is None and (twin_pdb := blocking_pdb(st, rec)) is not None:  # a budget the twin's helpers added
        found = twin_pdb, f"The disruption budget {twin_pdb} allows no more unavailable pods"
    if found is not None:
        raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                       kind="pods", name=str(call.name), causes=[{"reason": "DisruptionBudget", "message": found[1]}])
    store.remove(st, "pods", call.key)
    controller.reconcile(st)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _scale_of(st: dict[str, Any], w: dict[str, Any]) -> dict[str, Any]:
    md = w["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: md.get(k) for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")},
            "spec": {"replicas": int(w["spec"].get("replicas", 1))},
            "status": {"replicas": int((w.get("status") or {}).get("replicas", 0)),
                       "selector": selector_string(w["spec"].get("selector"))}}


def _scale(st: dict[str, Any], call: Call) -> dict[str, Any]:
    w = _get(st, call)
    if call.method == "GET":
        return _scale_of(st, w)
    if call.method not in ("PUT", "PATCH"):
        raise ApiError(405, "MethodNotAllowed", f"{call.method} is not supported on scale")
    scale = apply_patch(_scale_of(st, w), call.body, call.content_type) if call.method == "PATCH" else call.body
    replicas = ((scale or {}).get("spec") or {}).get("replicas") if isinstance(scale, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ApiError(422, "Invalid", f"Scale.autoscaling \"{call.name}\" is invalid: spec.replicas: Invalid value: "
                                       f"{replicas!r}: must be greater than or equal to 0")
    w["spec"]["replicas"] = replicas
    call.body = w
    return _scale_of(st, _replace(st, call, w))
