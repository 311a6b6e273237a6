"""List pages in SQL: SOL013 filter terms on indexed columns as WHERE clauses, keyset paging.

A repository names, per API attribute, the column that holds exactly the value the API document
shows (`Col`). `narrowing` turns the conditions it can into a WHERE clause that is a *superset*
of the exact matches (the caller checks every term on the rows it gets, so a term that cannot be
translated exactly is widened or left out, never made stricter):

* strings (`kind="str"`): eq/in and neq/nin exactly (`neq` also matches NULL: a negative term
  matches a document without the attribute), unless a value contains "@" (API output masks URL
  credentials, so such a value may differ from the stored text); gt/gte/lt/lte only on columns
  whose values the server makes (`ordered`: ids, states), compared byte-wise (`COLLATE "C"` on
  PostgreSQL, as Python compares strings).
* timestamps (`kind="time"`, shown as `YYYY-MM-DDTHH:MM:SSZ` in UTC, non-null): a value in exactly
  that format compares exactly (the shown text is the stored instant cut to the second); another
  value that starts with a date widens to whole days (gt/gte: from that day on; lt/lte: up to its
  end; eq/in: that day).
* cont/ncont and attributes without a column stay with the caller.

Paging is by key (`ORDER BY <order column>, id`, then rows after the marked one's key), so a page
costs the same wherever it is in the list and nothing reads the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import JSON, ColumnElement, Select, String, Table, and_, cast, false, func, literal, or_, select
from sqlalchemy.dialects.postgresql import JSONB

from vnfm.domain.errors import NotFound
from vnfm.service.ports import Condition

SHOWN = "%Y-%m-%dT%H:%M:%SZ"  # how the API shows timestamps (vnfm.service.views.ts)


@dataclass(frozen=True)
class Col:
    """The column behind an API attribute."""

    name: str
    kind: str = "str"  # "str" | "time"
    ordered: bool = False  # server-made values: gt/lt may be pushed down


def _day(value: str) -> datetime | None:
    try:
        d = datetime.strptime(value[:10], "%Y-%m-%d")
    except ValueError:
        return None
    return d.replace(tzinfo=UTC)


def _instant(value: str) -> datetime | None:
    """The instant of a value written exactly as the API shows timestamps, else None."""
    try:
        t = datetime.strptime(value, SHOWN)
    except ValueError:
        return None
    return t.replace(tzinfo=UTC) if t.strftime(SHOWN) == value else None


def _exact_time_clause(col: Any, op: str, values: Sequence[str]) -> ColumnElement[bool] | None:
    """Shown timestamps are the stored instant cut to the second, and compare as they sort: for a
    value in that very format a string comparison is a comparison of instants."""
    instants = [_instant(v) for v in values]
    if any(t is None for t in instants):
        return None
    sec = timedelta(seconds=1)
    ts = [t for t in instants if t is not None]
    if op in ("eq", "in"):
        return or_(false(), *(and_(col >= t, col < t + sec) for t in ts))
    if op in ("neq", "nin"):
        return and_(*(or_(col < t, col >= t + sec) for t in ts))
    bounds = {"gt": col >= ts[0] + sec, "gte": col >= ts[0], "lt": col < ts[0], "lte": col < ts[0] + sec}
    return bounds.get(op)


def _time_clause(col: Any, op: str, values: Sequence[str]) -> ColumnElement[bool] | None:
    exact = _exact_time_clause(col, op, values)
    if exact is not None:
        return exact
    days = [_day(v) for v in values]
    if any(d is None for d in days) or op in ("neq", "nin"):
        return None
    one = timedelta(days=1)
    if op in ("eq", "in"):
        return or_(false(), *(and_(col >= d, col < d + one) for d in days if d is not None))
    first = days[0]
    assert first is not None
    if op in ("gt", "gte"):
        return col >= first
    if op in ("lt", "lte"):
        return col < first + one
    return None


def _str_clause(col: Any, spec: Col, op: str, values: Sequence[str], dialect: str) -> ColumnElement[bool] | None:
    if any("@" in v for v in values):
        return None
    if op in ("eq", "in"):
        return col.in_(list(values))
    if op in ("neq", "nin"):
        return or_(col.is_(None), col.not_in(list(values)))
    if op in ("gt", "gte", "lt", "lte") and spec.ordered:
        c = col.collate("C") if dialect == "postgresql" else col
        v = values[0]
        return {"gt": c > v, "gte": c >= v, "lt": c < v, "lte": c <= v}[op]
    return None


def narrowing(table: Table, columns: Mapping[str, Col], conditions: Sequence[Condition],
              dialect: str) -> list[ColumnElement[bool]]:
    """WHERE clauses for the conditions that can be evaluated in the database (see module doc)."""
    out: list[ColumnElement[bool]] = []
    for cond in conditions:
        spec = columns.get(cond.attr)
        if spec is None or not cond.values:
            continue
        col = table.c[spec.name]
        if spec.kind == "time":
            clause = _time_clause(col, cond.op, cond.values)
        else:
            clause = _str_clause(col, spec, cond.op, cond.values, dialect)
        if clause is not None:
            out.append(clause)
    return out


def _body_without(body: Any, keys: Sequence[str], dialect: str) -> Any:
    """The JSON `body` column without top-level `keys`, computed by the database (less to decode)."""
    if dialect == "sqlite":
        return func.json_remove(body, *(f"$.{k}" for k in keys), type_=JSON())
    if dialect == "postgresql":
        expr: Any = cast(body, JSONB())
        for k in keys:
            expr = expr.op("-", return_type=JSONB())(literal(k, String()))
        return expr
    return body


def keyset_page(table: Table, order_col: str, where: Sequence[ColumnElement[bool]],
                after_key: tuple[Any, str] | None, limit: int, drop: Sequence[str] = (),
                dialect: str = "") -> Select[Any]:
    """SELECT ... WHERE <where> [AND (order, id) > after_key] ORDER BY order, id LIMIT limit;
    `drop`: keys of the JSON `body` not to return."""
    order = table.c[order_col]
    clauses = list(where)
    if after_key is not None:
        key, last_id = after_key
        clauses.append(or_(order > key, and_(order == key, table.c.id > last_id)))
    cols: list[Any] = list(table.c)
    if drop and "body" in table.c:
        cols = [c for c in cols if c.name != "body"]
        cols.append(_body_without(table.c.body, drop, dialect).label("body"))
    stmt = select(*cols).where(*clauses).order_by(order, table.c.id)
    return stmt.limit(limit) if limit > 0 else stmt


def after_key_of(conn: Any, table: Table, order_col: str, after_id: str | None,
                 scope: Sequence[ColumnElement[bool]] = ()) -> tuple[Any, str] | None:
    """The sort key of the row `after_id` (None for the first page); NotFound when it is gone (or
    outside `scope`: another tenant's)."""
    if after_id is None:
        return None
    key = conn.execute(select(table.c[order_col]).where(table.c.id == after_id, *scope)).first()
    if key is None:
        raise NotFound(f"no {table.name} row {after_id}")
    return key[0], after_id
