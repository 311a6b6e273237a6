"""PATCH bodies as clients send them: JSON merge patch (RFC 7396), strategic merge patch (what
kubectl and client libraries send by default for built-in types) and JSON patch (RFC 6902).

The strategic merge covers what clients use on the served kinds: lists of objects merged by their
merge key (containers, volumes and env by name, container ports by containerPort, service ports by
port, ...), `$patch: replace|delete|merge`, `$deleteFromPrimitiveList/<field>`, and the ordering
and retain-keys directives kubectl adds (ordering is not kept; retainKeys drops the keys not named).
"""

from __future__ import annotations

import copy
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError
from vnfm.domain.patch import merge_patch

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
# list field -> merge key (a list of objects not named here is replaced whole)
MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
              "env": "name", "imagePullSecrets": "name", "volumeMounts": "mountPath",
              "volumeDevices": "devicePath", "hostAliases": "ip", "conditions": "type", "ownerReferences": "uid",
              "volumeClaimTemplates": "metadata.name"}


def apply_patch(target: dict[str, Any], patch: Any, content_type: str) -> dict[str, Any]:
    ctype = content_type.split(";")[0].strip().lower()
    if ctype == MERGE:
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "a merge patch must be a JSON object")
        result = merge_patch(target, patch)
    elif ctype == STRATEGIC:
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "a strategic merge patch must be a JSON object")
        result = strategic_merge(target, patch)
    elif ctype == JSON_PATCH:
        result = json_patch(target, patch)
    else:
        raise ApiError(415, "UnsupportedMediaType",
                       f"the body of the request was in an unknown format - accepted media types include: "
                       f"{JSON_PATCH}, {MERGE}, {STRATEGIC}")
    if not isinstance(result, dict):
        raise ApiError(422, "Invalid", "the patched object is not a JSON object")
    return result


def _key_of(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        objs = [i for i in items if isinstance(i, dict)]
        if objs and all("containerPort" in i for i in objs):
            return "containerPort"
        return "port" if objs and all("port" in i for i in objs) else None
    return MERGE_KEYS.get(field)


def _get(item: Any, key: str) -> Any:
    for part in key.split("."):
        item = item.get(part) if isinstance(item, dict) else None
    return item


def _merge_list(field: str, cur: list[Any], patch: list[Any]) -> list[Any]:
    key = _key_of(field, [*cur, *patch])
    if key is None or not all(isinstance(p, dict) for p in patch):
        if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
            return [p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
        return [strategic_merge({}, p) if isinstance(p, dict) else p for p in patch]
    out = [copy.deepcopy(c) for c in cur]
    for p in patch:
        if p.get("$patch") == "replace":
            return [strategic_merge({}, {k: v for k, v in q.items() if k != "$patch"}) for q in patch
                    if q is not p]
        at = next((i for i, c in enumerate(out) if isinstance(c, dict) and _get(c, key) == _get(p, key)), None)
        if p.get("$patch") == "delete":
            if at is not None:
                out.pop(at)
            continue
        if at is None:
            out.append(strategic_merge({}, p))
        else:
            out[at] = strategic_merge(out[at], p)
    return out


def strategic_merge(target: Any, patch: dict[str, Any]) -> Any:
    """A strategic merge patch applied to `target` (a new object; `target` is not changed)."""
    if patch.get("$patch") == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$patch", "$retainKeys"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            if isinstance(out.get(name), list) and isinstance(v, list):
                out[name] = [x for x in out[name] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            merged = strategic_merge(out.get(k), v)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = _merge_list(k, out[k], v)
        elif isinstance(v, list):
            out[k] = _merge_list(k, [], v)
        else:
            out[k] = v
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", f"JSON pointer {path!r} does not start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    for p in parts:
        if isinstance(doc, list):
            doc = doc[int(p)]
        elif isinstance(doc, dict):
            doc = doc[p]
        else:
            raise KeyError(p)
    return doc


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        parent.insert(len(parent) if last == "-" else int(last), value)
    else:
        parent[last] = value
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    return parent.pop(int(last) if isinstance(parent, list) else last)


def json_patch(target: dict[str, Any], ops: Any) -> Any:
    """RFC 6902 operations applied in order (all or nothing)."""
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "a JSON patch must be a list of operations")
    doc: Any = copy.deepcopy(target)
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise ApiError(422, "Invalid", f"JSON patch operation {i} needs 'op' and 'path'")
        parts = _pointer(str(op["path"]))
        try:
            kind = op["op"]
            if kind == "add":
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            elif kind == "remove":
                _remove(doc, parts)
            elif kind == "replace":
                _walk(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op.get("value"))) if not parts else doc
                if parts:
                    parent = _walk(doc, parts[:-1])
                    parent[int(parts[-1]) if isinstance(parent, list) else parts[-1]] = copy.deepcopy(op.get("value"))
            elif kind in ("move", "copy"):
                value = _walk(doc, _pointer(str(op.get("from", ""))))
                if kind == "move":
                    _remove(doc, _pointer(str(op.get("from", ""))))
                doc = _add(doc, parts, copy.deepcopy(value))
            elif kind == "test":
                if _walk(doc, parts) != op.get("value"):
                    raise ApiError(422, "Invalid", f"JSON patch test failed at {op['path']}")
            else:
                raise ApiError(422, "Invalid", f"unknown JSON patch operation {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError):
            raise ApiError(422, "Invalid", f"JSON patch operation {i} ({op.get('op')} {op['path']}): "
                                           "the path does not exist") from None
    return doc
