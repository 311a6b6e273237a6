"""A change_vnfpkg interrupted inside each of its stages (the hook dies part-way, its unsaved
driver state lost) is FAILED_TEMP, and retry or rollback resolves it."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.adapters.mgmt.kubeadm import upgrade
from vnfm.domain.model import OpState
from vnfm.nodesteps.upgrade import K8sPackages, KubeadmUpgradeApply, KubeadmUpgradeNode

from .conftest import K8s
from .test_upgrade import UP, _newer, _versions


async def test_crash_in_each_stage_then_retry_or_rollback(k8s: K8s, monkeypatch: pytest.MonkeyPatch) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    k8s.twin(inst_id).add_pod("web-1", "workernode-1", labels={"app": "web"})
    new_vnfd = _newer(k8s)
    before_keys, before_versions = etcd_keys(k8s.state(inst_id)), _versions(k8s, inst_id)
    take, node = upgrade.take_snapshot, upgrade._node

    async def snapshot_then_die(c: Any, up: Any) -> None:
        await take(c, up)
        c.ctx.state["upgrade"].pop("snapshot")  # died before the driver's state was stored
        raise RuntimeError("killed after the snapshot")

    crash_at = {"name": ""}

    async def node_dies_halfway(c: Any, n: Any, version: str, *, first: bool) -> None:
        if n.name != crash_at["name"]:
            return await node(c, n, version, first=first)
        await c.ex.run(n.ssh, K8sPackages(version, ("kubeadm",)))
        await c.ex.run(n.ssh, KubeadmUpgradeApply(n.name, version) if first
                       else KubeadmUpgradeNode(n.name, version, n.master))
        raise RuntimeError(f"killed while upgrading {n.name}")

    async def change() -> Any:
        return await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))

    # 1. inside the snapshot stage: rollback (no node had changed: nothing restored)
    monkeypatch.setattr(upgrade, "take_snapshot", snapshot_then_die)
    occ = await change()
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_snapshot" in occ.error["detail"]
    monkeypatch.setattr(upgrade, "take_snapshot", take)
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK and any("no node had changed" in e["message"] for e in rb.events)

    # 2. inside the control plane, on the first master, right after kubeadm upgrade apply: rollback
    monkeypatch.setattr(upgrade, "_node", node_dies_halfway)
    crash_at["name"] = "masternode-0"
    occ = await change()
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_control_plane" in occ.error["detail"]
    assert k8s.state(inst_id)["cluster"]["version"] == "1.31.2"
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert _versions(k8s, inst_id) == before_versions and etcd_keys(k8s.state(inst_id)) == before_keys

    # 3. inside the workers stage (a worker half-way): retry completes
    crash_at["name"] = "workernode-1"
    occ = await change()
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_workers" in occ.error["detail"]
    monkeypatch.setattr(upgrade, "_node", node)
    done = await k8s.wait(k8s.app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert set(_versions(k8s, inst_id).values()) == {("1.31.2", "1.31.2"), ("1.31.2", None)}
    assert k8s.app.instances.get(inst_id).vnfd_id == new_vnfd
