"""Rollback of a failed instantiate and scale-out; fail of an operation rollback does not support."""

from __future__ import annotations

import pytest

from vnfm.domain.errors import Conflict
from vnfm.domain.model import OpState

from ...conftest import SEED_PARAMS, Harness


async def test_rollback_instantiate_and_scale_out(h: Harness) -> None:
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    h.rec.fail["instantiate_end"] = 1
    occ = await h.wait(app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": SEED_PARAMS}))
    assert occ.operation_state == OpState.FAILED_TEMP
    occ = await h.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK
    assert app.sim.deployment(inst.id) is None or not app.sim.deployment(inst.id).get("vnfcs")
    assert app.instances.get(inst.id).lock_op_id is None

    inst_id = await h.instantiated()
    before = app.instances.get(inst_id).resources.ids()
    h.rec.fail["scale_end"] = 1
    occ = await h.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                     "numberOfSteps": 2}))
    assert occ.operation_state == OpState.FAILED_TEMP
    added = app.instances.get(inst_id).resources.ids() - before
    assert len(added) == 2
    occ = await h.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK
    inst = app.instances.get(inst_id)
    assert inst.resources.ids() == before and inst.scale_levels["worker_instance"] == 0
    rb = [c for c in h.rec.calls if c.rollback and c.hook == "scale_start"][-1]
    assert {v.id for v in rb.removed} == added


async def test_fail_ends_the_operation_and_frees_the_instance(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    h.rec.fail["heal_start"] = 1
    occ = await h.wait(app.instances.heal(inst_id, {}))
    with pytest.raises(Conflict, match="not supported for HEAL"):
        app.instances.rollback(occ.id)
    occ = app.instances.fail(occ.id)
    assert occ.operation_state == OpState.FAILED
    with pytest.raises(Conflict, match="needs FAILED_TEMP"):
        app.instances.retry(occ.id)
    occ = await h.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.COMPLETED


async def test_retry_after_a_partial_rollback_redoes_what_the_rollback_undid(h: Harness) -> None:
    """A rollback that deleted the VNF's resources and then failed (FAILED_TEMP again), then retry:
    the forward stages the first attempt had completed run again, so the instance ends COMPLETED
    with its resources, not COMPLETED on nothing."""
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    h.rec.fail["instantiate_end"] = 1
    occ = await h.wait(app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": SEED_PARAMS}))
    assert occ.operation_state == OpState.FAILED_TEMP
    h.rec.fail["terminate_end"] = 1
    occ = await h.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "infra_undeploy" in occ.plan["rb_done"]
    assert not (app.sim.deployment(inst.id) or {}).get("vnfcs")
    occ = await h.wait(app.instances.retry(occ.id))
    assert occ.operation_state == OpState.COMPLETED
    got = app.instances.get(inst.id)
    assert got.resources.vnfcs and (app.sim.deployment(inst.id) or {}).get("vnfcs")
    assert {v.id for v in got.resources.vnfcs} == set(app.sim.deployment(inst.id)["vnfcs"])
