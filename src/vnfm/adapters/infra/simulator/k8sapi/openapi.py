"""The OpenAPI v3 documents of the simulated API (`/openapi/v3` and one per group version) and the
strict field validation they announce.

kubectl (1.27 and later) validates what it sends with the server: it reads the group version's
document, finds the `fieldValidation` query parameter on the kind's PATCH operation, and then sends
`fieldValidation=Strict` with every create, update and patch. The server refuses an object with a
field its schema does not declare (400, `strict decoding error: unknown field "spec.x"`, as
kube-apiserver answers). The schemas below declare the fields this server checks: the top level
and `metadata` of every kind, and `spec` of PersistentVolumes (with its NFS source),
PodDisruptionBudgets and ClusterRoleBinding subjects; other specs are marked
`x-kubernetes-preserve-unknown-fields` (accepted as they are). `Warn` is treated as `Ignore`
(no Warning headers). No OpenAPI v2 document is served (kubectl before 1.27 needs it to validate).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.kinds import GROUPS, KINDS, Kind

METADATA = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
            "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
            "finalizers", "managedFields", "selfLink")
_SPEC_STATUS = ("spec", "status")
TOP: dict[str, tuple[str, ...]] = {
    "ConfigMap": ("data", "binaryData", "immutable"),
    "Secret": ("data", "stringData", "type", "immutable"),
    "ServiceAccount": ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    "ClusterRoleBinding": ("roleRef", "subjects"),
}
PV_SOURCES = ("nfs", "hostPath", "local", "csi", "iscsi", "fc", "cephfs", "rbd", "glusterfs", "cinder", "azureDisk",
              "azureFile", "awsElasticBlockStore", "gcePersistentDisk", "flexVolume", "flocker",
              "photonPersistentDisk", "portworxVolume", "quobyte", "scaleIO", "storageos", "vsphereVolume")
SPEC: dict[str, tuple[str, ...]] = {
    "PersistentVolume": ("accessModes", "capacity", "claimRef", "mountOptions", "nodeAffinity",
                         "persistentVolumeReclaimPolicy", "storageClassName", "volumeMode",
                         "volumeAttributesClassName", *PV_SOURCES),
    "PodDisruptionBudget": ("minAvailable", "maxUnavailable", "selector", "unhealthyPodEvictionPolicy"),
}
NESTED: dict[tuple[str, str], tuple[str, ...]] = {  # (kind, dotted path) -> its declared fields
    ("PersistentVolume", "spec.nfs"): ("server", "path", "readOnly"),
    ("ClusterRoleBinding", "roleRef"): ("apiGroup", "kind", "name"),
}
LIST_ITEMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("ClusterRoleBinding", "subjects"): ("apiGroup", "kind", "name", "namespace"),
}


def _fields(kind: str) -> tuple[str, ...]:
    return ("apiVersion", "kind", "metadata", *TOP.get(kind, _SPEC_STATUS))


def unknown_fields(kind: Kind, obj: dict[str, Any]) -> list[str]:
    """The fields of `obj` its kind's schema does not declare, as dotted paths."""
    out = [k for k in obj if k not in _fields(kind.kind)]
    out += [f"metadata.{k}" for k in obj.get("metadata") or {} if k not in METADATA]
    spec = obj.get("spec")
    if kind.kind in SPEC and isinstance(spec, dict):
        out += [f"spec.{k}" for k in spec if k not in SPEC[kind.kind]]
    for (k, path), allowed in NESTED.items():
        if k != kind.kind:
            continue
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            out += [f"{path}.{f}" for f in node if f not in allowed]
    for (k, path), allowed in LIST_ITEMS.items():
        items = obj.get(path) if k == kind.kind else None
        for i, item in enumerate(items if isinstance(items, list) else []):
            out += [f"{path}[{i}].{f}" for f in (item if isinstance(item, dict) else {}) if f not in allowed]
    return out


def _object(fields: tuple[str, ...], nested: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    props = {f: (nested or {}).get(f, {"x-kubernetes-preserve-unknown-fields": True}) for f in fields}
    return {"type": "object", "properties": props, "additionalProperties": False}


def _schema(k: Kind) -> dict[str, Any]:
    nested: dict[str, dict[str, Any]] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                         "metadata": _object(METADATA)}
    if k.kind in SPEC:
        inner = {p.split(".", 1)[1]: _object(f) for (kk, p), f in NESTED.items() if kk == k.kind and
                 p.startswith("spec.")}
        nested["spec"] = _object(SPEC[k.kind], inner)
    for (kk, p), f in NESTED.items():
        if kk == k.kind and "." not in p:
            nested[p] = _object(f)
    for (kk, p), f in LIST_ITEMS.items():
        if kk == k.kind:
            nested[p] = {"type": "array", "items": _object(f)}
    schema = _object(_fields(k.kind), nested)
    schema["x-kubernetes-group-version-kind"] = [{"group": k.group, "version": k.version, "kind": k.kind}]
    return schema


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def document(group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group version (None: not served)."""
    kinds = [k for k in KINDS if k.group == group and k.version == version]
    if not kinds:
        return None
    params = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}, "uniqueItems": True},
              {"name": "dryRun", "in": "query", "schema": {"type": "string"}, "uniqueItems": True}]
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for k in kinds:
        ref = f"io.k8s.simulated.{group or 'core'}.{version}.{k.kind}"
        schemas[ref] = _schema(k)
        gvk = {"group": k.group, "version": k.version, "kind": k.kind}
        body = {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}
        op = {"parameters": params, "requestBody": body, "x-kubernetes-group-version-kind": gvk,
              "responses": {"200": body}}
        ns = "namespaces/{namespace}/" if k.namespaced else ""
        paths[f"/{_gv_path(group, version)}/{ns}{k.plural}"] = {"post": {**op, "operationId": f"create{k.kind}"}}
        paths[f"/{_gv_path(group, version)}/{ns}{k.plural}/{{name}}"] = {
            "put": {**op, "operationId": f"replace{k.kind}"}, "patch": {**op, "operationId": f"patch{k.kind}"}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (vnfm simulated API)", "version": version},
            "paths": paths, "components": {"schemas": schemas}}


def _hash(doc: dict[str, Any]) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:64].upper()


def root() -> dict[str, Any]:
    """`/openapi/v3`: where each group version's document is (URLs rooted at /openapi/v3, so that
    clients keep the /clusters/<id> prefix of their server URL)."""
    gvs = [("", "v1"), *((g, v) for g, vs in GROUPS.items() for v in vs)]
    out = {}
    for g, v in gvs:
        doc = document(g, v)
        if doc is not None:
            out[_gv_path(g, v)] = {"serverRelativeURL": f"/openapi/v3/{_gv_path(g, v)}?hash={_hash(doc)}"}
    return {"paths": out}
