"""Create-or-update, read and delete of the manifest kinds through the typed `kubernetes` client
(synchronous: the driver runs these in a worker thread)."""

from __future__ import annotations

import copy
import json
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from vnfm.domain.errors import OperationFailed
from vnfm.packaging import k8s_manifests
from vnfm.packaging.k8s_manifests import Manifest

# kind -> (API class, the name the client's methods use for it)
METHODS: dict[str, tuple[type[Any], str]] = {
    "Namespace": (client.CoreV1Api, "namespace"),
    "ConfigMap": (client.CoreV1Api, "namespaced_config_map"),
    "Secret": (client.CoreV1Api, "namespaced_secret"),
    "PersistentVolumeClaim": (client.CoreV1Api, "namespaced_persistent_volume_claim"),
    "Service": (client.CoreV1Api, "namespaced_service"),
    "Pod": (client.CoreV1Api, "namespaced_pod"),
    "Deployment": (client.AppsV1Api, "namespaced_deployment"),
    "StatefulSet": (client.AppsV1Api, "namespaced_stateful_set"),
    "DaemonSet": (client.AppsV1Api, "namespaced_daemon_set"),
}
# kinds whose spec the API server does not let a replace change (Pod; a bound claim)
IMMUTABLE_SPEC = ("Pod", "PersistentVolumeClaim")
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _call(api: client.ApiClient, m: Manifest, verb: str, *args: Any, **kw: Any) -> Any:
    cls, suffix = METHODS[m.kind]
    fn = getattr(cls(api), f"{verb}_{suffix}")
    if m.namespace is not None:
        return fn(*args[:1], m.namespace, *args[1:], **kw) if args else fn(m.namespace, **kw)
    return fn(*args, **kw)


def failed(m: Manifest, what: str, e: ApiException) -> OperationFailed:
    reason = ""
    if isinstance(e.body, str):
        try:
            reason = str(json.loads(e.body).get("message") or "")
        except ValueError:
            reason = e.body[:300]
    return OperationFailed(f"{m.file}: {m.label}: {what} failed ({e.status}): {reason or e.reason}")


def read(api: client.ApiClient, m: Manifest) -> dict[str, Any] | None:
    try:
        obj = _call(api, m, "read", m.name)
    except ApiException as e:
        if e.status == 404:
            return None
        raise failed(m, "read", e) from None
    return dict(api.sanitize_for_serialization(obj))


def foreign(m: Manifest, obj: dict[str, Any], owner: str) -> str | None:
    """Why `obj` (as read) is not this VNF instance's to change: None when it is `owner`'s."""
    has = k8s_manifests.owner_of(obj)
    if has == owner:
        return None
    if has:
        return f"{m.file}: {m.label} belongs to VNF instance {has}"
    return f"{m.file}: {m.label} exists and is no VNF instance's (not created by vnfm)"


def _shared(m: Manifest) -> bool:
    return m.kind == "Namespace" and m.name in PROTECTED_NAMESPACES


def apply(api: client.ApiClient, m: Manifest, body: dict[str, Any], owner: str) -> None:
    """Create the object; when it exists and is `owner`'s (a retry), replace it with `body` (the
    fields the API allocated, a Service's cluster IP and node ports, are kept unless the manifest
    names them); a Pod or claim that exists is left as it is. An object of another instance (or of
    nobody) is not touched: OperationFailed naming its owner. Namespaces every cluster has are used."""
    try:
        _call(api, m, "create", body=body)
        return
    except ApiException as e:
        if e.status != 409:
            raise failed(m, "create", e) from None
    if _shared(m):
        return
    old = read(api, m)
    if old is None:
        raise OperationFailed(f"{m.file}: {m.label}: exists and does not")
    why = foreign(m, old, owner)
    if why:
        raise OperationFailed(f"{why}: not changed (another namespace avoids the clash: additionalParams."
                              f"{k8s_manifests.NAMESPACE_PARAM}, for objects whose manifest names none)")
    if m.kind in IMMUTABLE_SPEC:  # a retry finds it as it was made (its spec cannot be replaced)
        return
    new = copy.deepcopy(body)
    new.setdefault("metadata", {})["resourceVersion"] = old["metadata"].get("resourceVersion")
    if m.kind == "Service":
        spec, was = new.setdefault("spec", {}), old.get("spec") or {}
        if was.get("clusterIP"):
            spec.setdefault("clusterIP", was["clusterIP"])
        allocated = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort") for p in was.get("ports") or []}
        for p in spec.get("ports") or []:
            np = allocated.get((p.get("port"), p.get("protocol", "TCP")))
            if np and "nodePort" not in p and spec.get("type") in ("NodePort", "LoadBalancer"):
                p["nodePort"] = np
    try:
        _call(api, m, "replace", m.name, body=new)
    except ApiException as e:
        raise failed(m, "update", e) from None


def check_owner(api: client.ApiClient, m: Manifest, owner: str) -> str | None:
    """None when the object is absent or `owner`'s; else why it is not to be changed."""
    if _shared(m):
        return None
    obj = read(api, m)
    return None if obj is None else foreign(m, obj, owner)


def delete(api: client.ApiClient, m: Manifest, owner: str, *, grace: int | None = None) -> bool | str:
    """Delete the object when it is `owner`'s: True; False when it was already gone (Namespaces
    every cluster has stay); the reason when it belongs to another instance (it stays)."""
    if _shared(m):
        return False
    why = check_owner(api, m, owner)
    if why:
        return why
    kw: dict[str, Any] = {"propagation_policy": "Background" if grace == 0 else "Foreground"}
    if grace is not None:
        kw["grace_period_seconds"] = grace
    try:
        _call(api, m, "delete", m.name, **kw)
    except ApiException as e:
        if e.status == 404:
            return False
        raise failed(m, "delete", e) from None
    return True


def scale(api: client.ApiClient, m: Manifest, replicas: int, owner: str) -> None:
    """Set a Deployment's or StatefulSet's replicas through its scale subresource (`owner`'s only)."""
    why = check_owner(api, m, owner)
    if why:
        raise OperationFailed(f"{why}: not scaled")
    cls, suffix = METHODS[m.kind]
    try:
        getattr(cls(api), f"patch_{suffix}_scale")(m.name, m.namespace, {"spec": {"replicas": replicas}})
    except ApiException as e:
        raise failed(m, "scale", e) from None
