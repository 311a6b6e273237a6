"""`LingeringPool`: overflow connections are kept while used (not reopened per unit of work on
PostgreSQL: a new backend each time), within the same bound, and shed after `linger` idle."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.pool import QueuePool

from vnfm.adapters.db import DbLimits
from vnfm.adapters.db.engine import make_engine
from vnfm.adapters.db.pool import LingeringPool


class FakeConnection:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.closed = False

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        self.log.append("close")

    def cursor(self) -> Any:
        raise AssertionError("not used")


def fake_pool(size: int, overflow: int, log: list[str], **kw: Any) -> LingeringPool:
    def creator() -> FakeConnection:
        log.append("open")
        return FakeConnection(log)

    return LingeringPool(creator, pool_size=size, max_overflow=overflow, timeout=0.2, **kw)


def burst(pool: LingeringPool, n: int) -> None:
    """Check `n` connections out at once, then return them all."""
    with ExitStack() as stack:
        for _ in range(n):
            stack.callback(pool.connect().close)


def test_overflow_connections_are_kept_while_used_and_shed_when_idle() -> None:
    log: list[str] = []
    pool = fake_pool(2, 3, log)
    for _ in range(20):
        burst(pool, 5)  # QueuePool: 3 opened and closed again every round
    assert log.count("open") == 5 and "close" not in log
    assert pool.open_count() == 5
    pool.linger = 0.0  # the overflow has been idle long enough: closed at the next return
    burst(pool, 1)
    assert pool.open_count() == 2 and log.count("close") == 3
    burst(pool, 2)  # the two kept are reused
    assert log.count("open") == 5


def test_the_bound_is_size_plus_overflow() -> None:
    log: list[str] = []
    pool = fake_pool(1, 1, log)
    first, second = pool.connect(), pool.connect()
    with pytest.raises(sa_exc.TimeoutError):
        pool.connect()
    second.close()
    third = pool.connect()  # the returned one, not a new one
    assert log.count("open") == 2
    first.close()
    third.close()


def test_recreate_keeps_the_bounds() -> None:
    log: list[str] = []
    pool = fake_pool(2, 3, log)
    pool.linger = 7.0
    new = pool.recreate()
    assert isinstance(new, LingeringPool)
    assert (new.keep, new.linger, new.size()) == (2, 7.0, 5)
    burst(new, 5)
    with pytest.raises(sa_exc.TimeoutError):
        burst(new, 6)


def test_make_engine_lingers_only_a_postgresql_overflow() -> None:
    pg = make_engine("postgresql+psycopg://u@/db?host=/nonexistent", DbLimits(pool_size=3, max_overflow=2))
    assert isinstance(pg.pool, LingeringPool) and (pg.pool.keep, pg.pool.size()) == (3, 5)
    pg.dispose()
    assert isinstance(pg.pool, LingeringPool) and (pg.pool.keep, pg.pool.size()) == (3, 5)
    flat = make_engine("postgresql+psycopg://u@/db?host=/nonexistent", DbLimits(pool_size=3, max_overflow=0))
    assert type(flat.pool) is QueuePool
    flat.dispose()


def test_postgresql_backends_are_not_reopened_per_unit_of_work(db_url: str, backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("PostgreSQL only (SQLite keeps the SQLAlchemy default pool)")
    engine = make_engine(db_url, DbLimits(pool_size=1, max_overflow=2))
    try:
        pids: set[int] = set()
        for _ in range(10):
            with engine.connect() as a, engine.connect() as b, engine.connect() as c:
                pids.update(int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one()) for conn in (a, b, c))
        assert len(pids) == 3  # QueuePool: 1 + 2 x 10 backends
    finally:
        engine.dispose()
