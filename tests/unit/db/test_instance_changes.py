"""A stage's write of its instance (issue 24 item 4): `instances.save_changes` writes only what
differs from the instance as the runner last read or wrote it (changed columns and body keys,
patched in SQL, only those sealed), with the same lock check as a whole `save`."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import event, select
from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, tables
from vnfm.domain.errors import Conflict, NotFound
from vnfm.domain.model import InstantiationState, VnfInstance
from vnfm.service.secrets import SecretBox

Uow = Callable[[], SqlAlchemyUnitOfWork]
T = tables.vnf_instances


def _stored(uow: Uow, inst: VnfInstance) -> VnfInstance:
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    return copy.deepcopy(inst)


def _save(uow: Uow, inst: VnfInstance, since: VnfInstance) -> None:
    with uow() as u:
        u.instances.save_changes(inst, since)
        u.commit()


def _get(uow: Uow, inst_id: str) -> VnfInstance:
    with uow() as u:
        got = u.instances.get(inst_id)
    assert got is not None
    return got


def test_only_the_changes_are_written_and_the_row_reads_back_whole(uow: Uow) -> None:
    inst = f.instance(lock_op_id="op-1", driver_state={"kubeadm": {"step": 1}})
    since = _stored(uow, inst)
    with uow() as u:  # another writer changes a key this runner leaves alone: it stays
        u.tx.conn().execute(T.update().where(T.c.id == inst.id).values(
            body=dict(u.tx.conn().execute(select(T.c.body).where(T.c.id == inst.id)).scalar_one(),
                      metadata={"other": "writer"})))
        u.commit()
    inst.instantiation_state = InstantiationState.INSTANTIATED
    inst.driver_state = {"kubeadm": {"step": 2, "masters": ["m0"]}}
    inst.lock_op_id = None
    _save(uow, inst, since)
    got = _get(uow, inst.id)
    assert (got.instantiation_state, got.driver_state, got.lock_op_id) == (
        InstantiationState.INSTANTIATED, inst.driver_state, None)
    assert got.metadata == {"other": "writer"}
    assert (got.resources, got.additional_params, got.vim_connection_info) == (
        inst.resources, inst.additional_params, inst.vim_connection_info)
    with uow() as u:  # the columns follow the body
        state, lock = u.tx.conn().execute(select(T.c.instantiation_state, T.c.lock_op_id)).one()
    assert (state, lock) == ("INSTANTIATED", None)


def test_nothing_changed_sends_no_statement(uow: Uow, session_factory: sessionmaker[Session]) -> None:
    inst = f.instance()
    since = _stored(uow, inst)
    sent: list[str] = []
    engine = session_factory.kw["bind"]
    listener = lambda *a: sent.append(a[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    try:
        _save(uow, inst, since)
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    assert not [s for s in sent if s.lstrip().upper().startswith(("UPDATE", "SELECT"))]


def test_the_lock_check_and_a_missing_instance(uow: Uow) -> None:
    inst = f.instance(lock_op_id=None)
    since = _stored(uow, inst)
    with uow() as u:
        mine = u.instances.get(inst.id)  # this unit of work saw the instance unlocked
        assert mine is not None
        # another operation's lock, as a concurrent transaction would have left it (PostgreSQL)
        u.tx.conn().execute(T.update().where(T.c.id == inst.id).values(lock_op_id="op-other"))
        changed = copy.deepcopy(mine)
        changed.vnf_instance_name = "renamed"
        with pytest.raises(Conflict):
            u.instances.save_changes(changed, mine)
    gone = f.instance()
    with uow() as u, pytest.raises(NotFound):
        u.instances.save_changes(dataclasses.replace(gone, vnf_instance_name="x"), gone)
    with uow() as u, pytest.raises(ValueError, match="saved as changes since"):
        u.instances.save_changes(inst, f.instance())
    assert _get(uow, inst.id).vnf_instance_name == since.vnf_instance_name


def test_changed_secrets_are_sealed_and_read_back(session_factory: sessionmaker[Session]) -> None:
    box = SecretBox(Fernet.generate_key())

    def uow() -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(session_factory, box)

    inst = f.instance()
    since = _stored(uow, inst)
    inst.vim_connection_info = [{"id": "c1", "vimId": "v1", "accessInfo": {"password": "s3cret-value"}}]
    _save(uow, inst, since)
    with uow() as u:
        body = u.tx.conn().execute(select(T.c.body).where(T.c.id == inst.id)).scalar_one()
    assert "s3cret-value" not in str(body)
    assert _get(uow, inst.id).vim_connection_info[0]["accessInfo"]["password"] == "s3cret-value"
