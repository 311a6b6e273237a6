"""`SqlLiveness`: heartbeats and fencing checks on a connection pool of their own.

A unit of work is never used for them: on SQLite every unit of work begins `BEGIN IMMEDIATE`
(the write lock) and on PostgreSQL it may wait on row locks. Here each statement commits by
itself (autocommit): a fencing check is a plain read (WAL readers do not wait for the writer), and
the heartbeat of every occurrence a process runs is one UPDATE (PostgreSQL: rows locked by a
transaction in flight are skipped this beat, never waited for, plus one read telling which of
the ids have another owner now). Ids not owned any more are then looked up (one more read, only
when there are some): those another process owns are reported taken, those released by their
own runner (it ended) are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, bindparam, create_engine, event, or_, select, update
from sqlalchemy.engine import URL

from vnfm.adapters.db import mappers, tables
from vnfm.adapters.db.engine import SQLITE_BUSY_TIMEOUT_MS, json_dumps, normalize_url
from vnfm.service.ports import Beat, Liveness

T = tables.vnf_lcm_op_occs
FINAL = ("COMPLETED", "FAILED", "ROLLED_BACK")
CHUNK = 5000  # ids per statement (SQLite allows 32,766 bound parameters)


def liveness_engine(url: str | URL, *, pool_size: int = 8, lock_timeout_ms: int = 2000,
                    statement_timeout_ms: int = 5000) -> Engine:
    """An autocommit engine for `url` with a small pool of its own (bounded waits on PostgreSQL)."""
    u = normalize_url(url)
    common: dict[str, Any] = {"isolation_level": "AUTOCOMMIT", "json_serializer": json_dumps,
                              "pool_size": pool_size, "max_overflow": 0, "pool_timeout": 10}
    if u.get_backend_name() != "sqlite":
        options = f"-c lock_timeout={lock_timeout_ms} -c statement_timeout={statement_timeout_ms}"
        return create_engine(u, pool_pre_ping=True, connect_args={"options": options}, **common)
    engine = create_engine(u, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
                           **common)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cur = dbapi_connection.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        finally:
            cur.close()

    return engine


class SqlLiveness(Liveness):
    def __init__(self, engine: Engine, *, owns_engine: bool = True) -> None:
        self.engine = engine
        self._owns_engine = owns_engine
        self._pg = engine.dialect.name == "postgresql"

    def beat(self, owner: str, op_ids: Sequence[str], now: Any) -> Beat:
        now = mappers.as_utc(now) if isinstance(now, datetime) else now
        owned: set[str] = set()
        forceful: set[str] = set()
        taken: set[str] = set()
        ids = list(op_ids)
        with self.engine.begin() as conn:
            for i in range(0, len(ids), CHUNK):
                part = ids[i:i + CHUNK]
                target = T.c.id.in_(bindparam("ids", expanding=True))
                if self._pg:  # never wait on a row lock: a locked row is beaten next time
                    locked = select(T.c.id).where(target, T.c.owner == owner).with_for_update(skip_locked=True)
                    stmt = update(T).where(T.c.id.in_(locked.scalar_subquery()))
                else:
                    stmt = update(T).where(target, T.c.owner == owner)
                rows = conn.execute(stmt.values(heartbeat=now).returning(T.c.id, T.c.cancel_mode),
                                    {"ids": part}).all()
                owned.update(r[0] for r in rows)
                forceful.update(r[0] for r in rows if r[1] == "FORCEFUL")
                if self._pg:  # skipped rows that are still ours count as owned (beaten next time)
                    mine = conn.execute(select(T.c.id).where(target, T.c.owner == owner), {"ids": part})
                    owned.update(mine.scalars())
            missing = [i for i in ids if i not in owned]  # normally none: ended, or taken over
            for i in range(0, len(missing), CHUNK):
                # another owner, or none while not final (taken over and interrupted, then the
                # new owner let go of it); an occurrence that ended (final) was released by its runner
                others = select(T.c.id).where(T.c.id.in_(bindparam("ids", expanding=True)), or_(
                    and_(T.c.owner.is_not(None), T.c.owner != owner),
                    and_(T.c.owner.is_(None), T.c.operation_state.not_in(FINAL))))
                taken.update(conn.execute(others, {"ids": missing[i:i + CHUNK]}).scalars())
        return Beat(owned=frozenset(owned), forceful=frozenset(forceful), taken=frozenset(taken))

    def owns(self, op_id: str, owner: str | None, epoch: int) -> bool:
        with self.engine.connect() as conn:
            row = conn.execute(select(T.c.owner, T.c.epoch).where(T.c.id == op_id)).first()
        return row is not None and row[0] == owner and int(row[1] or 0) == epoch

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()
