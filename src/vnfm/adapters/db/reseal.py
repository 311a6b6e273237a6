"""Once per database: encrypt the secrets of instance and occurrence bodies that were stored in
clear by a release before secrets at rest covered request parameters (the unit of work seals every
later write itself)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import String, cast, select, update

from vnfm.adapters.db import tables
from vnfm.adapters.db.uow import SqlAlchemyUnitOfWork
from vnfm.service.ports import RotatingSealer, Sealer

FLAG = ("vnfm", "request_secrets_sealed")


def seal_stored(uow: SqlAlchemyUnitOfWork, box: Sealer) -> int:
    """Seal what is stored in clear; returns how many rows were rewritten. The rows are locked
    while they are rewritten (PostgreSQL: FOR UPDATE; SQLite: the unit of work's write lock), so a
    runner writing at the same time waits and then writes its own (sealed) copy."""
    with uow:
        if uow.kv.get(*FLAG):
            return 0
        rewritten = _rewrite(uow, (tables.vnf_instances, tables.vnf_lcm_op_occs), box.seal)
        uow.kv.put(*FLAG, True)
        uow.commit()
    return rewritten


def rotate_stored(uow: SqlAlchemyUnitOfWork, box: RotatingSealer) -> int:
    """Re-encrypt every stored secret (VIM credentials, subscription credentials, instance and
    occurrence secrets) with the newest key of `box`; returns how many rows were rewritten. Rows
    whose secrets already are under the newest key are left alone, so it can run at every start."""
    if not box.rotating:
        return 0
    with uow:
        rewritten = _rewrite(uow, (tables.vims, tables.subscriptions, tables.vnf_instances, tables.vnf_lcm_op_occs),
                             box.rotate)
        uow.commit()
    return rewritten


def check_stored(uow: SqlAlchemyUnitOfWork, box: Sealer) -> None:
    """Decrypt one stored secret of each table that has one: OperationFailed (at start-up, before
    the engine runs) when the keys are not those they were encrypted with."""
    with uow:
        conn = uow.tx.conn()
        for table in (tables.vims, tables.subscriptions, tables.vnf_instances, tables.vnf_lcm_op_occs):
            stmt = select(table.c.body).where(cast(table.c.body, String).like("%enc:v1:%")).limit(1)
            body = conn.execute(stmt).scalar()
            if body is not None:
                box.unseal(body)


def _rewrite(uow: SqlAlchemyUnitOfWork, tabs: tuple[Any, ...], change: Callable[[Any], Any]) -> int:
    """Rewrite each row's body as `change` makes it (rows locked on PostgreSQL); how many changed."""
    conn = uow.tx.conn()
    rewritten = 0
    for table in tabs:
        stmt = select(table.c.id, table.c.body)
        if conn.dialect.name == "postgresql":
            stmt = stmt.with_for_update()
        for row_id, body in conn.execute(stmt).all():
            changed = change(body)
            if changed != body:
                conn.execute(update(table).where(table.c.id == row_id).values(body=changed))
                rewritten += 1
    return rewritten
