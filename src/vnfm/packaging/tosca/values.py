"""Reading values out of VNFD templates: `get_input` with a default, mappings, integers, sizes,
requirements and policy lists. Errors name the file and key (`where`)."""

from __future__ import annotations

import re
from typing import Any

from vnfm.domain.errors import UnprocessableEntity


def is_function(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and str(next(iter(v))).startswith(("get_", "concat"))


def resolve(v: Any, inputs: dict[str, Any]) -> Any:
    """A literal value, `get_input` of an input with a default, else None."""
    if is_function(v):
        if "get_input" in v:
            spec = inputs.get(str(v["get_input"]))
            if isinstance(spec, dict) and "default" in spec:
                return spec["default"]
        return None
    return v


def mapping(v: Any, where: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise UnprocessableEntity(f"{where} must be a mapping")
    return v


def as_int(v: Any, where: str, minimum: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise UnprocessableEntity(f"{where} must be an integer >= {minimum}, got {v!r}")
    return v


_BINARY = {
    "b": 1,
    "kb": 1024,
    "kib": 1024,
    "mb": 1024**2,
    "mib": 1024**2,
    "gb": 1024**3,
    "gib": 1024**3,
    "tb": 1024**4,
    "tib": 1024**4,
}
_SI = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
    "tb": 1000**4,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$")


def size_bytes(v: Any, where: str, *, si: bool = False) -> float:
    """A TOSCA scalar-unit.size ('512 MB', '4 GiB') in bytes.

    By default MB/GB are read as MiB/GiB, as Nova (RAM) and Cinder (volumes) count them;
    `si=True` reads them as powers of 1000 (SOL005 image sizes, as the reference system does).
    """
    m = _SIZE.match(str(v)) if isinstance(v, str) else None
    units = _SI if si else _BINARY
    if m is None or m.group(2).lower() not in units:
        raise UnprocessableEntity(f"{where} must be a size with a unit like '512 MB' or '4 GiB', got {v!r}")
    return float(m.group(1)) * units[m.group(2).lower()]


def requirements(tmpl: dict[str, Any], where: str) -> list[tuple[str, str]]:
    reqs = tmpl.get("requirements") or []
    if isinstance(reqs, dict):
        reqs = [{k: v} for k, v in reqs.items()]
    if not isinstance(reqs, list):
        raise UnprocessableEntity(f"{where}: requirements must be a list")
    out: list[tuple[str, str]] = []
    for item in reqs:
        if not isinstance(item, dict) or len(item) != 1:
            raise UnprocessableEntity(f"{where}: cannot read requirement {item!r}")
        key, value = next(iter(item.items()))
        if isinstance(value, dict):
            value = value.get("node")
        if not isinstance(value, str):
            raise UnprocessableEntity(f"{where}: requirement {key!r} must name a node template")
        out.append((str(key), value))
    return out


def policy_entries(tt: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    raw = tt.get("policies") or []
    items: list[tuple[str, Any]] = []
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        for entry in raw:
            if not isinstance(entry, dict) or len(entry) != 1:
                raise UnprocessableEntity(f"{where}: cannot read policy {entry!r}")
            items.append(next(iter(entry.items())))
    else:
        raise UnprocessableEntity(f"{where}: policies must be a list")
    out: list[tuple[str, dict[str, Any]]] = []
    for name, body in items:
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise UnprocessableEntity(f"{where}: policy {name!r} has no type")
        out.append((str(name), body))
    return out
