"""Repository behaviour, on SQLite and PostgreSQL (see conftest.backend)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from datetime import UTC, timedelta

import pytest
import sqlalchemy as sa

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork, tables
from vnfm.domain.errors import Conflict, NotFound
from vnfm.domain.model import InstantiationState, LcmOperation, OpOcc, OpState, VnfInstance

Uow = Callable[[], SqlAlchemyUnitOfWork]


def _body(uow: Uow, table: sa.Table, entity_id: str) -> dict:
    with uow() as u:
        return dict(u.tx.conn().execute(sa.select(table.c.body).where(table.c.id == entity_id)).scalar_one())


# ------------------------------------------------------------------------------------ round trips
def test_package_round_trip(uow: Uow) -> None:
    pkg = f.package()
    with uow() as u:
        u.packages.add(pkg)
        u.commit()
    with uow() as u:
        got = u.packages.get(pkg.id)
    assert got == pkg
    assert got is not pkg
    assert got.created_at.tzinfo is not None and got.created_at.utcoffset() == timedelta(0)
    assert _body(uow, tables.vnf_packages, pkg.id)["onboarding_state"] == "ONBOARDED"


def test_instance_round_trip_with_nested_resources(uow: Uow) -> None:
    inst = f.instance(lock_op_id="op-9")
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as u:
        got = u.instances.get(inst.id)
    assert got == inst
    assert got.resources.vnfcs[0].cps[0].ip_addresses == ["10.0.0.5", "fd00::5"]
    assert got.resources.vnfcs[0].storages[0].size_gb == 1.5
    assert got.resources.by_id("vnfc-1") is not None and got.resources.by_id("vnfc-1").cp("CP1") is not None
    assert got.vnf_state.value == "STOPPED"
    body = _body(uow, tables.vnf_instances, inst.id)
    assert body["resources"]["vnfcs"][0]["cps"][1]["virtual_link_id"] == "internalVL1"
    assert body["created_at"] == "2024-05-01T12:30:15.123456+00:00"


def test_op_occ_round_trip(uow: Uow) -> None:
    occ = f.op_occ()
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    with uow() as u:
        got = u.op_occs.get(occ.id)
    assert got == occ
    assert got.heartbeat is not None and got.heartbeat.tzinfo is not None
    assert got.heartbeat.utcoffset() == timedelta(0)
    assert got.operation is LcmOperation.SCALE and got.operation_state is OpState.FAILED_TEMP


def test_subscription_and_vim_round_trip(uow: Uow) -> None:
    sub, vim = f.subscription(), f.vim()
    with uow() as u:
        u.subscriptions.add(sub)
        u.vims.add(vim)
        u.commit()
    with uow() as u:
        assert u.subscriptions.get(sub.id) == sub
        assert u.vims.get(vim.id) == vim
        assert u.subscriptions.by_kind("vnfpkgm") == [sub]
        assert u.subscriptions.by_kind("vnflcm") == []
        assert u.vims.by_name("kubernetes_vim") == [vim]
        assert u.vims.default() == vim


def test_naive_datetimes_are_taken_as_utc(uow: Uow) -> None:
    inst = f.instance(created_at=f.T0.replace(tzinfo=None))
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as u:
        got = u.instances.get(inst.id)
    assert got is not None and got.created_at == f.T0 and got.created_at.tzinfo is not None


# ------------------------------------------------------------------------------------ identity / save
def test_get_returns_fresh_objects_and_save_writes_everything(uow: Uow) -> None:
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        inst.metadata["after_add"] = True  # not saved: the row must not see it
        u.commit()
    with uow() as u:
        a = u.instances.get(inst.id)
        b = u.instances.get(inst.id)
        assert a is not None and b is not None and a is not b
        assert "after_add" not in a.metadata
        a.metadata["x"] = 1
        a.resources.vnfcs[0].cps[0].ip_addresses.append("10.0.0.99")
        assert "x" not in b.metadata  # nothing shared between two gets
        assert u.instances.get(inst.id).metadata == b.metadata  # mutation without save: no effect
        a.instantiation_state = InstantiationState.NOT_INSTANTIATED
        a.vim_id = None
        u.instances.save(a)
        u.commit()
    with uow() as u:
        got = u.instances.get(inst.id)
    assert got == a
    assert got.metadata["x"] == 1 and "10.0.0.99" in got.resources.vnfcs[0].cps[0].ip_addresses
    with uow() as u:  # the indexed columns follow the entity
        row = u.tx.conn().execute(sa.select(tables.vnf_instances).where(tables.vnf_instances.c.id == inst.id)).one()
        assert row.instantiation_state == "NOT_INSTANTIATED" and row.vim_id is None


def test_save_of_missing_entity_raises_not_found(uow: Uow) -> None:
    with uow() as u, pytest.raises(NotFound):
        u.packages.save(f.package())
    with uow() as u, pytest.raises(NotFound):
        u.instances.save(f.instance())


def test_leaving_without_commit_rolls_back(uow: Uow) -> None:
    pkg = f.package()
    with uow() as u:
        u.packages.add(pkg)
        assert u.packages.get(pkg.id) == pkg  # visible inside its own transaction
    with uow() as u:
        assert u.packages.get(pkg.id) is None
        assert u.packages.list() == []


def test_uow_is_reusable_after_commit(uow: Uow) -> None:
    with uow() as u:
        u.vims.add(f.vim(name="a"))
        u.commit()
        u.vims.add(f.vim(name="b", is_default=False, created_at=f.T0 + timedelta(seconds=1)))
        u.commit()
    with uow() as u:
        assert [v.name for v in u.vims.list()] == ["a", "b"]


# ------------------------------------------------------------------------------------ delete / list
def test_delete_every_kind(uow: Uow) -> None:
    pkg, inst, occ, sub, vim = f.package(), f.instance(), f.op_occ(), f.subscription(), f.vim()
    with uow() as u:
        u.packages.add(pkg)
        u.packages.put_content(pkg.id, b"zip")
        u.instances.add(inst)
        u.op_occs.add(occ)
        u.subscriptions.add(sub)
        u.vims.add(vim)
        u.commit()
    with uow() as u:
        u.packages.delete(pkg.id)
        u.instances.delete(inst.id)
        u.op_occs.delete(occ.id)
        u.subscriptions.delete(sub.id)
        u.vims.delete(vim.id)
        u.instances.delete("does-not-exist")  # no error
        u.commit()
    with uow() as u:
        assert u.packages.get(pkg.id) is None and u.packages.get_content(pkg.id) is None
        assert u.instances.get(inst.id) is None and u.op_occs.get(occ.id) is None
        assert u.subscriptions.get(sub.id) is None and u.vims.get(vim.id) is None
        n = u.tx.conn().execute(sa.select(sa.func.count()).select_from(tables.vnf_package_contents)).scalar()
        assert n == 0


def test_list_ordering(uow: Uow) -> None:
    # Inserted out of order: list() sorts by created_at / start_time, not insertion order.
    insts = [f.instance(created_at=f.T0 + timedelta(minutes=m)) for m in (3, 1, 2)]
    occs_a = [f.op_occ("inst-a", start_time=f.T0 + timedelta(seconds=s)) for s in (30, 10, 20)]
    occ_b = f.op_occ("inst-b", start_time=f.T0 + timedelta(seconds=15))
    with uow() as u:
        for i in insts:
            u.instances.add(i)
        for o in [*occs_a, occ_b]:
            u.op_occs.add(o)
        u.commit()
    with uow() as u:
        assert [i.created_at for i in u.instances.list()] == sorted(i.created_at for i in insts)
        assert [int((o.start_time - f.T0).total_seconds()) for o in u.op_occs.list()] == [10, 15, 20, 30]
        assert [int((o.start_time - f.T0).total_seconds()) for o in u.op_occs.for_instance("inst-a")] == [10, 20, 30]
        assert [o.id for o in u.op_occs.for_instance("inst-b")] == [occ_b.id]
        assert u.op_occs.for_instance("nope") == []


def test_packages_by_vnfd_id(uow: Uow) -> None:
    a, b, c = f.package(vnfd_id="v1"), f.package(vnfd_id="v2"), f.package(vnfd_id="v1",
                                                                       created_at=f.T0 + timedelta(1))
    with uow() as u:
        for p in (c, a, b):
            u.packages.add(p)
        u.commit()
    with uow() as u:
        assert [p.id for p in u.packages.by_vnfd_id("v1")] == [a.id, c.id]
        assert u.packages.by_vnfd_id("none") == []


# ------------------------------------------------------------------------------------ package contents
def test_package_content_blob(uow: Uow) -> None:
    pkg = f.package()
    blob = os.urandom(3 * 1024 * 1024) + bytes(range(256))
    with uow() as u:
        u.packages.add(pkg)
        assert u.packages.get_content(pkg.id) is None
        u.packages.put_content(pkg.id, blob)
        u.commit()
    with uow() as u:
        assert u.packages.get_content(pkg.id) == blob
        assert u.packages.content_size(pkg.id) == len(blob)
        u.packages.put_content(pkg.id, b"replaced")  # replace, not a second row
        u.commit()
    with uow() as u:
        assert u.packages.get_content(pkg.id) == b"replaced"
        assert u.packages.list()[0] == pkg  # listing does not drag the blob along


# ------------------------------------------------------------------------------------ locks
def test_taking_the_lock_and_unlock_semantics(uow: Uow) -> None:
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as u:
        assert f.take_lock(u, inst.id, "op-1") is True
        assert f.take_lock(u, inst.id, "op-1") is True  # re-entrant for the holder
        assert f.take_lock(u, inst.id, "op-2") is False
        assert f.take_lock(u, "missing", "op-1") is False
        u.commit()
    assert _body(uow, tables.vnf_instances, inst.id)["lock_op_id"] == "op-1"
    with uow() as u:
        assert u.instances.get(inst.id).lock_op_id == "op-1"
        u.instances.unlock(inst.id, "op-2")  # not the holder: no effect
        u.commit()
    with uow() as u:
        assert u.instances.locked_by(inst.id) == "op-1"
        u.instances.unlock(inst.id, "op-1")
        u.commit()
    with uow() as u:
        assert u.instances.get(inst.id).lock_op_id is None
    assert _body(uow, tables.vnf_instances, inst.id)["lock_op_id"] is None


def test_lock_taken_in_rolled_back_uow_is_released(uow: Uow) -> None:
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as u:
        assert f.take_lock(u, inst.id, "op-1")
    with uow() as u:
        assert f.take_lock(u, inst.id, "op-2")
        u.commit()


def test_service_style_lock_then_save_then_release_by_save(uow: Uow) -> None:
    """A lock taken as the LCM service takes it, then a save by the holder; later released by save(None)."""
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as u:
        got = u.instances.get(inst.id)
        assert f.take_lock(u, inst.id, "op-1")
        got.lock_op_id = "op-1"
        got.metadata["touched"] = True
        u.instances.save(got)
        u.commit()
    with uow() as u:
        got = u.instances.get(inst.id)
        assert got.lock_op_id == "op-1" and got.metadata["touched"]
        got.lock_op_id = None
        u.instances.save(got)
        u.commit()
    with uow() as u:
        assert u.instances.locked_by(inst.id) is None


def test_save_refuses_to_overwrite_a_lock_changed_meanwhile(uow: Uow, backend: str) -> None:
    if backend == "sqlite":
        pytest.skip("SQLite serialises units of work (BEGIN IMMEDIATE): the interleaving cannot happen")
    inst = f.instance()
    with uow() as u:
        u.instances.add(inst)
        u.commit()
    with uow() as a:
        stale = a.instances.get(inst.id)  # reads lock_op_id = None
        with uow() as b:
            assert f.take_lock(b, inst.id, "op-b")
            b.commit()
        stale.metadata["x"] = 1
        with pytest.raises(Conflict):
            a.instances.save(stale)
    with uow() as u:
        assert u.instances.locked_by(inst.id) == "op-b"


# ------------------------------------------------------------------------------------ orphans
def _occ(state: OpState, heartbeat_age: float | None, owner: str | None = "dead") -> OpOcc:
    hb = None if heartbeat_age is None else f.T0 - timedelta(seconds=heartbeat_age)
    return f.op_occ(operation_state=state, heartbeat=hb, owner=owner)


def test_claim_orphans_only_stale_active_ones_and_only_once(uow: Uow) -> None:
    stale_processing = _occ(OpState.PROCESSING, 60)
    stale_rolling = _occ(OpState.ROLLING_BACK, 60)
    never_beaten = _occ(OpState.STARTING, None, owner=None)
    fresh = _occ(OpState.PROCESSING, 1, owner="alive")
    finals = [_occ(s, 60) for s in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK, OpState.FAILED_TEMP)]
    with uow() as u:
        for o in [stale_processing, stale_rolling, never_beaten, fresh, *finals]:
            u.op_occs.add(o)
        u.commit()
    stale_before = f.T0 - timedelta(seconds=30)
    now = f.T0 + timedelta(seconds=1)
    with uow() as u:
        claimed = u.op_occs.claim_orphans("worker-b", stale_before, now=now)
        u.commit()
    assert {o.id for o in claimed} == {stale_processing.id, stale_rolling.id, never_beaten.id}
    assert all(o.owner == "worker-b" and o.heartbeat == now for o in claimed)
    assert [o.start_time for o in claimed] == sorted(o.start_time for o in claimed)
    with uow() as u:
        assert u.op_occs.claim_orphans("worker-c", stale_before, now=now) == []
        got = u.op_occs.get(fresh.id)
        assert got.owner == "alive"
        for o in finals:
            assert u.op_occs.get(o.id).owner == "dead"
    body = _body(uow, tables.vnf_lcm_op_occs, stale_processing.id)
    assert body["owner"] == "worker-b" and body["heartbeat"] == now.isoformat()


def test_claim_orphans_in_rolled_back_uow_can_be_claimed_again(uow: Uow) -> None:
    occ = _occ(OpState.PROCESSING, 60)
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    with uow() as u:
        assert len(u.op_occs.claim_orphans("a", f.T0, now=f.T0)) == 1
    with uow() as u:
        assert [o.owner for o in u.op_occs.claim_orphans("b", f.T0, now=f.T0)] == ["b"]
        u.commit()


def test_heartbeat_only_for_the_owner(uow: Uow) -> None:
    occ = _occ(OpState.PROCESSING, 60, owner="w1")
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    later = f.T0 + timedelta(minutes=5)
    with uow() as u:
        assert u.op_occs.heartbeat(occ.id, "w2", later) is False
        assert u.op_occs.heartbeat("missing", "w1", later) is False
        assert u.op_occs.heartbeat(occ.id, "w1", later) is True
        u.commit()
    with uow() as u:
        got = u.op_occs.get(occ.id)
    assert got.heartbeat == later and got.heartbeat.tzinfo == UTC
    # the column only: a heartbeat never rewrites the JSON body
    assert _body(uow, tables.vnf_lcm_op_occs, occ.id)["heartbeat"] == occ.heartbeat.isoformat()
    with uow() as u:  # not stale any more
        assert u.op_occs.claim_orphans("w3", later - timedelta(seconds=30)) == []


def test_active_occurrences(uow: Uow) -> None:
    a, b = _occ(OpState.PROCESSING, 1), _occ(OpState.COMPLETED, 1)
    with uow() as u:
        u.op_occs.add(a)
        u.op_occs.add(b)
        u.commit()
    with uow() as u:
        assert [o.id for o in u.op_occs.active()] == [a.id]


# ------------------------------------------------------------------------------------ kv
def test_kv(uow: Uow) -> None:
    with uow() as u:
        assert u.kv.get("sim", "servers") is None
        assert u.kv.get("sim", "servers", default={}) == {}
        u.kv.put("sim", "servers", {"srv-1": {"status": "ACTIVE", "ips": ["10.0.0.1"]}})
        u.kv.put("sim", "counter", 1)
        u.kv.put("other", "counter", "x")
        u.commit()
    with uow() as u:
        u.kv.put("sim", "counter", 2)  # overwrite
        u.kv.put("sim", "a-list", [1, None, {"b": True}])
        u.commit()
    with uow() as u:
        assert u.kv.get("sim", "counter") == 2
        assert u.kv.get("other", "counter") == "x"
        assert u.kv.items("sim") == [
            ("a-list", [1, None, {"b": True}]),
            ("counter", 2),
            ("servers", {"srv-1": {"status": "ACTIVE", "ips": ["10.0.0.1"]}}),
        ]
        u.kv.delete("sim", "counter")
        u.commit()
    with uow() as u:
        assert [k for k, _ in u.kv.items("sim")] == ["a-list", "servers"]
        assert u.kv.items("nothing") == []


def test_instance_entity_default_values_round_trip(uow: Uow) -> None:
    inst = VnfInstance(vnfd_id="v")
    occ = OpOcc(vnf_instance_id=inst.id, operation=LcmOperation.INSTANTIATE)
    with uow() as u:
        u.instances.add(inst)
        u.op_occs.add(occ)
        u.commit()
    with uow() as u:
        assert u.instances.get(inst.id) == inst
        assert u.op_occs.get(occ.id) == occ
        assert dataclasses.asdict(u.op_occs.get(occ.id)) == dataclasses.asdict(occ)
