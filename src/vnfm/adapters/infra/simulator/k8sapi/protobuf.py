"""Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), which
kubectl 1.33 and later send for built-in kinds in typed commands (`create serviceaccount`,
`create clusterrolebinding`, the evictions of `drain`): the `k8s\\0` envelope (runtime.Unknown with
the TypeMeta and the raw object), decoded into the JSON form the rest of the API works on.

Only the kinds below are decoded, with the fields those commands fill; a field this table does not
know (set to a non-empty value) is refused with 415 naming it, so nothing sent is dropped
silently. Answers are always JSON (clients accept it). There is no protobuf library here because
decoding needs Kubernetes' generated message descriptors; the wire format itself is the documented
protobuf encoding (varints and length-delimited fields)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

# message -> field number -> (JSON name, type): "str", "int", "bool", "map", a message name,
# or "[]<message>" for a repeated message
Schema = dict[int, tuple[str, str]]
MESSAGES: dict[str, Schema] = {
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes"), 3: ("contentEncoding", "str"),
                4: ("contentType", "str")},
    "TypeMeta": {1: ("apiVersion", "str"), 2: ("kind", "str")},
    "ObjectMeta": {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"), 4: ("selfLink", "str"),
                   5: ("uid", "str"), 6: ("resourceVersion", "str"), 7: ("generation", "int"),
                   8: ("creationTimestamp", "Time"), 11: ("labels", "map"), 12: ("annotations", "map")},
    "Time": {1: ("seconds", "int"), 2: ("nanos", "int")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 4: ("automountServiceAccountToken", "bool")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "str"), 2: ("apiGroup", "str"), 3: ("name", "str"), 4: ("namespace", "str")},
    "RoleRef": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "int"), 3: ("orphanDependents", "bool"),
                      4: ("propagationPolicy", "str"), 5: ("dryRun", "[]str")},
}
KINDS = ("ServiceAccount", "ClusterRoleBinding", "Eviction", "DeleteOptions")


def _refuse(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", f"protobuf body: {message} (the simulated API decodes "
                                                 f"{', '.join(KINDS)} only: send JSON)")


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift > 63:
            raise _refuse("truncated varint")
        b = data[i]
        value |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise _refuse("truncated field")
            out.append((number, data[i:i + size]))
            i += size
        else:
            raise _refuse(f"wire type {wire} of field {number}")
    return out


def _empty(value: int | bytes) -> bool:
    return value in (0, b"")


def _message(name: str, data: bytes) -> dict[str, Any]:
    schema = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        if number not in schema:
            if _empty(value):
                continue
            raise _refuse(f"field {number} of {name} is not understood")
        key, typ = schema[number]
        if typ == "int" or typ == "bool":
            out[key] = bool(value) if typ == "bool" else value
        elif not isinstance(value, bytes):
            raise _refuse(f"field {number} of {name} is not length-delimited")
        elif typ == "bytes":
            out[key] = value
        elif typ == "str":
            out[key] = value.decode()
        elif typ == "[]str":
            out.setdefault(key, []).append(value.decode())
        elif typ == "map":
            entry = dict(_fields(value))
            k, v = entry.get(1, b""), entry.get(2, b"")
            out.setdefault(key, {})[k.decode() if isinstance(k, bytes) else str(k)] = \
                v.decode() if isinstance(v, bytes) else str(v)
        elif typ.startswith("[]"):
            out.setdefault(key, []).append(_message(typ[2:], value))
        else:
            out[key] = _message(typ, value)
    return out


def _clean(obj: Any) -> Any:
    """The JSON form: empty strings, zero numbers and empty messages are absent (as in JSON)."""
    if isinstance(obj, dict):
        return {k: c for k, v in obj.items() if (c := _clean(v)) not in ("", 0, {}, [], None) or v is False}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf request body carries, as JSON would have it."""
    if not body.startswith(MAGIC):
        raise _refuse("no k8s envelope")
    env = _message("Unknown", body[len(MAGIC):])
    tm = env.get("typeMeta") or {}
    kind = tm.get("kind", "")
    if kind not in KINDS:
        raise _refuse(f"kind {kind or '(none)'}")
    if env.get("contentEncoding"):
        raise _refuse(f"content encoding {env['contentEncoding']}")
    obj = _clean(_message(kind, env.get("raw") or b""))
    obj.pop("creationTimestamp", None)
    (obj.get("metadata") or {}).pop("creationTimestamp", None)
    return {"apiVersion": tm.get("apiVersion", ""), "kind": kind, **obj}
