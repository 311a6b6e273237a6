"""Durable stages and hooks: a failed stage leaves FAILED_TEMP and retry resumes there; driver state
persists between hooks; hooks get the node access of the instance's VIM."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from vnfm.domain.errors import Conflict
from vnfm.domain.model import OpState, Vim
from vnfm.nodesteps.base import StepExecutor
from vnfm.service.lcm.fence import FencedNodeAccess
from vnfm.service.ports import NodeAccess, NodeHost

from ..conftest import SEED_PARAMS, Harness, restart_engine


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


async def test_driver_state_persists_between_hooks(h: Harness) -> None:
    inst_id = await h.instantiated()
    await h.wait(h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    state = h.app.instances.get(inst_id).driver_state["recorder"]
    assert state["hooks"] == ["instantiate_end", "scale_start", "scale_end"]


class FakeNodes(NodeAccess):
    """Node access the hooks must be handed; the recording driver never opens a session."""

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> StepExecutor:
        raise AssertionError("not expected to be used")


async def test_hooks_get_the_node_access_of_the_instances_vim(h: Harness) -> None:
    nodes = FakeNodes()
    asked: list[Vim] = []

    def nodes_of(vim: Vim) -> NodeAccess | None:
        asked.append(vim)
        return nodes

    await restart_engine(h.app, nodes_of=nodes_of)
    inst_id = await h.instantiated()
    await h.wait(h.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert h.rec.hooks() == ["instantiate_end", "scale_start", "scale_end"]
    # each hook gets it behind the fencing check of its occurrence
    assert all(isinstance(ctx.nodes, FencedNodeAccess) and ctx.nodes.inner is nodes for ctx in h.rec.calls)
    vim_id = h.app.instances.get(inst_id).vim_id
    assert vim_id and len(asked) == 3 and {v.id for v in asked} == {vim_id}
    assert asked[0].vim_type == "simulator"


async def test_the_composition_root_gives_hooks_node_access(h: Harness) -> None:
    assert h.app.engine.nodes_of is not None
    await h.instantiated()
    assert h.rec.calls and all(ctx.nodes is not None for ctx in h.rec.calls)


async def test_without_a_resolver_hooks_get_no_node_access(h: Harness) -> None:
    await restart_engine(h.app, nodes_of=None)
    assert h.app.engine.nodes_of is None
    await h.instantiated()
    assert h.rec.calls and all(ctx.nodes is None for ctx in h.rec.calls)
