"""Bounded waits on PostgreSQL (issue 24.3): a lock wait ends after lock_timeout (a 503 for the
API), and a process paused inside a transaction loses it, and its row locks, after
idle_in_transaction_timeout, so its occurrence can be taken over."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import exc as sa_exc

from vnfm.adapters.db import DbLimits, SqlAlchemyUnitOfWork, is_busy, make_session_factory
from vnfm.adapters.db.engine import SQLITE_BUSY_TIMEOUT_MS, make_engine
from vnfm.domain.model import OpState

from . import factories as f


def test_lock_waits_end_and_a_paused_transaction_loses_its_locks(db_url: str, backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite: one writer at a time, bounded by its busy timeout")
    limits = DbLimits(lock_timeout=0.3, statement_timeout=5.0, idle_in_transaction_timeout=1.0)
    factory = make_session_factory(db_url, limits)
    try:
        occ = f.op_occ(operation_state=OpState.PROCESSING, owner="paused", heartbeat=f.T0)
        with SqlAlchemyUnitOfWork(factory) as u:
            u.op_occs.add(occ)
            u.commit()
        paused = SqlAlchemyUnitOfWork(factory)
        assert paused.op_occs.get_for_update(occ.id) is not None  # holds the row lock, then "pauses"
        started = time.monotonic()
        with SqlAlchemyUnitOfWork(factory) as u, pytest.raises(sa_exc.OperationalError) as caught:
            u.op_occs.get_for_update(occ.id)
        assert is_busy(caught.value) and time.monotonic() - started < 2.0
        deadline = time.monotonic() + 10
        claimed: list = []
        while not claimed:  # SKIP LOCKED passes it by until the server ends the paused session
            assert time.monotonic() < deadline, "the paused transaction kept its lock"
            with SqlAlchemyUnitOfWork(factory) as u:
                claimed = u.op_occs.claim_orphans("other", f.T0 + timedelta(seconds=1), now=f.T0)
                u.commit()
            time.sleep(0.05)  # the poll interval of this readiness loop (it has a deadline)
        assert time.monotonic() - started < 5.0
        assert [o.owner for o in claimed] == ["other"]
        with pytest.raises(sa_exc.DBAPIError):  # the paused process finds its transaction gone
            paused.commit()
        paused.close()
    finally:
        factory.kw["bind"].dispose()



def test_a_database_refusing_more_connections_is_busy_not_a_fault() -> None:
    """PostgreSQL at max_connections refuses the connection (FATAL 53300): a 503 to retry, as a
    pool timeout is, not a 500 (seen with 4 processes on a 60-connection server)."""
    refused = Exception('connection failed: connection to server on socket "/tmp/.s.PGSQL.5432" failed: '
                        "FATAL:  sorry, too many clients already")
    assert is_busy(sa_exc.OperationalError("connect", {}, refused))
    assert not is_busy(sa_exc.OperationalError("connect", {}, Exception("connection refused")))


def test_on_sqlite_a_pooled_connection_is_waited_for_as_long_as_the_write_lock(tmp_path: Path) -> None:
    """Every SQLite unit of work begins with BEGIN IMMEDIATE: holding a pooled connection is
    queueing for the one write lock (busy timeout 30 s). A pool wait shorter than that failed
    writers that were merely behind others in the same queue (4,000 instantiates at once on one
    process: 41 POSTs answered 503 "QueuePool limit ... reached" after 5 s)."""
    limits = DbLimits(pool_size=2, max_overflow=0, pool_timeout=5.0)
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}", limits)
    try:
        assert engine.pool.timeout() == SQLITE_BUSY_TIMEOUT_MS / 1000  # type: ignore[attr-defined]
    finally:
        engine.dispose()
    pg = make_engine("postgresql+psycopg://u@/db?host=/nonexistent", limits)
    assert pg.pool.timeout() == 5.0  # type: ignore[attr-defined]  # PostgreSQL: its own lock timeouts bound waits
    pg.dispose()
