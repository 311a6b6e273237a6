"""The instance service's side of LCM requests: bad requests are refused before any occurrence
exists; an unknown OpenStack VIM falls back to the default one (and says so) until one is registered."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from vnfm.domain.errors import BadRequest, Conflict, UnprocessableEntity
from vnfm.domain.model import OpState, UsageState

from .conftest import SEED_PARAMS, Harness


async def test_bad_requests_are_rejected_before_anything_starts(h: Harness) -> None:
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    with pytest.raises(UnprocessableEntity, match="flavourId 'nope'"):
        app.instances.instantiate(inst.id, {"flavourId": "nope"})
    with pytest.raises(BadRequest, match="bogus: not an attribute"):
        app.instances.instantiate(inst.id, {"flavourId": "simple", "bogus": 1})
    with pytest.raises(Conflict, match="NOT_INSTANTIATED"):
        app.instances.scale(inst.id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    assert app.instances.op_list() == []
    inst_id = await h.instantiated()
    with pytest.raises(UnprocessableEntity, match="max_scale_level"):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 99})
    with pytest.raises(BadRequest, match="numberOfSteps"):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": "x"})
    with pytest.raises(UnprocessableEntity, match="not a VNFC"):
        app.instances.heal(inst_id, {"vnfcInstanceId": ["no-such-vnfc"]})


async def test_unknown_openstack_vim_runs_on_the_default_and_says_so(h: Harness) -> None:
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    body = {"flavourId": "simple", "additionalParams": SEED_PARAMS,
            "vimConnectionInfo": [{"id": "v1", "vimId": "c3369b54-e376-4423-bb61-afd255900fea",
                                   "vimType": "openstack"}]}
    occ = await h.wait(app.instances.instantiate(inst.id, body))
    assert occ.operation_state == OpState.COMPLETED
    [warning] = occ.warnings  # kept with the occurrence, and in its progress
    assert "c3369b54-e376-4423-bb61-afd255900fea" in warning and "simulated cloud" in warning
    assert any(e["message"] == warning for e in occ.events)
    # The instance names the VIM it really runs on (the entry keeps the request's id).
    stored = app.instances.get(inst.id)
    sim = app.vims.simulator_vim()
    assert sim is not None
    assert stored.vim_connection_info == [{"id": "v1", "vimId": sim.id, "vimType": "simulator"}]
    assert stored.vim_id == sim.id and stored.vim_connection_id == "v1"
    # A registered OpenStack VIM makes an unknown vimId an error instead of a silent fallback.
    app.vims.register_body({"name": "os", "vimType": "openstack", "accessInfo": {"authUrl": "http://x/v3"}})
    inst2 = app.instances.create({"vnfdId": h.vnfd_id})
    with pytest.raises(UnprocessableEntity, match="VIM nope is not registered"):
        app.instances.instantiate(inst2.id, {"flavourId": "simple", "vimConnectionInfo": [
            {"id": "v2", "vimId": "nope", "vimType": "openstack"}]})


def test_package_usage_follows_its_instances_in_their_own_transactions(h: Harness) -> None:
    """Create and delete write the package's usageState in the instance's transaction, and only
    when it changes (a create of a package already IN_USE writes no package row)."""
    app = h.app
    usage = lambda: app.packages.get(h.pkg_id).usage_state  # noqa: E731
    writes: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        if statement.lstrip().upper().startswith("UPDATE VNF_PACKAGES"):
            writes.append(statement)

    first = app.instances.create({"vnfdId": h.vnfd_id})
    assert usage() == UsageState.IN_USE
    event.listen(Engine, "before_cursor_execute", seen)
    try:
        second = app.instances.create({"vnfdId": h.vnfd_id})
        assert writes == []  # already IN_USE: nothing written
        app.instances.delete(first.id)
        assert usage() == UsageState.IN_USE and writes == []  # the second still uses it
        app.instances.delete(second.id)
        assert usage() == UsageState.NOT_IN_USE and len(writes) == 1
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    app.instances.create({"vnfdId": h.vnfd_id})
    assert usage() == UsageState.IN_USE


def test_an_instance_another_operation_holds_or_takes_meanwhile_is_not_taken(h: Harness) -> None:
    """The locking transaction takes the instance only while no operation holds it: held already
    (a PATCH checks no state), or taken while the request was planned, it answers 409, stores no
    occurrence and leaves the holder its lock."""
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})

    def lock(op_id: str | None) -> None:
        with app.uow() as u:
            current = u.instances.get(inst.id)
            assert current is not None
            current.lock_op_id = op_id
            u.instances.save(current)
            u.commit()

    lock("op-other")
    with pytest.raises(Conflict, match="operation in progress"):
        app.instances.modify(inst.id, {"vnfInstanceName": "renamed"})
    assert app.instances.get(inst.id).lock_op_id == "op-other"
    lock(None)
    with pytest.raises(Conflict, match="changed while the request was checked"):
        app.instances.modify(inst.id, {"vnfInstanceName": "renamed"}, expect=lambda _inst: lock("op-late"))
    stored = app.instances.get(inst.id)
    assert stored.lock_op_id == "op-late" and stored.vnf_instance_name != "renamed"
    assert app.instances.op_list() == []
