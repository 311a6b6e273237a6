"""Rendering for the CLI: aligned plain-text tables, field lists, JSON, and secret masking.

No third-party dependency: the tables are simple enough to lay out by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from vnfm.domain import secrets

MASK = "******"

# A key is secret when its normalised name contains one of these words (password, ssh_password,
# client_secret, token, private_key, ...).
# The server's list (domain/secrets.py) plus a few words only the CLI masks.
_SECRET_WORDS = (*secrets.SECRET_KEYS, "passwd", "api_key", "apikey", "credential")
# user:password@ in URLs (e.g. proxy settings "http://user1:password1@host1:port1"); the CLI keeps the user.
_URL_USERINFO = secrets.URL_USERINFO


def is_secret_key(key: str) -> bool:
    return secrets.is_secret_key(key, _SECRET_WORDS)


def mask_text(text: str) -> str:
    """Hide the password part of credentials embedded in URLs."""
    return _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)


def mask_secrets(value: Any) -> Any:
    """A deep copy of `value` with the values of secret-looking keys replaced by a mask."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if is_secret_key(str(k)) and v not in (None, "") and not isinstance(v, dict | list):
                out[k] = MASK
            elif is_secret_key(str(k)) and isinstance(v, dict | list) and v:
                # e.g. "token": {...}: hide everything below
                out[k] = _mask_all(v)
            else:
                out[k] = mask_secrets(v)
        return out
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    if isinstance(value, str):
        return mask_text(value)
    return value


def _mask_all(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _mask_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_all(v) for v in value]
    return MASK if value not in (None, "") else value


def to_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False)


def cell(value: Any) -> str:
    """One table cell: scalars as text, structures as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


Column = tuple[str, Callable[[dict[str, Any]], Any]]


def key(*path: str) -> Callable[[dict[str, Any]], Any]:
    """A getter for a (nested) key: key("instantiatedVnfInfo", "flavourId")."""

    def get(row: dict[str, Any]) -> Any:
        cur: Any = row
        for p in path:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(p)
        return cur

    return get


def first_of(*names: str) -> Callable[[dict[str, Any]], Any]:
    """A getter returning the first present key among `names`."""

    def get(row: dict[str, Any]) -> Any:
        for n in names:
            if row.get(n) not in (None, ""):
                return row[n]
        return None

    return get


def render_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], *, empty: str = "(none)") -> str:
    """Rows as an aligned table with a header and a rule; `empty` when there are no rows."""
    if not rows:
        return empty
    headers = [h for h, _ in columns]
    body = [[cell(get(r)) for _, get in columns] for r in rows]
    widths = [max(len(h), *(len(line[i]) for line in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for line in body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return "\n".join(lines)


def render_fields(obj: dict[str, Any], fields: Iterable[tuple[str, Any]] | None = None) -> str:
    """A two-column Field/Value listing; nested values are shown as indented JSON."""
    items = list(fields) if fields is not None else [(k, v) for k, v in obj.items() if k != "_links"]
    if not items:
        return "(empty)"
    width = max(len(name) for name, _ in items)
    lines: list[str] = []
    for name, value in items:
        if isinstance(value, dict | list) and value and cell(value).startswith(("{", "[")):
            text = json.dumps(value, indent=2, ensure_ascii=False)
            first, *rest = text.splitlines()
            lines.append(f"{name.ljust(width)}  {first}")
            lines.extend(f"{' ' * width}  {r}" for r in rest)
        else:
            lines.append(f"{name.ljust(width)}  {cell(value)}")
    return "\n".join(lines)


def generic_columns(rows: Sequence[dict[str, Any]], *, limit: int = 8) -> list[Column]:
    """Columns for rows of unknown shape: ids and names first, then other keys, up to `limit`."""
    seen: list[str] = []
    for r in rows:
        for k in r:
            if k not in seen and k != "_links":
                seen.append(k)
    preferred = [k for k in seen if k == "id" or k.endswith("Id") or k.endswith("_id")]
    named = [k for k in seen if "name" in k.lower() and k not in preferred]
    rest = [k for k in seen if k not in preferred and k not in named]
    ordered = (preferred[:3] + named + preferred[3:] + rest)[:limit]
    return [(k.upper() if k == "id" else k, key(k)) for k in ordered]
