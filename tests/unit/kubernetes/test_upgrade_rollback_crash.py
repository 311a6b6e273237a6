"""A change_vnfpkg whose rollback dies part-way (the process killed: what the hook changed in
memory is lost) is FAILED_TEMP again, and a second rollback completes: the rollback hook runs
again from wherever the first one stopped (the masters' packages already back, or etcd already
restored)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.adapters.mgmt.kubeadm import upgrade
from vnfm.domain.model import OpState
from vnfm.nodesteps.upgrade import K8sPackages, KubeadmUpgradeNode

from .conftest import K8s
from .test_upgrade import UP, _newer, _versions

ROLL_BACK, RESTORE, NODE = upgrade.roll_back, upgrade.restore_etcd, upgrade._node


async def _worker_dies(c: Any, n: Any, version: str, *, first: bool) -> None:
    """The forward upgrade killed half-way through the second worker."""
    if n.name != "workernode-1":
        return await NODE(c, n, version, first=first)
    await c.ex.run(n.ssh, K8sPackages(version, ("kubeadm",)))
    await c.ex.run(n.ssh, KubeadmUpgradeNode(n.name, version, n.master))
    raise RuntimeError(f"killed while upgrading {n.name}")


async def _restore_then_die(c: Any, up: dict[str, Any], member: Any = None) -> None:
    kept = copy.deepcopy(c.ctx.state)  # as the database has it: nothing was written since
    await RESTORE(c, up, member)
    c.ctx.state.clear()
    c.ctx.state.update(kept)  # the process died: what the hook changed in memory is lost
    raise RuntimeError("killed after the etcd restore")


async def _first_steps_then_die(c: Any, phase: str) -> None:
    up = upgrade._state(c)
    for m in c.masters:
        await c.ex.run(m.ssh, K8sPackages(up["old"], ("kubeadm",)))
    raise RuntimeError("killed after the masters' kubeadm went back")


@pytest.mark.parametrize(("name", "patch"), [("restore_etcd", _restore_then_die), ("roll_back", _first_steps_then_die)])
async def test_a_rollback_killed_part_way_then_rolled_back_again(k8s: K8s, monkeypatch: pytest.MonkeyPatch,
                                                                 name: str, patch: Any) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    new_vnfd = _newer(k8s)
    before_keys, before_versions = etcd_keys(k8s.state(inst_id)), _versions(k8s, inst_id)
    monkeypatch.setattr(upgrade, "_node", _worker_dies)
    occ = await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP and "upgrade_workers" in occ.error["detail"]
    monkeypatch.setattr(upgrade, "_node", NODE)

    monkeypatch.setattr(upgrade, name, patch)
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.FAILED_TEMP and "killed" in rb.error["detail"]
    monkeypatch.setattr(upgrade, name, ROLL_BACK if name == "roll_back" else RESTORE)
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert _versions(k8s, inst_id) == before_versions and etcd_keys(k8s.state(inst_id)) == before_keys
    assert k8s.app.instances.get(inst_id).vnfd_id != new_vnfd
