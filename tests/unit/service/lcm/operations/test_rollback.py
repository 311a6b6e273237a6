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
