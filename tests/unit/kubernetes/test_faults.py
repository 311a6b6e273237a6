"""Injected faults on the twin: the exact error, then a retry (or rollback) that converges."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vnfm.domain.errors import Conflict, UnprocessableEntity
from vnfm.domain.model import OpState

from .conftest import K8s


def _fast(**extra: Any) -> dict[str, Any]:
    return {"additionalParams": {"k8s_cluster_installation_param": {"node_ready_timeout": 0.2,
                                                                    "drain_timeout": 0.2, **extra}}}


def _addr(k8s: K8s, inst_id: str, vnfc_name: str) -> str:
    v = next(x for x in k8s.app.instances.get(inst_id).resources.vnfcs if x.name == vnfc_name)
    return str(v.cps[0].floating_ip or v.cps[0].ip_addresses[0])


async def test_node_never_ready_fails_then_retry_converges(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    k8s.twin(inst_id).set_faults(never_ready=["workernode-2"])
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                       **_fast()}))
    assert occ.operation_state == OpState.FAILED_TEMP
    master = _addr(k8s, inst_id, "masterNode-0")
    assert occ.error is not None
    assert occ.error["detail"] == (
        f"scale_end failed: k8s-wait-node-ready workernode-2 failed on {master}: node workernode-2 did not "
        "become Ready within 0.2s: its kubelet reports NotReady")
    assert k8s.view(inst_id)["nodes"]["workernode-2"]["ready"] is False
    k8s.twin(inst_id).set_faults(never_ready=[])
    occ = await k8s.done(app.instances.retry(occ.id))
    v = k8s.view(inst_id)
    assert sorted(v["nodes"]) == ["masternode-0", "workernode-0", "workernode-1", "workernode-2"]
    assert all(n["ready"] for n in v["nodes"].values())


async def test_failed_scale_out_rolls_back_the_joined_nodes(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    k8s.twin(inst_id).set_faults(never_ready=["workernode-3"])
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                       "numberOfSteps": 2, **_fast()}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert set(k8s.view(inst_id)["nodes"]) >= {"workernode-2", "workernode-3"}
    occ = await k8s.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK, occ.error
    assert sorted(k8s.view(inst_id)["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]


async def test_drain_blocked_by_pdb_names_the_pods_then_retry(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    twin = k8s.twin(inst_id)
    twin.add_pod("db-0", "workernode-2", labels={"app": "db"})
    twin.add_pod("cache-0", "workernode-2", labels={"app": "cache"})
    twin.add_pdb("db-pdb", {"app": "db"}, max_unavailable=0)
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance", **_fast()}))
    assert occ.operation_state == OpState.FAILED_TEMP
    master = _addr(k8s, inst_id, "masterNode-0")
    assert occ.error is not None
    assert occ.error["detail"] == (
        f"scale_start failed: k8s-drain-node workernode-2 failed on {master}: drain of workernode-2 did not "
        "finish within 0.2s; blocking pods: default/db-0 (PodDisruptionBudget db-pdb)")
    v = k8s.view(inst_id)
    assert v["nodes"]["workernode-2"]["cordoned"] is True
    assert v["pods"]["default/cache-0"]["node"] in {"workernode-0", "workernode-1"}  # evicted where it could
    assert "workernode-2" in {x.name.lower() for x in app.instances.get(inst_id).resources.vnfcs}  # VM kept
    assert k8s.view(inst_id)["pods"]["default/db-0"]["node"] == "workernode-2"
    twin.add_pdb("db-pdb", {"app": "db"}, max_unavailable=1)
    await k8s.done(app.instances.retry(occ.id))
    v = k8s.view(inst_id)
    assert "workernode-2" not in v["nodes"] and v["pods"]["default/db-0"]["node"] in {"workernode-0", "workernode-1"}


async def test_unreachable_host_fails_then_retry(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    app.sim.inject(unreachable_next={"workerNode": 1})
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    addr = _addr(k8s, inst_id, "workerNode-2")
    assert occ.error is not None
    assert occ.error["detail"] == (f"scale_end failed: step failed on {addr}: host unreachable: cannot read "
                                   "its SSH host key")
    app.sim.set_reachable("workerNode-2", True)
    await k8s.done(app.instances.retry(occ.id))
    assert k8s.view(inst_id)["nodes"]["workernode-2"]["ready"]


async def test_changed_host_key_is_refused(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    w = app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    with app.sim.store.transaction() as state:
        state["servers"][w.server_id]["host_key"]["public_key"] = "ssh-ed25519 AAAAforged"
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.COMPLETED  # the changed host is not contacted by a scale-out
    m = app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
    with app.sim.store.transaction() as state:
        state["servers"][m.server_id]["host_key"]["public_key"] = "ssh-ed25519 AAAAforged"
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert occ.error is not None and "host key of masterNode-0" in occ.error["detail"]
    assert "changed since it was pinned" in occ.error["detail"]


async def test_request_time_refusals(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    inst = app.instances.get(inst_id)
    flav = app.packages.vnfd(inst.vnf_pkg_id).flavour("simple")
    # the master aspect scales (test_cpscale.py), within the flavour's max_scale_level (0 here)
    with pytest.raises(UnprocessableEntity, match="'master_instance' out by 1 step.* exceeds max_scale_level 0"):
        k8s.driver.validate_request("SCALE", {"type": "SCALE_OUT", "aspectId": "master_instance"}, inst, flav)
    k8s.driver.validate_request("SCALE", {"type": "SCALE_OUT", "aspectId": "worker_instance"}, inst, flav)
    m = app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
    with pytest.raises(UnprocessableEntity) as e:  # does not fit this cluster: 422
        app.instances.heal(inst_id, {"vnfcInstanceId": [m.id]})
    assert e.value.detail.startswith("healing the single control plane masterNode-0 restores the cluster from an "
                                     "etcd snapshot, and the VNFM holds none of this cluster")  # no backup: 422
    ha_id, _ = await k8s.instantiate("ha")
    ms = app.instances.get(ha_id).resources.of_vdu("masterNode")
    with pytest.raises(UnprocessableEntity, match="1 healthy of 3 members would remain, quorum is 2"):
        app.instances.heal(ha_id, {"vnfcInstanceId": [ms[0].id, ms[1].id]})
    assert [o.operation_state for o in app.instances.op_list()] == [OpState.COMPLETED, OpState.COMPLETED]


async def test_scale_in_blocked_by_pdb_rolls_back_and_uncordons(k8s: K8s) -> None:
    """Issue 11.5: the scale-in ends FAILED_TEMP naming the pod; its VMs still exist, so rollback
    succeeds: the node is uncordoned, the VNFC and the scale level stay."""
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    before = app.instances.get(inst_id)
    twin = k8s.twin(inst_id)
    twin.add_pod("db-0", "workernode-2", labels={"app": "db"})
    twin.add_pdb("db-pdb", {"app": "db"}, max_unavailable=0)
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance", **_fast()}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert occ.error is not None and "blocking pods: default/db-0 (PodDisruptionBudget db-pdb)" in occ.error["detail"]
    assert k8s.view(inst_id)["nodes"]["workernode-2"]["cordoned"] is True
    occ = await k8s.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK, occ.error
    v = k8s.view(inst_id)
    assert v["nodes"]["workernode-2"]["cordoned"] is False and v["pods"]["default/db-0"]["node"] == "workernode-2"
    inst = app.instances.get(inst_id)
    assert inst.scale_levels == before.scale_levels and inst.lock_op_id is None
    assert sorted(x.id for x in inst.resources.vnfcs) == sorted(x.id for x in before.resources.vnfcs)
    # the instance takes operations again: a scale-in once the PDB allows it
    twin.add_pdb("db-pdb", {"app": "db"}, max_unavailable=1)
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance", **_fast()}))
    assert "workernode-2" not in k8s.view(inst_id)["nodes"]


async def test_rollback_of_scale_in_whose_nodes_were_removed_is_refused(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    app.sim.inject(fail_delete=1)
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP and "infra_update" in (occ.error or {}).get("detail", "")
    with pytest.raises(Conflict, match="already removed and cannot be restored"):  # drained and deleted
        app.instances.rollback(occ.id)
    await k8s.done(app.instances.retry(occ.id))


async def test_drain_blocked_by_a_budget_created_through_the_api_then_retry(k8s: K8s) -> None:
    """The twin's drain (the simulator's node step) honours a PodDisruptionBudget created through
    the simulated API, as kubectl drain against a real API server would."""
    from kubernetes import client

    from vnfm.adapters.kube.client import api_client

    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    vim = app.vims.get(app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db-0", "labels": {"app": "db"}},
           "spec": {"nodeName": "workernode-2", "containers": [{"name": "db", "image": "postgres"}]}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}}

    def create() -> None:
        with api_client(vim) as c:
            client.CoreV1Api(c).create_namespaced_pod("default", pod)
            client.PolicyV1Api(c).create_namespaced_pod_disruption_budget("default", pdb)

    await asyncio.to_thread(create)
    occ = await k8s.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance", **_fast()}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert occ.error is not None and occ.error["detail"].endswith(
        "blocking pods: default/db-0 (PodDisruptionBudget db)")

    def allow() -> None:
        with api_client(vim) as c:
            client.PolicyV1Api(c).patch_namespaced_pod_disruption_budget("db", "default", {"spec": {"minAvailable": 0}})

    await asyncio.to_thread(allow)
    await k8s.done(app.instances.retry(occ.id))
    assert "workernode-2" not in k8s.view(inst_id)["nodes"]
