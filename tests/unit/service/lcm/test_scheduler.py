"""The engine's scheduling: one operation at a time per instance; an orphaned occurrence (its
process died) is taken over by another engine, becomes FAILED_TEMP and retry completes it."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest

from vnfm.domain.errors import Conflict
from vnfm.domain.model import OpState, utcnow

from ..conftest import Harness


async def test_second_operation_gets_409_while_one_runs(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    app.sim.config.boot_time = 0.3
    occ = app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    with pytest.raises(Conflict, match=occ.id):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    assert (await h.wait(occ)).operation_state == OpState.COMPLETED


async def test_crash_mid_operation_becomes_failed_temp_and_retry_completes(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vnfm")
    app = h.app
    inst_id = await h.instantiated()
    app.sim.config.boot_time = 5.0
    occ = app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while app.instances.op_get(occ.id).plan.get("current") != "infra_update":
        assert loop.time() < deadline
        await asyncio.sleep(0.01)
    await app.engine.stop()  # the process "dies": the occurrence stays PROCESSING
    assert app.instances.op_get(occ.id).operation_state == OpState.PROCESSING
    app.sim.config.boot_time = 0
    # A new engine (as after a restart) finds the orphan once its heartbeat is stale.
    from vnfm.service.lcm.scheduler import LcmEngine

    eng = app.engine
    fresh = LcmEngine(eng.uow, vnfd_of=eng.vnfd_of, files_of=eng.files_of, infra_drivers=eng.infra_drivers,
                      vim_of=eng.vim_of, mgmt=eng.mgmt, liveness=eng.liveness, worker_id="restarted",
                      orphan_after=30)
    app.engine = fresh
    await fresh.start()
    # Its heartbeat is still fresh: the new engine leaves it alone.
    assert app.instances.op_get(occ.id).operation_state == OpState.PROCESSING
    # The dead process's last heartbeat ages past orphan_after (set back, not waited for).
    with eng.uow() as uow:
        assert uow.op_occs.heartbeat(occ.id, eng.worker_id, utcnow() - timedelta(seconds=60))
        uow.commit()
    await fresh.recover()
    taken = [r for r in caplog.records if "taking over orphaned operation" in r.getMessage()]
    assert len(taken) == 1 and taken[0].levelname == "WARNING"
    assert (taken[0].op, taken[0].instance, taken[0].state) == (occ.id, inst_id, "PROCESSING")  # type: ignore[attr-defined]
    assert "becomes FAILED_TEMP" in taken[0].getMessage()
    cur = app.instances.op_get(occ.id)
    assert cur.operation_state == OpState.FAILED_TEMP
    assert "stopped during stage 'infra_update'" in cur.error["detail"]
    app.instances.submit = lambda op_id, rb: fresh.submit(op_id, rollback=rb)
    done = await h.wait(app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert app.instances.get(inst_id).resources.counts()["workerNode"] == 3


async def test_a_job_reads_its_vim_in_the_unit_of_work_that_loads_it(h: Harness) -> None:
    """The engine resolves the instance's VIM inside the load's unit of work (`vim_in`), not in
    one of its own (`vim_of`); the VIM it runs against is the instance's."""
    engine = h.app.engine
    apart: list[str | None] = []
    inside: list[str | None] = []
    vim_of, vim_in = engine.vim_of, engine.vim_in
    assert vim_in is not None

    def counted_of(vim_id: str | None) -> object:
        apart.append(vim_id)
        return vim_of(vim_id)

    def counted_in(uow: object, vim_id: str | None) -> object:
        inside.append(vim_id)
        return vim_in(uow, vim_id)  # type: ignore[arg-type]

    engine.vim_of, engine.vim_in = counted_of, counted_in  # type: ignore[assignment]
    inst_id = await h.instantiated()
    vim_id = h.app.instances.get(inst_id).vim_id
    assert vim_id and inside == [vim_id] and apart == []
    assert vim_in(None, None) is None  # type: ignore[arg-type]
