"""Retrying a heal of several VNFCs after one server failed to build: the VNFC that the failed
attempt replaced with a working server is kept, only the broken one is replaced again."""

from __future__ import annotations

from vnfm.adapters.infra.simulator.driver import resources_of
from vnfm.domain.model import OpState

from ...conftest import Harness


def _status(h: Harness, server_id: str) -> str:
    server = h.app.sim.server(server_id)
    return str(server["status"]) if server else "MISSING"


async def test_retried_heal_replaces_only_what_is_not_healed_yet(h: Harness) -> None:
    app = h.app
    inst_id = await h.instantiated()
    workers = app.instances.get(inst_id).resources.of_vdu("workerNode")
    assert len(workers) == 2
    before = {v.id: v.server_id for v in workers}

    app.sim.inject(fail_build={"workerNode": 1})  # one of the two new servers goes to ERROR
    occ = await h.wait(app.instances.heal(inst_id, {"vnfcInstanceId": [v.id for v in workers]}))
    assert occ.operation_state == OpState.FAILED_TEMP, occ.error
    assert "infra_heal failed" in occ.error["detail"]

    current = {v.id: v for v in resources_of(app.sim.state(), inst_id).vnfcs}
    healed_ok = [
        i for i in before if current[i].server_id != before[i] and _status(h, current[i].server_id) == "ACTIVE"
    ]
    broken = [i for i in before if i not in healed_ok]
    assert len(healed_ok) == 1 and len(broken) == 1, (before, current)

    occ = await h.wait(app.instances.retry(occ.id))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    final = app.instances.get(inst_id).resources
    (ok,) = healed_ok
    (bad,) = broken
    assert final.by_id(ok) is not None and final.by_id(bad) is not None
    assert final.by_id(ok).server_id == current[ok].server_id, "a server the failed attempt replaced was replaced again"
    assert final.by_id(bad).server_id not in (before[bad], current[bad].server_id)
    assert _status(h, final.by_id(bad).server_id) == "ACTIVE"
    messages = [e["message"] for e in occ.events]
    assert any(f"already replaced by the failed attempt, kept: {ok}" in m for m in messages), messages
    assert h.rec.hooks().count("heal_end") == 1
