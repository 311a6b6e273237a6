"""change_vnfpkg of a Kubespray cluster on the simulated cloud: the etcd snapshot, facts.yml, then
upgrade-cluster.yml limited to the control plane, then one run per worker, each node Ready at the
new version; a fault at a middle worker leaves FAILED_TEMP; rollback (cluster.yml with the old
kube_version on the changed nodes, etcd restored) brings every node and etcd's content back;
retry completes; the refusals at request time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin import TwinExecutor
from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.adapters.mgmt.kubespray import upgrade
from vnfm.domain.errors import VnfmError
from vnfm.domain.model import OpState
from vnfm.examples import example_csar_version

from .conftest import Ks, params

NEW_VNFD = "9d3c7e1a-5b2f-4c8e-a1d7-000000000021"
UP = {"k8s_cluster_installation_param": {"kubernetes_version": "1.31.2"}}


def _k8s(ks: Ks, inst_id: str) -> dict[str, Any]:
    return dict(ks.app.sim.extras(inst_id).get("k8s") or {})


def _versions(ks: Ks, inst_id: str) -> dict[str, Any]:
    st = _k8s(ks, inst_id)
    return {name: n["version"] for name, n in sorted(st["nodes"].items())} | {"api": st["cluster"]["version"]}


def _runs(ks: Ks, inst_id: str) -> list[tuple[str, Any, Any]]:
    return [(r["playbook"], r["limit"], r["extra_vars"].get("kube_version"))
            for r in _k8s(ks, inst_id)["kubespray"]["runs"]]


async def _cluster(ks: Ks, workers: int = 3) -> tuple[str, str]:
    inst_id, _ = await ks.instantiate(params(kubernetes_version="1.30.4"))
    if workers > 2:
        await ks.done(ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                         "numberOfSteps": str(workers - 2)}))
    pkg = ks.app.packages.create({})
    new = str(ks.app.packages.upload(pkg.id, example_csar_version("1.1", NEW_VNFD, "kubespray")).vnfd_id)
    return inst_id, new


async def test_upgrade_control_plane_then_one_run_per_worker(ks: Ks) -> None:
    inst_id, new = await _cluster(ks)
    assert set(_versions(ks, inst_id).values()) == {"1.30.4"}
    before = len(_runs(ks, inst_id))
    occ = await ks.done(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))
    assert set(_versions(ks, inst_id).values()) == {"1.31.2"}
    assert _runs(ks, inst_id)[before:] == [
        ("facts.yml", None, None), ("upgrade-cluster.yml", ["masternode-0"], "1.31.2"),
        ("facts.yml", None, None), ("upgrade-cluster.yml", ["workernode-0"], "1.31.2"),
        ("upgrade-cluster.yml", ["workernode-1"], "1.31.2"), ("upgrade-cluster.yml", ["workernode-2"], "1.31.2")]
    msgs = ks.messages(occ)
    assert any("etcd snapshot taken on masternode-0" in m for m in msgs)
    assert any("workernode-1 Ready at 1.31.2" in m for m in msgs)
    inst = ks.app.instances.get(inst_id)
    assert inst.vnfd_id == new
    assert inst.additional_params["k8s_cluster_installation_param"]["kubernetes_version"] == "1.31.2"
    vim = ks.app.vims.get(inst.driver_state["kubespray"]["vim_id"])
    assert vim.extra["kubernetes_version"] == "1.31.2"
    # a later scale-out installs the new version (the inventory's kube_version follows the records)
    await ks.done(ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                     "numberOfSteps": "1"}))
    assert set(_versions(ks, inst_id).values()) == {"1.31.2"}


async def test_fault_at_a_middle_worker_rollback_restores_nodes_and_etcd_then_retry(ks: Ks) -> None:
    inst_id, new = await _cluster(ks)
    twin = TwinExecutor(ks.app.sim, inst_id)
    twin.add_pod("web-1", "workernode-0", labels={"app": "web"})
    before_keys, before_versions = etcd_keys(_k8s(ks, inst_id)), _versions(ks, inst_id)
    old = ks.app.instances.get(inst_id)
    twin.set_faults(upgrade_fails=["workernode-1"])
    occ = await ks.wait(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "workernode-1" in occ.error["detail"] and "upgrade_workers" in occ.error["detail"]
    v = _versions(ks, inst_id)
    assert (v["masternode-0"], v["workernode-0"], v["workernode-1"], v["workernode-2"]) == \
        ("1.31.2", "1.31.2", "1.30.4", "1.30.4")
    twin.add_pod("late-1", "workernode-2")  # the cluster changed since the snapshot: the restore undoes it
    assert etcd_keys(_k8s(ks, inst_id)) != before_keys
    twin.set_faults(upgrade_fails=[])
    rb = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert _versions(ks, inst_id) == before_versions
    assert etcd_keys(_k8s(ks, inst_id)) == before_keys
    assert _runs(ks, inst_id)[-1] == ("cluster.yml", ["masternode-0", "workernode-0", "workernode-1"], "1.30.4")
    inst = ks.app.instances.get(inst_id)
    assert (inst.vnfd_id, inst.additional_params) == (old.vnfd_id, old.additional_params)
    assert any("etcd restored on 1 member(s)" in e["message"] for e in rb.events)

    # the same fault again, then retry once it is mended: the upgrade completes where it stopped
    twin.set_faults(upgrade_fails=["workernode-1"])
    occ = await ks.wait(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP
    twin.set_faults(upgrade_fails=[])
    n = len(_runs(ks, inst_id))
    done = await ks.wait(ks.app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert set(_versions(ks, inst_id).values()) == {"1.31.2"}
    assert [r for r in _runs(ks, inst_id)[n:] if r[0] == "upgrade-cluster.yml"] == [
        ("upgrade-cluster.yml", ["workernode-1"], "1.31.2"), ("upgrade-cluster.yml", ["workernode-2"], "1.31.2")]


async def test_fault_at_the_control_plane_rollback_fails_until_mended_then_rolls_back(ks: Ks) -> None:
    inst_id, new = await _cluster(ks, workers=2)
    twin = TwinExecutor(ks.app.sim, inst_id)
    twin.set_faults(upgrade_fails=["masternode-0"])
    occ = await ks.wait(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_control_plane" in occ.error["detail"]
    # the run failed on the control plane: the rollback cannot know how far it went and re-applies
    # the old version there (a rollback that fails, e.g. with the fault still on, stays FAILED_TEMP)
    rb = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.FAILED_TEMP and "cluster.yml" in rb.error["detail"]
    twin.set_faults(upgrade_fails=[])
    rb = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert set(_versions(ks, inst_id).values()) == {"1.30.4"}
    assert ks.app.instances.get(inst_id).vnfd_id != new


@pytest.mark.parametrize(("extra", "needle"), [
    ({}, "kubernetes_version: a change_vnfpkg of a Kubespray cluster"),
    ({"k8s_cluster_installation_param": {"kubernetes_version": "1.32.0"}}, "one minor version at a time"),
    ({"k8s_cluster_installation_param": {"kubernetes_version": "1.30.1"}}, "not newer"),
    ({"k8s_cluster_installation_param": {"kubernetes_version": "1.31.2", "drain_timeout": 5}}, "drain_timeout"),
])
async def test_refused_at_request_time(ks: Ks, extra: dict[str, Any], needle: str) -> None:
    inst_id, new = await _cluster(ks, workers=2)
    n = len(ks.app.instances.op_list())
    with pytest.raises(VnfmError) as e:
        ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": extra})
    assert needle in str(e.value.detail) and len(ks.app.instances.op_list()) == n


async def test_refused_when_the_cluster_was_built_without_a_version(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    pkg = ks.app.packages.create({})
    new = str(ks.app.packages.upload(pkg.id, example_csar_version("1.1", NEW_VNFD, "kubespray")).vnfd_id)
    with pytest.raises(VnfmError) as e:
        ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP})
    assert "instantiated without it" in str(e.value.detail)


async def test_a_crash_inside_each_stage_leaves_failed_temp_that_rollback_or_retry_resolves(
        ks: Ks, monkeypatch: pytest.MonkeyPatch) -> None:
    from vnfm.adapters.mgmt.kubespray import upgrade

    inst_id, new = await _cluster(ks)
    TwinExecutor(ks.app.sim, inst_id).add_pod("web-1", "workernode-0")
    before_keys, before_versions = etcd_keys(_k8s(ks, inst_id)), _versions(ks, inst_id)
    at, crash = upgrade._at, {"node": ""}

    async def dies_after_the_run(s: Any, nodes: Any, version: str) -> None:
        if any(n.name == crash["node"] for n in nodes):
            raise RuntimeError(f"killed after the run on {crash['node']}")
        await at(s, nodes, version)

    monkeypatch.setattr(upgrade, "_at", dies_after_the_run)

    async def change() -> Any:
        return await ks.wait(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))

    # inside the control-plane stage, its run done: rollback brings the old version and etcd back
    crash["node"] = "masternode-0"
    occ = await change()
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_control_plane" in occ.error["detail"]
    assert _versions(ks, inst_id)["api"] == "1.31.2"
    TwinExecutor(ks.app.sim, inst_id).add_pod("late-1", "workernode-1")
    crash["node"] = ""
    rb = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert _versions(ks, inst_id) == before_versions and etcd_keys(_k8s(ks, inst_id)) == before_keys

    # inside the workers stage, workernode-1's run done: retry completes
    crash["node"] = "workernode-1"
    occ = await change()
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_workers" in occ.error["detail"]
    crash["node"] = ""
    done = await ks.wait(ks.app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert set(_versions(ks, inst_id).values()) == {"1.31.2"}


async def test_retry_after_a_rollback_killed_at_its_end_upgrades_every_node(ks: Ks,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A rollback whose work was done (every node back at the old version, etcd restored) but whose
    process died before its stage was recorded: the database still lists the nodes the first
    attempt upgraded as done. The retry starts the forward over (a rollback began): no node may
    count as upgraded, or the control plane stays at the old version under newer kubelets."""
    inst_id, new = await _cluster(ks)
    twin = TwinExecutor(ks.app.sim, inst_id)
    twin.set_faults(upgrade_fails=["workernode-1"])
    occ = await ks.wait(ks.app.instances.change_vnfpkg(inst_id, {"vnfdId": new, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP
    twin.set_faults(upgrade_fails=[])
    real = upgrade.roll_back

    async def killed_at_end(s: Any, phase: str) -> None:
        kept = copy.deepcopy(s.ctx.state)  # as the database has it
        await real(s, phase)
        s.ctx.state.clear()
        s.ctx.state.update(kept)  # the process died: what the hook changed in memory is lost
        raise RuntimeError("killed (end)")

    monkeypatch.setattr(upgrade, "roll_back", killed_at_end)
    rb = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.FAILED_TEMP and "killed" in rb.error["detail"], rb.error
    monkeypatch.setattr(upgrade, "roll_back", real)
    assert set(_versions(ks, inst_id).values()) == {"1.30.4"}
    done = await ks.wait(ks.app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert set(_versions(ks, inst_id).values()) == {"1.31.2"}
