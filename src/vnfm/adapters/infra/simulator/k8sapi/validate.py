"""What the API server checks of an object before it stores it (the part clients run into)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError, invalid
from vnfm.adapters.infra.simulator.k8sapi.kinds import Kind
from vnfm.adapters.infra.simulator.k8sapi.selectors import selector_matches

SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def check_name(kind: Kind, name: str) -> None:
    label = kind.plural in ("namespaces", "services")
    ok = bool(LABEL.match(name)) and len(name) <= 63 if label else bool(SUBDOMAIN.match(name)) and len(name) <= 253
    if not ok:
        what = "RFC 1123 label" if label else "RFC 1123 subdomain"
        raise invalid(kind.kind, name, f"metadata.name: Invalid value: \"{name}\": a lowercase {what} must consist "
                                       "of lower case alphanumeric characters, '-' or '.'")


def _containers(kind: str, name: str, spec: Any, path: str) -> None:
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not containers:
        raise invalid(kind, name, f"{path}.containers: Required value")
    for i, c in enumerate(containers):
        for field in ("name", "image"):
            if not isinstance(c, dict) or not c.get(field):
                raise invalid(kind, name, f"{path}.containers[{i}].{field}: Required value")


def _workload(kind: Kind, name: str, spec: dict[str, Any]) -> None:
    sel = spec.get("selector")
    if not isinstance(sel, dict) or not (sel.get("matchLabels") or sel.get("matchExpressions")):
        raise invalid(kind.kind, name, "spec.selector: Required value")
    tmpl = spec.get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    if not selector_matches(sel, labels):
        raise invalid(kind.kind, name, f"spec.template.metadata.labels: Invalid value: {labels}: `selector` does "
                                       "not match template `labels`")
    _containers(kind.kind, name, tmpl.get("spec"), "spec.template.spec")
    replicas = spec.get("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise invalid(kind.kind, name, f"spec.replicas: Invalid value: {replicas!r}: must be greater than or "
                                       "equal to 0")


def _secret(obj: dict[str, Any], name: str) -> None:
    data = obj.get("data") or {}
    for k, v in data.items():
        try:
            base64.b64decode(str(v), validate=True)
        except (binascii.Error, ValueError):
            raise invalid("Secret", name, f"data[{k}]: Invalid value: illegal base64 data") from None
    for k, v in (obj.pop("stringData", None) or {}).items():
        data[k] = base64.b64encode(str(v).encode()).decode()
    obj["data"] = data
    obj.setdefault("type", "Opaque")


def _int_or_percent(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, str) and bool(re.fullmatch(r"(100|[1-9]?[0-9])%", value))


def _budget(name: str, spec: dict[str, Any]) -> None:
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise invalid("PodDisruptionBudget", name, "spec: Invalid value: minAvailable and maxUnavailable cannot be "
                                                   "both set")
    for field in ("minAvailable", "maxUnavailable"):
        if spec.get(field) is not None and not _int_or_percent(spec[field]):
            raise invalid("PodDisruptionBudget", name, f"spec.{field}: Invalid value: {spec[field]!r}: must be a "
                                                       "non-negative integer or a percentage between 0% and 100%")
    if spec.get("selector") is not None and not isinstance(spec["selector"], dict):
        raise invalid("PodDisruptionBudget", name, "spec.selector: Invalid value: must be a label selector")


def _binding(name: str, obj: dict[str, Any]) -> None:
    ref = obj.get("roleRef")
    if not isinstance(ref, dict) or not ref.get("name"):
        raise invalid("ClusterRoleBinding", name, "roleRef.name: Required value")
    if ref.get("kind") not in ("ClusterRole", "Role") or ref.get("apiGroup") != "rbac.authorization.k8s.io":
        raise invalid("ClusterRoleBinding", name, "roleRef: Unsupported value: kind ClusterRole of apiGroup "
                                                  "rbac.authorization.k8s.io")
    for i, sub in enumerate(obj.get("subjects") or []):
        if not isinstance(sub, dict) or not sub.get("name") or not sub.get("kind"):
            raise invalid("ClusterRoleBinding", name, f"subjects[{i}]: Required value: kind and name")
        if sub["kind"] == "ServiceAccount" and not sub.get("namespace"):
            raise invalid("ClusterRoleBinding", name, f"subjects[{i}].namespace: Required value")


def _token_secret(name: str, obj: dict[str, Any]) -> None:
    if obj.get("type") == "kubernetes.io/service-account-token" and \
            not (obj["metadata"].get("annotations") or {}).get("kubernetes.io/service-account.name"):
        raise invalid("Secret", name, "metadata.annotations[kubernetes.io/service-account.name]: Required value")


def check(kind: Kind, obj: dict[str, Any]) -> None:
    """Refuse what the real API server refuses of the served kinds (422 Invalid naming the field);
    normalise what it normalises (Secret.stringData into data)."""
    name = obj["metadata"]["name"]
    check_name(kind, name)
    spec = obj.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise ApiError(400, "BadRequest", f"{kind.kind} {name}: spec must be an object")
    spec = spec or {}
    if kind.plural in ("deployments", "statefulsets", "daemonsets"):
        _workload(kind, name, spec)
    elif kind.plural == "pods":
        _containers("Pod", name, spec, "spec")
    elif kind.plural == "services":
        if spec.get("type") != "ExternalName":
            ports = spec.get("ports")
            if not isinstance(ports, list) or not ports:
                raise invalid("Service", name, "spec.ports: Required value")
            for i, p in enumerate(ports):
                port = p.get("port") if isinstance(p, dict) else None
                if not isinstance(port, int) or not 1 <= port <= 65535:
                    raise invalid("Service", name, f"spec.ports[{i}].port: Invalid value: {port!r}: must be between "
                                                   "1 and 65535, inclusive")
    elif kind.plural == "secrets":
        _secret(obj, name)
        _token_secret(name, obj)
    elif kind.plural == "poddisruptionbudgets":
        _budget(name, spec)
    elif kind.plural == "clusterrolebindings":
        _binding(name, obj)
    elif kind.plural == "persistentvolumeclaims":
        if not spec.get("accessModes"):
            raise invalid(kind.kind, name, "spec.accessModes: Required value: at least 1 access mode is required")
        if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
            raise invalid(kind.kind, name, "spec.resources[storage]: Required value")
    elif kind.plural == "persistentvolumes" and not (spec.get("capacity") or {}).get("storage"):
        raise invalid(kind.kind, name, "spec.capacity: Required value")
