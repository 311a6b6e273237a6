"""The base of the table repositories: add / get / list / page / save / delete over one entity
table with an `id` primary key (SQLAlchemy Core statements over one Session, no ORM mapping)."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, CursorResult, Table, bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection, Engine

from vnfm.adapters.db import paging, tenancy
from vnfm.adapters.db.paging import Col
from vnfm.domain.errors import NotFound
from vnfm.service.ports import Condition

E = TypeVar("E")


@functools.cache
def _by_id(table: Table) -> Any:
    """SELECT of one row of `table` by its id (a bound parameter `_id`)."""
    return select(table).where(table.c.id == bindparam("_id"))


class Tx:
    """The transaction of one unit of work as its repositories reach it: one pooled Connection,
    taken on the first statement (which begins the transaction: SQLite's `BEGIN IMMEDIATE` is the
    engine's begin hook) and given back to the pool when the transaction ends (`commit`,
    `rollback`: a later statement takes one again), and the dialect's name. No ORM Session: the
    repositories send Core statements only, and a Session's bookkeeping per unit of work cost
    more than most of the statements sent in it."""

    __slots__ = ("engine", "dialect", "_conn")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect: str = engine.dialect.name
        self._conn: Connection | None = None

    def conn(self) -> Connection:
        conn = self._conn
        if conn is None:
            conn = self._conn = self.engine.connect()
        return conn

    def commit(self) -> None:
        self._end(Connection.commit)

    def rollback(self) -> None:
        self._end(Connection.rollback)

    def _end(self, how: Callable[[Connection], None]) -> None:
        """Commit or roll back, and give the connection back to the pool even when that fails."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                how(conn)
            finally:
                conn.close()


class TableRepository(Generic[E]):
    """add / get / list / save / delete over one entity table with an `id` primary key."""

    table: Table
    label = "entity"
    # API attribute -> the column holding exactly its value (list filters evaluated in SQL).
    columns: Mapping[str, Col] = {"id": Col("id", ordered=True)}

    def __init__(
        self,
        tx: Tx,
        to_row: Callable[[E], dict[str, Any]],
        from_row: Callable[[Mapping[str, Any]], E],
        order_by: str = "created_at",
    ) -> None:
        self.tx = tx
        self._to_row, self._from_row = (tenancy.with_tenant_column(to_row, from_row) if "tenant" in self.table.c
                                        else (to_row, from_row))
        self._order = (self.table.c[order_by], self.table.c.id)
        self._order_by = order_by

    # --- plumbing
    def _conn(self) -> Connection:
        return self.tx.conn()

    def _exec(self, stmt: Any, params: Any = None) -> CursorResult:
        return self.tx.conn().execute(stmt, params)

    @property
    def dialect(self) -> str:
        return self.tx.dialect

    def _scope(self) -> builtins.list[ColumnElement[bool]]:
        """Every read, change and deletion sees the confined caller's tenant's rows only."""
        return tenancy.scope_of(self.table)

    def _select(self, *where: ColumnElement[bool]) -> builtins.list[E]:
        rows = self._exec(select(self.table).where(*where, *self._scope()).order_by(*self._order)).mappings()
        return [self._from_row(dict(r)) for r in rows.all()]

    def _patch_body(self, entity_id: str, changes: Mapping[str, Any]) -> None:
        """Keep the JSON body in sync after a column-only conditional update (row already locked)."""
        t = self.table
        body = self._exec(select(t.c.body).where(t.c.id == entity_id)).scalar_one_or_none()
        if body is None:
            return
        body = dict(body)
        body.update(changes)
        self._exec(update(t).where(t.c.id == entity_id).values(body=body))

    # --- Repository protocol
    def add(self, entity: E) -> None:
        # Values as execution parameters (not .values()): one cached compiled statement per table.
        self._exec(insert(self.table), self._to_row(entity))

    def get(self, entity_id: str) -> E | None:
        scope = self._scope()
        if scope:
            row = self._exec(select(self.table).where(self.table.c.id == entity_id, *scope)).mappings().first()
        else:  # the one statement, built once (its cache key is computed once too)
            row = self._exec(_by_id(self.table), {"_id": entity_id}).mappings().first()
        return None if row is None else self._from_row(dict(row))

    def list(self) -> builtins.list[E]:
        return self._select()

    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int,
             omit: frozenset[str] = frozenset()) -> builtins.list[E]:
        return self._page((), conditions, after_id, limit, omit)

    # API attribute -> body keys only it needs (left out of the rows of a page that omits it).
    body_parts: Mapping[str, tuple[str, ...]] = {}

    def _page(self, scope: Sequence[ColumnElement[bool]], conditions: Sequence[Condition],
              after_id: str | None, limit: int, omit: frozenset[str] = frozenset()) -> builtins.list[E]:
        """Keyset page narrowed in SQL (vnfm.adapters.db.paging); `scope`: extra fixed clauses."""
        t = self.table
        mine = self._scope()
        after = paging.after_key_of(self._conn(), t, self._order_by, after_id, mine)
        where = [*scope, *mine, *paging.narrowing(t, self.columns, conditions, self.dialect)]
        drop = [key for attr in omit for key in self.body_parts.get(attr, ())]
        stmt = paging.keyset_page(t, self._order_by, where, after, limit, drop, self.dialect)
        return [self._from_row(dict(r)) for r in self._exec(stmt).mappings().all()]

    def save(self, entity: E) -> None:
        row = self._to_row(entity)
        entity_id = row.pop("id")
        row.pop("tenant", None)  # a resource never changes tenant
        stmt = update(self.table).where(self.table.c.id == bindparam("_where_id"), *self._scope())
        res = self._exec(stmt, {"_where_id": entity_id, **row})
        if res.rowcount == 0:
            raise NotFound(f"{self.label} {entity_id} does not exist")

    def delete(self, entity_id: str) -> None:
        self._exec(delete(self.table).where(self.table.c.id == entity_id, *self._scope()))
