"""Label selectors (query strings and LabelSelector objects) and the field selectors clients send."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError

Match = Callable[[dict[str, Any]], bool]
_SET = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s*$")


def _split(expr: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in expr:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _term(part: str) -> Callable[[dict[str, str]], bool]:
    m = _SET.match(part)
    if m:
        values = {v.strip() for v in m.group(4).split(",") if v.strip()}
        key, neg = m.group(2), m.group(3) == "notin"
        return lambda labels: (labels.get(key) in values) != neg if key in labels else neg
    m = _EQ.match(part)
    if m:
        key, op, value = m.group(1), m.group(2), m.group(3)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _EXISTS.match(part)
    if m:
        key, neg = m.group(2), m.group(1) == "!"
        return lambda labels: (key in labels) != neg
    raise ApiError(400, "BadRequest", f"unable to parse requirement: {part.strip()!r}")


def label_matcher(expr: str | None) -> Callable[[dict[str, str]], bool]:
    """A `labelSelector` query parameter as a predicate over labels."""
    terms = [_term(p) for p in _split(expr or "")]
    return lambda labels: all(t(labels) for t in terms)


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A LabelSelector object (matchLabels, matchExpressions); an empty selector matches nothing."""
    if not selector:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), set(e.get("values") or [])
        ok = {"In": key in labels and labels[key] in values,
              "NotIn": key not in labels or labels[key] not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}.get(str(op), False)
        if not ok:
            return False
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def selector_string(selector: dict[str, Any] | None) -> str:
    """A LabelSelector written as a query string (Scale.status.selector)."""
    parts = [f"{k}={v}" for k, v in sorted(((selector or {}).get("matchLabels") or {}).items())]
    for e in (selector or {}).get("matchExpressions") or []:
        op = str(e.get("operator"))
        if op in ("In", "NotIn"):
            parts.append(f"{e.get('key')} {op.lower()} ({','.join(e.get('values') or [])})")
        else:
            parts.append(f"{'!' if op == 'DoesNotExist' else ''}{e.get('key')}")
    return ",".join(parts)


def _field(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for p in path.split("."):
        cur = cur.get(p) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def field_matcher(expr: str | None) -> Match:
    """A `fieldSelector` (metadata.name, metadata.namespace, spec.nodeName, status.phase, ...)."""
    terms: list[tuple[str, bool, str]] = []
    for part in _split(expr or ""):
        m = _EQ.match(part)
        if not m:
            raise ApiError(400, "BadRequest", f"invalid field selector: {part.strip()!r}")
        terms.append((m.group(1), m.group(2) == "!=", m.group(3)))
    return lambda obj: all((_field(obj, k) == v) != neg for k, neg, v in terms)
