"""Kubernetes manifests of a CNF package (`additionalParams.lcm-kubernetes-def-files`): read from
the package, checked for what the CNF driver supports before anything is applied. Every refusal
names the file and the object (`Files/kubernetes/deployment.yaml: Deployment 'vdu1': ...`)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Protocol

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.tosca.yaml_safe import load_yaml_documents

DEF_FILES = "lcm-kubernetes-def-files"
NAMESPACE_PARAM = "namespace"  # Tacker's: where the CNF's namespaced objects go unless a manifest says
NAMESPACE_DEFAULT = "default"
# Every object a CNF applies (and its workloads' pods) carries the id of the VNF instance that owns it
OWNER_LABEL = "vnfm/vnf-instance-id"


@dataclass(frozen=True)
class KindInfo:
    api_version: str
    namespaced: bool
    order: int  # apply order (Namespaces first, workloads after what they use)


SUPPORTED: dict[str, KindInfo] = {
    "Namespace": KindInfo("v1", False, 0),
    "ConfigMap": KindInfo("v1", True, 1),
    "Secret": KindInfo("v1", True, 1),
    "PersistentVolumeClaim": KindInfo("v1", True, 2),
    "Service": KindInfo("v1", True, 3),
    "Deployment": KindInfo("apps/v1", True, 4),
    "StatefulSet": KindInfo("apps/v1", True, 4),
    "DaemonSet": KindInfo("apps/v1", True, 4),
    "Pod": KindInfo("v1", True, 5),
}
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


class Files(Protocol):
    def read(self, path: str) -> bytes: ...
    def exists(self, path: str) -> bool: ...


@dataclass(frozen=True)
class Manifest:
    file: str
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        if not SUPPORTED[self.kind].namespaced:
            return None
        return str(self.obj["metadata"].get("namespace") or NAMESPACE_DEFAULT)

    @property
    def label(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} '{ns}{self.name}'"


def namespace_param(params: dict[str, Any]) -> str | None:
    """`additionalParams.namespace`, checked (None when not given)."""
    ns = params.get(NAMESPACE_PARAM)
    if ns is None:
        return None
    if not isinstance(ns, str) or not _NAME.match(ns) or len(ns) > 63:
        raise UnprocessableEntity(f"additionalParams.{NAMESPACE_PARAM} must be a lowercase RFC 1123 name "
                                  "(a Kubernetes namespace)")
    return ns


def owner_of(obj: dict[str, Any]) -> str | None:
    """The VNF instance an object (as the API returns it) belongs to; None when it has no owner label."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return str(labels[OWNER_LABEL]) if labels.get(OWNER_LABEL) else None


def for_instance(files: Files | None, params: dict[str, Any], instance_id: str) -> list[Manifest]:
    """The CNF's manifests as they are applied for `instance_id`: namespaced objects that name no
    namespace go into `additionalParams.namespace` (else "default"); every object, and the pod
    template of every workload, is labelled with the owner (OWNER_LABEL)."""
    ns = namespace_param(params)
    out = []
    for m in load(files, def_files(params)):
        obj = copy.deepcopy(m.obj)
        md = obj["metadata"]
        if ns and SUPPORTED[m.kind].namespaced and not md.get("namespace"):
            md["namespace"] = ns
        md.setdefault("labels", {})[OWNER_LABEL] = instance_id
        if m.kind in WORKLOAD_KINDS:
            tmpl = obj["spec"]["template"].setdefault("metadata", {})
            tmpl.setdefault("labels", {})[OWNER_LABEL] = instance_id
        out.append(Manifest(m.file, obj))
    return out


def def_files(params: dict[str, Any]) -> list[str]:
    files = params.get(DEF_FILES)
    if files is None:
        return []
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise UnprocessableEntity(f"additionalParams.{DEF_FILES} must be a list of file paths in the package")
    return list(files)


def _fail(file: str, what: str, message: str) -> UnprocessableEntity:
    return UnprocessableEntity(f"additionalParams.{DEF_FILES}: {file}: {what}: {message}")


def _require(cond: bool, file: str, what: str, message: str) -> None:
    if not cond:
        raise _fail(file, what, message)


def _containers(file: str, what: str, spec: Any, path: str) -> None:
    cs = spec.get("containers") if isinstance(spec, dict) else None
    _require(isinstance(cs, list) and bool(cs), file, what, f"{path}.containers is required")
    assert isinstance(cs, list)
    for i, c in enumerate(cs):
        for f in ("name", "image"):
            _require(isinstance(c, dict) and bool(c.get(f)), file, what, f"{path}.containers[{i}].{f} is required")


def _check_spec(file: str, what: str, kind: str, obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    _require(spec is None or isinstance(spec, dict), file, what, "spec must be a mapping")
    spec = spec or {}
    if kind in WORKLOAD_KINDS:
        sel = spec.get("selector")
        _require(isinstance(sel, dict) and bool(sel.get("matchLabels") or sel.get("matchExpressions")),
                 file, what, "spec.selector is required")
        tmpl = spec.get("template")
        _require(isinstance(tmpl, dict), file, what, "spec.template is required")
        labels = ((tmpl or {}).get("metadata") or {}).get("labels") or {}
        want = (sel or {}).get("matchLabels") or {}
        _require(all(labels.get(k) == v for k, v in want.items()), file, what,
                 "spec.selector does not match spec.template.metadata.labels")
        _containers(file, what, (tmpl or {}).get("spec"), "spec.template.spec")
        replicas = spec.get("replicas", 1)
        _require(kind == "DaemonSet" or (isinstance(replicas, int) and not isinstance(replicas, bool)
                                         and replicas >= 0), file, what, "spec.replicas must be an integer >= 0")
    elif kind == "Pod":
        _containers(file, what, spec, "spec")
    elif kind == "Service" and spec.get("type") != "ExternalName":
        ports = spec.get("ports")
        _require(isinstance(ports, list) and bool(ports), file, what, "spec.ports is required")
        for i, p in enumerate(ports or []):
            port = p.get("port") if isinstance(p, dict) else None
            _require(isinstance(port, int) and 1 <= port <= 65535, file, what, f"spec.ports[{i}].port must be 1-65535")
            np = p.get("nodePort")
            _require(np is None or (isinstance(np, int) and 30000 <= np <= 32767), file, what,
                     f"spec.ports[{i}].nodePort must be in 30000-32767")
    elif kind == "PersistentVolumeClaim":
        _require(bool(spec.get("accessModes")), file, what, "spec.accessModes is required")
        _require(bool(((spec.get("resources") or {}).get("requests") or {}).get("storage")), file, what,
                 "spec.resources.requests.storage is required")


def check_object(file: str, index: int, obj: Any) -> Manifest:
    """One document of `file`: a supported kind with a valid name and the fields its kind needs."""
    where = f"document {index + 1}"
    _require(isinstance(obj, dict), file, where, "not a mapping")
    kind = obj.get("kind")
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    what = f"{kind or 'object'} '{name or '?'}' ({where})"
    _require(isinstance(kind, str) and bool(kind), file, where, "kind is required")
    if kind not in SUPPORTED:
        raise _fail(file, what, f"kind {kind} is not supported (supported: {', '.join(sorted(SUPPORTED))})")
    info = SUPPORTED[kind]
    _require(obj.get("apiVersion") == info.api_version, file, what,
             f"apiVersion must be {info.api_version}, not {obj.get('apiVersion')!r}")
    _require(isinstance(name, str) and bool(_NAME.match(name)) and len(name) <= 63, file, what,
             "metadata.name must be a lowercase RFC 1123 name")
    ns = md.get("namespace") if isinstance(md, dict) else None
    _require(ns is None or (isinstance(ns, str) and bool(_NAME.match(ns))), file, what,
             "metadata.namespace must be a lowercase RFC 1123 name")
    _check_spec(file, what, kind, obj)
    return Manifest(file, obj)


def load(files: Files | None, paths: list[str]) -> list[Manifest]:
    """Every object of the files, checked, in apply order; duplicates refused."""
    if paths and files is None:
        raise UnprocessableEntity(f"additionalParams.{DEF_FILES}: the package's files are not available")
    out: list[Manifest] = []
    seen: dict[tuple[str, str | None, str], str] = {}
    for path in paths:
        if files is None or not files.exists(path):
            raise UnprocessableEntity(f"additionalParams.{DEF_FILES}: {path} is not a file of the package")
        docs = load_yaml_documents(files.read(path), f"additionalParams.{DEF_FILES}: {path}")
        for i, doc in enumerate(d for d in docs if d is not None):
            m = check_object(path, i, doc)
            key = (m.kind, m.namespace, m.name)
            if key in seen:
                raise _fail(path, m.label, f"defined twice (also in {seen[key]})")
            seen[key] = path
            out.append(m)
    return sorted(out, key=lambda m: SUPPORTED[m.kind].order)
