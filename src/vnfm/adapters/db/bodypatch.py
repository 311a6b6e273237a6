"""A small patch of a row's JSON body, applied in SQL: some top-level keys replaced and items
appended to one list, instead of the whole body serialised, sent and rewritten.

SQLite: `json_set(body, '$.k', json(:v), ..., '$.events[#]', json(:e), ...)` (pairs applied left
to right). PostgreSQL (a `json` column): `(body::jsonb || :patch::jsonb
|| jsonb_build_object('events', (body::jsonb -> 'events') || :added::jsonb))::json`. Keys are
the entity's own body keys (never request data); values are bound parameters, as JSON text.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, String, bindparam, cast, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import ColumnElement

from vnfm.adapters.db.engine import json_dumps

APPENDED = "events"  # the one list items are appended to


def patched(body: ColumnElement[Any], keys: tuple[str, ...], added: int, dialect: str) -> ColumnElement[Any]:
    """`body` with `keys` replaced and `added` items appended to its `events` list, as bound
    parameters named by `patch_params` (one expression per shape: the caller caches statements)."""
    if dialect == "postgresql":
        doc = cast(body, JSONB)
        expr: ColumnElement[Any] = doc
        if keys:
            expr = expr.op("||")(cast(bindparam("_part", type_=String), JSONB))
        if added:
            grown = doc[APPENDED].op("||")(cast(bindparam("_added", type_=String), JSONB))
            expr = expr.op("||")(func.jsonb_build_object(APPENDED, grown))
        return cast(expr, JSON)
    args: list[Any] = []
    for n, key in enumerate(keys):
        args += [f"$.{key}", func.json(bindparam(f"_k{n}", type_=String))]
    for n in range(added):
        args += [f"$.{APPENDED}[#]", func.json(bindparam(f"_a{n}", type_=String))]
    return func.json_set(body, *args)


def patch_params(part: dict[str, Any], added: list[Any], dialect: str) -> dict[str, str]:
    """The values of `patched`'s parameters: `part`'s values (in its key order) and `added`."""
    if dialect == "postgresql":
        return {**({"_part": json_dumps(part)} if part else {}), **({"_added": json_dumps(added)} if added else {})}
    return {**{f"_k{n}": json_dumps(v) for n, v in enumerate(part.values())},
            **{f"_a{n}": json_dumps(item) for n, item in enumerate(added)}}
