"""Every forward operation in turn on the simulated cloud (instantiate, scale out/in, heal a VNFC,
heal entire, terminate), with the exact VNFCs handed to the hooks and the resourceChanges."""

from __future__ import annotations

from vnfm.domain.model import InstantiationState, OpState

from ...conftest import Harness


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
