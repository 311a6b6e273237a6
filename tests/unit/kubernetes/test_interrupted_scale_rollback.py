"""Issue 12.1: a scale-out interrupted after its new VNFC was recorded in the cloud but before the
VNFC got a port or server rolls back (nothing to undo on the node side; what the cloud has of it is
removed), and later heals work."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.domain.model import OpState

from .conftest import K8s


def _instance_view(k8s: K8s, inst_id: str) -> dict[str, Any]:
    snap = k8s.app.sim.snapshot(inst_id)
    return {kind: sorted(snap[kind]) if isinstance(snap[kind], dict) else snap[kind]
            for kind in ("servers", "ports", "volumes", "floating_ips")}


async def test_rollback_of_scale_out_killed_before_the_new_vnfc_has_a_port(
        k8s: K8s, monkeypatch: pytest.MonkeyPatch) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    before = app.instances.get(inst_id)
    cloud_before = _instance_view(k8s, inst_id)

    def crash(*_: Any, **__: Any) -> Any:  # the process dies here: the VNFC is recorded, no port yet
        raise RuntimeError("killed before the port was created")

    monkeypatch.setattr(app.sim, "ensure_port", crash)
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    monkeypatch.undo()
    dep = app.sim.deployment(inst_id)
    assert dep is not None and len(dep["vnfcs"]) == len(before.resources.vnfcs) + 1  # recorded, bare

    occ = await k8s.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK, occ.error
    inst = app.instances.get(inst_id)
    assert inst.scale_levels == before.scale_levels
    assert sorted(v.id for v in inst.resources.vnfcs) == sorted(v.id for v in before.resources.vnfcs)
    dep = app.sim.deployment(inst_id)
    assert dep is not None and sorted(dep["vnfcs"]) == sorted(v.id for v in before.resources.vnfcs)
    assert _instance_view(k8s, inst_id) == cloud_before  # nothing of the new VNFC is left
    assert sorted(k8s.view(inst_id)["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]

    worker = next(v for v in inst.resources.vnfcs if v.vdu_id == "workerNode")
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [worker.id]}))
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    nodes = k8s.view(inst_id)["nodes"]
    assert len(nodes) == 4 and all(n["ready"] for n in nodes.values())


async def test_fail_of_that_scale_out_then_heal_works(k8s: K8s, monkeypatch: pytest.MonkeyPatch) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    monkeypatch.setattr(app.sim, "ensure_port", lambda *_a, **_k: (_ for _ in ()).throw(RuntimeError("killed")))
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    monkeypatch.undo()
    assert app.instances.fail(occ.id).operation_state == OpState.FAILED
    worker = next(v for v in app.instances.get(inst_id).resources.vnfcs if v.vdu_id == "workerNode")
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [worker.id]}))
    nodes = k8s.view(inst_id)["nodes"]
    assert sorted(nodes) == ["masternode-0", "workernode-0", "workernode-1"] and all(n["ready"] for n in nodes.values())
