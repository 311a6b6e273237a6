"""migrate(): the hand-written migrations produce exactly the models' schema, also when several
processes run it at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from tests.unit.db import factories
from tests.unit.db.conftest import fresh_database_url
from tests.unit.db.pgcluster import PgCluster
from vnfm.adapters.db import (
    SqlAlchemyUnitOfWork,
    current_revision,
    head_revision,
    make_engine,
    make_session_factory,
    mappers,
    metadata,
    migrate,
    tables,
)


def _diffs(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
            return list(compare_metadata(ctx, metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_migrate_empty_database_matches_models(backend: str, tmp_path: Path,
                                               pg_cluster: PgCluster | None) -> None:
    url = fresh_database_url(backend, tmp_path, pg_cluster)
    assert _diffs(url)  # empty database: the comparison does see the missing tables
    migrate(url)
    assert _tables(url) == set(metadata.tables) | {"alembic_version"}
    assert _diffs(url) == []
    assert current_revision(url) == head_revision() == "0013"
    migrate(url)  # idempotent
    assert current_revision(url) == "0013"


def test_upgrade_from_the_first_schema(backend: str, tmp_path: Path, pg_cluster: PgCluster | None) -> None:
    """A database made by an earlier release (0001) gets the notification outbox and the list indexes."""
    url = fresh_database_url(backend, tmp_path, pg_cluster)
    migrate(url, "0001")
    assert "notification_outbox" not in _tables(url)
    migrate(url)
    assert current_revision(url) == "0013"
    assert _diffs(url) == []


def test_compare_detects_a_schema_drift(backend: str, tmp_path: Path, pg_cluster: PgCluster | None) -> None:
    """The no-diff assertion above can fail: drop one index and the comparison reports it."""
    url = fresh_database_url(backend, tmp_path, pg_cluster)
    migrate(url)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP INDEX ix_vnf_instances_lock_op_id")
    finally:
        engine.dispose()
    diffs = _diffs(url)
    assert len(diffs) == 1 and diffs[0][0] == "add_index"  # type: ignore[index]


def test_concurrent_migrations_from_several_processes(backend: str, tmp_path: Path,
                                                      pg_cluster: PgCluster | None) -> None:
    url = fresh_database_url(backend, tmp_path, pg_cluster)
    code = "import sys; from vnfm.adapters.db import migrate; migrate(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()[-2000:]
    assert current_revision(url) == head_revision()
    assert _diffs(url) == []


def test_kubeadm_driver_state_is_carried_over(backend: str, tmp_path: Path, pg_cluster: PgCluster | None) -> None:
    """0003: the Kubernetes cluster driver is now `kubeadm`; an instance built before keeps its state."""
    url = fresh_database_url(backend, tmp_path, pg_cluster)
    migrate(url, "0002")
    inst = factories.instance(driver_state={"kubernetes": {"host_keys": {"vnfc-1": "ssh-ed25519 AAAA"}}})
    factory = make_session_factory(url)
    with factory() as session:  # the row as 0002 had it (no tenant column yet)
        session.execute(sa.insert(tables.vnf_instances), mappers.instance_to_row(inst))
        session.commit()
    migrate(url)
    with SqlAlchemyUnitOfWork(factory) as uow:
        got = uow.instances.get(inst.id)
    assert got is not None and got.tenant == "default"  # 0007: what existed belongs to the default tenant
    factory.kw["bind"].dispose()
    assert got is not None
    assert got.driver_state == {"kubeadm": {"host_keys": {"vnfc-1": "ssh-ed25519 AAAA"}}}
