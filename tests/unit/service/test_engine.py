"""The LCM engine on the simulated cloud: every operation, its hooks, failures, retry, rollback, crash."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from vnfm.domain.errors import BadRequest, Conflict, UnprocessableEntity
from vnfm.domain.model import InstantiationState, OpState, utcnow

from .conftest import SEED_PARAMS, Harness


async def test_full_lifecycle_with_exact_vnfcs_handed_to_hooks(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    inst = app.instances.get(inst_id)
    assert inst.instantiation_state == InstantiationState.INSTANTIATED
    assert inst.resources.counts() == {"masterNode": 1, "workerNode": 2}
    assert h.rec.hooks() == ["instantiate_end"]
    assert {v.id for v in h.rec.calls[-1].added} == inst.resources.ids()

    before = inst.resources.ids()
    occ = await h.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                     "numberOfSteps": "2"}))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    inst = app.instances.get(inst_id)
    added = inst.resources.ids() - before
    assert len(added) == 2 and inst.scale_levels["worker_instance"] == 2
    end = h.rec.calls[-1]
    assert end.hook == "scale_end" and {v.id for v in end.added} == added
    assert sorted(c["changeType"] for c in occ.resource_changes["affectedVnfcs"]) == ["ADDED", "ADDED"]

    newest = max(inst.resources.of_vdu("workerNode"), key=lambda v: v.seq)
    occ = await h.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.COMPLETED
    start = [c for c in h.rec.calls if c.hook == "scale_start"][-1]
    assert [v.id for v in start.removed] == [newest.id]
    assert newest.id not in app.instances.get(inst_id).resources.ids()

    worker = app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    occ = await h.wait(app.instances.heal(inst_id, {"vnfcInstanceId": [worker.id]}))
    assert occ.operation_state == OpState.COMPLETED
    healed = app.instances.get(inst_id).resources.by_id(worker.id)
    assert healed is not None and healed.server_id != worker.server_id
    assert healed.cps[0].ip_addresses == worker.cps[0].ip_addresses
    assert [v.id for v in h.rec.calls[-1].healed] == [worker.id]

    old_servers = {v.server_id for v in app.instances.get(inst_id).resources.vnfcs}
    occ = await h.wait(app.instances.heal(inst_id, {}))
    assert occ.operation_state == OpState.COMPLETED
    inst = app.instances.get(inst_id)
    assert inst.resources.counts() == {"masterNode": 1, "workerNode": 3}
    assert not old_servers & {v.server_id for v in inst.resources.vnfcs}
    assert h.rec.calls[-1].heal_entire

    occ = await h.wait(app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert occ.operation_state == OpState.COMPLETED
    assert app.instances.get(inst_id).instantiation_state == InstantiationState.NOT_INSTANTIATED
    assert app.sim.deployment(inst_id) is None
    app.instances.delete(inst_id)


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


async def test_second_operation_gets_409_while_one_runs(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    app.sim.config.boot_time = 0.3
    occ = app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    with pytest.raises(Conflict, match=occ.id):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    assert (await h.wait(occ)).operation_state == OpState.COMPLETED


async def test_failure_then_retry_resumes_at_the_failed_stage(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    h.rec.fail["scale_end"] = 1
    occ = await h.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "scale_end failed" in occ.error["detail"]
    assert "s3cret-master-pw" not in occ.error["detail"] and "***" in occ.error["detail"]
    servers_after_failure = app.instances.get(inst_id).resources.ids()
    with pytest.raises(Conflict):
        app.instances.heal(inst_id, {})
    occ = await h.wait(app.instances.retry(occ.id))
    assert occ.operation_state == OpState.COMPLETED
    assert app.instances.get(inst_id).resources.ids() == servers_after_failure  # nothing created twice
    assert h.rec.hooks().count("scale_start") == 1 and h.rec.hooks().count("scale_end") == 2


async def test_infra_failure_retry_converges(h: Harness) -> None:
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    app.sim.inject(fail_build={"workerNode": 1})
    occ = await h.wait(app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": SEED_PARAMS}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "infra_deploy failed" in occ.error["detail"]
    occ = await h.wait(app.instances.retry(occ.id))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    assert app.instances.get(inst.id).resources.counts() == {"masterNode": 1, "workerNode": 2}


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


async def test_crash_mid_operation_becomes_failed_temp_and_retry_completes(h: Harness) -> None:
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
                      vim_of=eng.vim_of, mgmt=eng.mgmt, worker_id="restarted", orphan_after=30)
    app.engine = fresh
    await fresh.start()
    # Its heartbeat is still fresh: the new engine leaves it alone.
    assert app.instances.op_get(occ.id).operation_state == OpState.PROCESSING
    # The dead process's last heartbeat ages past orphan_after (set back, not waited for).
    with eng.uow() as uow:
        assert uow.op_occs.heartbeat(occ.id, eng.worker_id, utcnow() - timedelta(seconds=60))
        uow.commit()
    await fresh.recover()
    cur = app.instances.op_get(occ.id)
    assert cur.operation_state == OpState.FAILED_TEMP
    assert "stopped during stage 'infra_update'" in cur.error["detail"]
    app.instances.submit = lambda op_id, rb: fresh.submit(op_id, rollback=rb)
    done = await h.wait(app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert app.instances.get(inst_id).resources.counts()["workerNode"] == 3


async def test_driver_state_persists_between_hooks(h: Harness) -> None:
    inst_id = await h.instantiated()
    await h.wait(h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    state = h.app.instances.get(inst_id).driver_state["recorder"]
    assert state["hooks"] == ["instantiate_end", "scale_start", "scale_end"]


async def test_unknown_openstack_vim_runs_on_the_default_and_says_so(h: Harness) -> None:
    app = h.app
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    body = {"flavourId": "simple", "additionalParams": SEED_PARAMS,
            "vimConnectionInfo": [{"id": "v1", "vimId": "c3369b54-e376-4423-bb61-afd255900fea",
                                   "vimType": "openstack"}]}
    occ = await h.wait(app.instances.instantiate(inst.id, body))
    assert occ.operation_state == OpState.COMPLETED
    assert any("not registered" in e["message"] and "simulated cloud" in e["message"] for e in occ.events)
    assert app.instances.get(inst.id).vim_connection_info[0]["vimId"] == "c3369b54-e376-4423-bb61-afd255900fea"
    # A registered OpenStack VIM makes an unknown vimId an error instead of a silent fallback.
    app.vims.register_body({"name": "os", "vimType": "openstack", "accessInfo": {"authUrl": "http://x/v3"}})
    inst2 = app.instances.create({"vnfdId": h.vnfd_id})
    with pytest.raises(UnprocessableEntity, match="VIM nope is not registered"):
        app.instances.instantiate(inst2.id, {"flavourId": "simple", "vimConnectionInfo": [
            {"id": "v2", "vimId": "nope", "vimType": "openstack"}]})
