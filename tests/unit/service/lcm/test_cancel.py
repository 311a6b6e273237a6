"""SOL003 cancel of a running occurrence: GRACEFUL stops before the next stage, FORCEFUL at once;
either ends FAILED_TEMP, from where retry, rollback or fail go on as usual."""

from __future__ import annotations

import asyncio

import pytest

from vnfm.domain.errors import BadRequest, Conflict, NotFound
from vnfm.domain.model import OpOcc, OpState

from ..conftest import Harness

SCALE_OUT = {"type": "SCALE_OUT", "aspectId": "worker_instance"}


async def _in_stage(h: Harness, occ: OpOcc, stage: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while h.app.instances.op_get(occ.id).plan.get("current") != stage:
        assert loop.time() < deadline, h.app.instances.op_get(occ.id).plan
        await asyncio.sleep(0.005)


async def test_graceful_cancel_lets_the_stage_finish_then_stops(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    app.sim.config.boot_time = 0.5
    occ = app.instances.scale(inst_id, SCALE_OUT)
    await _in_stage(h, occ, "infra_update")
    pending = app.instances.cancel(occ.id, {"cancelMode": "GRACEFUL"})
    assert pending.is_cancel_pending and pending.cancel_mode == "GRACEFUL"
    now = app.instances.op_get(occ.id)
    assert now.operation_state == OpState.PROCESSING and now.is_cancel_pending  # the engine keeps it
    with pytest.raises(Conflict, match="already being cancelled"):
        app.instances.cancel(occ.id, {"cancelMode": "FORCEFUL"})
    done = await h.wait(occ)
    assert done.operation_state == OpState.FAILED_TEMP
    assert "cancelled (GRACEFUL) on request before stage" in done.error["detail"]
    assert not done.is_cancel_pending and done.cancel_mode is None
    assert "infra_update" in done.plan["done"]  # the running stage was not cut short
    app.sim.config.boot_time = 0
    again = await h.wait(app.instances.retry(occ.id))
    assert again.operation_state == OpState.COMPLETED, again.error
    assert app.instances.get(inst_id).resources.counts()["workerNode"] == 3


async def test_forceful_cancel_interrupts_the_stage_and_rollback_undoes_it(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    before = app.instances.get(inst_id).resources.counts()["workerNode"]
    app.sim.config.boot_time = 60  # the new VM would take a minute
    occ = app.instances.scale(inst_id, SCALE_OUT)
    await _in_stage(h, occ, "infra_update")
    app.instances.cancel(occ.id, {"cancelMode": "FORCEFUL"})
    done = await h.wait(occ, timeout=5)  # not a minute
    assert done.operation_state == OpState.FAILED_TEMP
    assert "cancelled (FORCEFUL) on request during stage 'infra_update'" in done.error["detail"]
    assert "infra_update" not in done.plan["done"]
    assert app.instances.get(inst_id).lock_op_id == occ.id  # still to be resolved
    app.sim.config.boot_time = 0
    back = await h.wait(app.instances.rollback(occ.id))
    assert back.operation_state == OpState.ROLLED_BACK, back.error
    assert app.instances.get(inst_id).resources.counts()["workerNode"] == before


async def test_cancel_needs_a_running_occurrence_and_a_mode(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    occ = await h.wait(app.instances.scale(inst_id, SCALE_OUT))
    with pytest.raises(Conflict, match="COMPLETED; cancel needs PROCESSING or ROLLING_BACK"):
        app.instances.cancel(occ.id, {"cancelMode": "GRACEFUL"})
    with pytest.raises(NotFound):
        app.instances.cancel("no-such-occurrence", {"cancelMode": "GRACEFUL"})
    with pytest.raises(BadRequest, match="cancelMode"):
        app.instances.cancel(occ.id, {"cancelMode": "NOW"})
    with pytest.raises(BadRequest, match="cancelMode"):
        app.instances.cancel(occ.id, {})
