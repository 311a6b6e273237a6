"""Fixtures: every repository test runs against SQLite and, when available, a throwaway PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db.pgcluster import PgCluster, start_cluster
from vnfm.adapters.db import SqlAlchemyUnitOfWork, make_session_factory, metadata, migrate

_db_counter = itertools.count()
_pg_reason: dict[str, str] = {"reason": "not started"}


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster | None]:
    cluster, reason = start_cluster()
    _pg_reason["reason"] = reason
    try:
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.fixture(scope="session")
def pg_shared_url(pg_cluster: PgCluster | None) -> str | None:
    """One migrated database shared by the repository tests (tables emptied before each test)."""
    if pg_cluster is None:
        return None
    url = pg_cluster.create_database("vnfm_shared")
    migrate(url)
    return url


def fresh_database_url(kind: str, tmp_path: Path, pg_cluster: PgCluster | None) -> str:
    """An empty database (not migrated)."""
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'fresh' / 'vnfm.db'}"
    if pg_cluster is None:
        pytest.skip(f"PostgreSQL unavailable: {pg_cluster_reason()}")
    return pg_cluster.create_database(f"vnfm_fresh_{next(_db_counter)}")


def pg_cluster_reason() -> str:
    return _pg_reason["reason"]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'vnfm.db'}"
        migrate(url)
        return url
    shared = request.getfixturevalue("pg_shared_url")
    if shared is None:
        pytest.skip(f"PostgreSQL unavailable: {pg_cluster_reason()}")
    engine = sa.create_engine(shared)
    try:
        with engine.begin() as conn:
            names = ", ".join(t.name for t in metadata.sorted_tables)
            conn.exec_driver_sql(f"TRUNCATE {names} CASCADE")
    finally:
        engine.dispose()
    return str(shared)


@pytest.fixture
def session_factory(db_url: str) -> Iterator[sessionmaker[Session]]:
    factory = make_session_factory(db_url)
    yield factory
    bind = factory.kw["bind"]
    bind.dispose()


@pytest.fixture
def uow(session_factory: sessionmaker[Session]) -> Callable[[], SqlAlchemyUnitOfWork]:
    def make() -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(session_factory)

    return make
