"""Small JSON values by (namespace, key) for adapters' own state (the simulated cloud, one-off
flags such as the secrets-at-rest upgrade)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from sqlalchemy import CursorResult, delete, insert, select, update

from vnfm.adapters.db import tables
from vnfm.adapters.db.repository import Tx
from vnfm.domain.model import utcnow


class SqlKvStore:
    """Small JSON values by (namespace, key), for adapters' own state (e.g. the simulated cloud)."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    def _exec(self, stmt: Any) -> CursorResult:
        return self.tx.conn().execute(stmt)

    def get(self, namespace: str, key: str, default: Any = None) -> Any:
        t = tables.kv
        row = self._exec(select(t.c.value).where(t.c.namespace == namespace, t.c.key == key)).first()
        return default if row is None else row[0]

    def put(self, namespace: str, key: str, value: Any) -> None:
        t = tables.kv
        values = {"namespace": namespace, "key": key, "value": value, "updated_at": utcnow()}
        dialect = self.tx.dialect
        if dialect in ("sqlite", "postgresql"):
            if dialect == "sqlite":
                from sqlalchemy.dialects.sqlite import insert as upsert
            else:
                from sqlalchemy.dialects.postgresql import insert as upsert  # type: ignore[assignment]
            stmt = upsert(t).values(**values)
            stmt = stmt.on_conflict_do_update(
                index_elements=[t.c.namespace, t.c.key],
                set_={"value": stmt.excluded.value, "updated_at": stmt.excluded.updated_at},
            )
            self._exec(stmt)
            return
        res = self._exec(update(t).where(t.c.namespace == namespace, t.c.key == key)
                         .values(value=value, updated_at=values["updated_at"]))
        if res.rowcount == 0:
            self._exec(insert(t).values(**values))

    def delete(self, namespace: str, key: str) -> None:
        t = tables.kv
        self._exec(delete(t).where(t.c.namespace == namespace, t.c.key == key))

    def items(self, namespace: str) -> builtins.list[tuple[str, Any]]:
        """(key, value) pairs of `namespace`, ordered by key."""
        t = tables.kv
        rows = self._exec(select(t.c.key, t.c.value).where(t.c.namespace == namespace).order_by(t.c.key))
        return [(str(row[0]), row[1]) for row in rows]

    def put_many(self, namespace: str, values: Iterable[tuple[str, Any]]) -> None:
        for key, value in values:
            self.put(namespace, key, value)
