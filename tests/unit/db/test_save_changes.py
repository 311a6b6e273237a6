"""Cheap checkpoints (issue 24 item 4): `save_changes` writes only what differs from the runner's
last write (changed columns, changed body keys, appended progress lines), sealed, fenced, and
leaves a cancel recorded meanwhile in the row while the occurrence is cancellable."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta

from cryptography.fernet import Fernet
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, tables
from vnfm.domain import lcm
from vnfm.domain.model import OpOcc, OpState
from vnfm.service.secrets import SecretBox

Uow = Callable[[], SqlAlchemyUnitOfWork]


def _running(**kw: object) -> OpOcc:
    return f.op_occ(operation_state=OpState.PROCESSING, owner="me", epoch=2, is_cancel_pending=False,
                    cancel_mode=None, error=None, events=[{"time": "t0", "stage": "s", "message": "m0"}], **kw)


def _stored(uow: Uow, occ: OpOcc) -> OpOcc:
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    return copy.deepcopy(occ)


def _get(uow: Uow, op_id: str) -> OpOcc:
    with uow() as u:
        got = u.op_occs.get(op_id)
    assert got is not None
    return got


def _save(uow: Uow, occ: OpOcc, since: OpOcc, fence: tuple[str | None, int] = ("me", 2)) -> tuple[bool, str | None]:
    with uow() as u:
        res = u.op_occs.save_changes(occ, since, *fence)
        u.commit()
    return res


def test_only_the_changes_are_written_and_the_row_reads_back_whole(uow: Uow) -> None:
    occ = _running()
    since = _stored(uow, occ)
    occ.events += [{"time": "t1", "stage": "s", "message": "m1"}, {"time": "t2", "stage": "s", "message": "m2"}]
    occ.plan = {"done": ["a"], "vnfcs": [{"id": "v1"}]}
    occ.stage = "a"
    occ.heartbeat = f.T0 + timedelta(seconds=9)
    assert _save(uow, occ, since) == (True, None)
    got = _get(uow, occ.id)
    assert (got.events, got.plan, got.stage, got.heartbeat) == (occ.events, occ.plan, "a", occ.heartbeat)
    assert got.operation_params == occ.operation_params and got.resource_changes == occ.resource_changes

    since = copy.deepcopy(occ)  # trimmed log (not a prefix any more): the list is replaced whole
    occ.events = occ.events[1:] + [{"time": "t3", "stage": "s", "message": "m3"}]
    lcm.transition(occ, OpState.FAILED_TEMP, error={"status": 500, "detail": "boom"})
    occ.owner = None
    assert _save(uow, occ, since) == (True, None)
    got = _get(uow, occ.id)
    assert [e["message"] for e in got.events] == ["m1", "m2", "m3"]
    assert (got.operation_state, got.owner, got.error) == (OpState.FAILED_TEMP, None, occ.error)
    with uow() as u:  # the columns follow the body
        state, owner = u.tx.conn().execute(select(tables.vnf_lcm_op_occs.c.operation_state,
                                                tables.vnf_lcm_op_occs.c.owner)).one()
    assert (state, owner) == ("FAILED_TEMP", None)


def test_a_fenced_off_runner_writes_nothing(uow: Uow) -> None:
    occ = _running()
    since = _stored(uow, occ)
    occ.stage = "zombie"
    assert _save(uow, occ, since, ("me", 1)) == (False, None)
    assert _save(uow, occ, since, ("other", 2)) == (False, None)
    assert _get(uow, occ.id).stage == since.stage


def test_a_cancel_recorded_meanwhile_is_kept_while_cancellable_and_ended_by_a_transition(uow: Uow) -> None:
    occ = _running()
    since = _stored(uow, occ)
    with uow() as u:  # the API records a cancel between two checkpoints
        api = u.op_occs.get_for_update(occ.id)
        assert api is not None
        api.is_cancel_pending, api.cancel_mode = True, "GRACEFUL"
        u.op_occs.save(api)
        u.commit()
    occ.events.append({"time": "t1", "stage": "s", "message": "m1"})
    assert _save(uow, occ, since) == (True, "GRACEFUL")  # learnt from the write itself
    got = _get(uow, occ.id)
    assert got.is_cancel_pending and got.cancel_mode == "GRACEFUL" and len(got.events) == 2

    since = copy.deepcopy(occ)
    lcm.transition(occ, OpState.FAILED_TEMP, error={"status": 409, "detail": "cancelled"})
    assert _save(uow, occ, since) == (True, None)  # FAILED_TEMP ends the cancellation
    got = _get(uow, occ.id)
    assert not got.is_cancel_pending and got.cancel_mode is None


def test_changed_secrets_are_sealed(session_factory: sessionmaker[Session]) -> None:
    box = SecretBox(Fernet.generate_key())

    def uow() -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(session_factory, box)

    occ = _running()
    since = _stored(uow, occ)
    occ.operation_params = {**occ.operation_params, "additionalParams": {"password": "s3cret-value"}}
    assert _save(uow, occ, since) == (True, None)
    with uow() as u:
        body = u.tx.conn().execute(select(tables.vnf_lcm_op_occs.c.body)).scalar_one()
    assert "s3cret-value" not in str(body)
    assert _get(uow, occ.id).operation_params["additionalParams"]["password"] == "s3cret-value"
