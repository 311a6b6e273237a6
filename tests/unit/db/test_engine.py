"""Engine set-up: URLs, SQLite pragmas."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnfm.adapters.db import DEFAULT_DATABASE_URL, database_url_from_env, make_engine, normalize_url


def test_database_url_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VNFM_DATABASE_URL", raising=False)
    assert database_url_from_env() == DEFAULT_DATABASE_URL == "sqlite:///var/vnfm.db"
    monkeypatch.setenv("VNFM_DATABASE_URL", "postgresql://u@db/vnfm")
    assert database_url_from_env() == "postgresql://u@db/vnfm"


def test_postgres_urls_use_psycopg3() -> None:
    assert normalize_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgresql+psycopg://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("sqlite:///x.db").drivername == "sqlite"


def test_sqlite_pragmas_and_directory_creation(tmp_path: Path) -> None:
    db = tmp_path / "a" / "b" / "vnfm.db"
    engine = make_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert db.parent.is_dir()
    finally:
        engine.dispose()


def test_sqlite_memory_database_works() -> None:
    from vnfm.adapters.db import SqlAlchemyUnitOfWork, make_session_factory, migrate
    from vnfm.domain.model import Vim

    engine = make_engine("sqlite://")
    try:
        migrate(engine)
        with SqlAlchemyUnitOfWork(make_session_factory(engine)) as uow:
            uow.vims.add(Vim(vim_type="simulator", name="sim"))
            uow.commit()
            assert [v.name for v in uow.vims.list()] == ["sim"]
    finally:
        engine.dispose()


def test_the_metrics_counts_neither_wait_for_nor_take_the_write_lock(tmp_path: Path) -> None:
    import sqlite3
    import time

    from vnfm.adapters.db import fleet_counts, make_session_factory, migrate

    url = f"sqlite:///{tmp_path / 'vnfm.db'}"
    migrate(url)
    factory = make_session_factory(url)
    writer = sqlite3.connect(tmp_path / "vnfm.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process's unit of work holds the write lock
        started = time.monotonic()
        counts = fleet_counts(factory)
        assert time.monotonic() - started < 2  # not the 10 s busy timeout
        assert counts.occurrences == {} and counts.instances == {}
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        factory.kw["bind"].dispose()


def test_a_unit_of_work_that_cannot_take_the_write_lock_is_busy(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite: BEGIN IMMEDIATE (sent by the driver itself) waits the busy timeout, then fails
    as an error `is_busy` knows (the API answers 503, the engine tries again)."""
    import sqlite3
    import time

    from sqlalchemy import exc as sa_exc

    from vnfm.adapters.db import SqlAlchemyUnitOfWork, engine, is_busy, make_session_factory, migrate

    url = f"sqlite:///{tmp_path / 'vnfm.db'}"
    migrate(url)
    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_MS", 300)
    factory = make_session_factory(url)
    writer = sqlite3.connect(tmp_path / "vnfm.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process's unit of work holds the write lock
        started = time.monotonic()
        with SqlAlchemyUnitOfWork(factory) as u, pytest.raises(sa_exc.OperationalError) as caught:
            u.op_occs.get("x")
        assert is_busy(caught.value) and 0.25 < time.monotonic() - started < 5
        writer.execute("ROLLBACK")
        with SqlAlchemyUnitOfWork(factory) as u:  # the same pooled connection begins again
            assert u.op_occs.get("x") is None
            u.commit()
    finally:
        writer.close()
        factory.kw["bind"].dispose()
