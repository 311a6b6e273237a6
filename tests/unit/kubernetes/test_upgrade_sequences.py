"""change_vnfpkg (a Kubernetes upgrade) under sequences of kills, as the chaos campaign produces
them: a forward, retry or rollback attempt dies at a chosen point (at the hook's entry, after a
chosen node step, or after the hook's work with its stage not yet recorded done), and what the
hook changed in memory since the last write is lost, as when the process is killed or a paused
owner is taken over (the step in flight lands; the next one is fenced). Every sequence must
converge: a final rollback leaves the old package and Kubernetes version on every node (kubelet,
packages, control plane) and in the instance; a final retry the new ones."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.adapters.mgmt.kubeadm import upgrade
from vnfm.domain.model import OpState, utcnow
from vnfm.nodesteps.base import NodeStep
from vnfm.nodesteps.upgrade import K8sPackages, KubeadmRevertControlPlane, KubeadmUpgradeNode
from vnfm.service.lcm.scheduler import LcmEngine

from ..service.lcm.test_fencing import _stop_heartbeat, _until
from .conftest import K8s
from .test_upgrade import UP, _newer

OLD, NEW = "1.30.4", "1.31.2"
Pick = Callable[[NodeStep], bool]


class Killed(RuntimeError):
    pass


@dataclass(frozen=True)
class Kill:
    """Where an attempt dies: `at` "entry" (its stage started, the driver did nothing), "step"
    (right after the first step `pick` matches), "end" (the driver's work done, the stage not yet
    recorded done); `phase` the forward phase whose hook dies (rollback: any)."""

    at: str
    phase: str = "workers"
    pick: Pick | None = None


def _worker_upgraded(s: NodeStep) -> bool:
    return isinstance(s, KubeadmUpgradeNode) and s.node == "workernode-1" and s.version == NEW


def _masters_kubeadm_back(s: NodeStep) -> bool:
    return isinstance(s, K8sPackages) and s.version == OLD and s.packages == ("kubeadm",)


def _first_master_reverted(s: NodeStep) -> bool:
    return isinstance(s, KubeadmRevertControlPlane) and s.node == "masternode-0"


def _last_kubeadm_back(s: NodeStep) -> bool:
    return isinstance(s, KubeadmRevertControlPlane) and s.node == "masternode-2"


class _KillingExecutor:
    def __init__(self, ex: Any, pick: Pick, die: Callable[[], None]) -> None:
        self.ex, self.pick, self.die = ex, pick, die

    async def run(self, host: Any, step: NodeStep) -> Any:
        res = await self.ex.run(host, step)
        if self.pick(step):
            self.die()  # the step landed; nothing after it
        return res

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ex, name)


def arm(monkeypatch: pytest.MonkeyPatch, kill: Kill | None, rollback: bool) -> None:
    """Arm `kill` on the next forward (or rollback) hook call of its phase; it fires once."""
    real_up, real_rb = upgrade.__dict__["upgrade"], upgrade.__dict__["roll_back"]
    monkeypatch.setattr(upgrade, "upgrade", real_up)
    monkeypatch.setattr(upgrade, "roll_back", real_rb)
    if kill is None:
        return
    armed = [True]

    async def wrapped(c: Any, phase: str) -> None:
        real = real_rb if rollback else real_up
        if not armed[0] or (not rollback and phase != kill.phase):
            return await real(c, phase)
        armed[0] = False
        kept = copy.deepcopy(c.ctx.state)  # as the database has it

        def die() -> None:
            c.ctx.state.clear()
            c.ctx.state.update(kept)  # the process died: what the hook changed in memory is lost
            raise Killed(f"killed ({kill.at})")

        if kill.at == "entry":
            die()
        if kill.at == "step":
            assert kill.pick is not None
            c.ex = _KillingExecutor(c.ex, kill.pick, die)
        await real(c, phase)
        if kill.at == "step":
            raise RuntimeError("the step to die after never came")  # the test's mistake: fails it below
        die()

    monkeypatch.setattr(upgrade, "roll_back" if rollback else "upgrade", wrapped)


def _cluster(k8s: K8s, inst_id: str) -> dict[str, Any]:
    st = k8s.state(inst_id)
    out: dict[str, Any] = {"cluster": st["cluster"]["version"]}
    for name, n in sorted(st["nodes"].items()):
        h = st["hosts"][n["server_id"]]
        out[name] = (n["version"], n["ready"], n["cordoned"], tuple(sorted(set(h["packages"].values()))),
                     h.get("control_plane") if n["role"] == "master" else h.get("kubelet_config", OLD))
    return out


def _at(version: str, k8s: K8s, inst_id: str) -> dict[str, Any]:
    st = k8s.state(inst_id)
    return {"cluster": version, **{name: (version, True, False, (version,), version)
                                   for name in sorted(st["nodes"])}}


Step = tuple[str, Kill | None]
FWD_WORKERS = Kill("step", "workers", _worker_upgraded)
SEQUENCES: dict[str, list[Step]] = {
    "rb-entry-then-rb": [("start", FWD_WORKERS), ("retry", FWD_WORKERS), ("rollback", Kill("entry")),
                         ("rollback", Kill("end")), ("retry", None)],
    "rb-end-then-retry": [("start", FWD_WORKERS), ("rollback", Kill("end")), ("retry", None)],
    "rb-end-then-rb": [("start", FWD_WORKERS), ("rollback", Kill("end")), ("rollback", None)],
    "rb-kubeadm-back-then-retry": [("start", FWD_WORKERS), ("rollback", Kill("step", pick=_masters_kubeadm_back)),
                                   ("retry", None)],
    "rb-m0-reverted-then-retry": [("start", FWD_WORKERS), ("rollback", Kill("step", pick=_first_master_reverted)),
                                  ("retry", None)],
    "rb-m0-reverted-twice-then-retry-then-rb": [
        ("start", FWD_WORKERS), ("retry", FWD_WORKERS), ("rollback", Kill("step", pick=_first_master_reverted)),
        ("rollback", Kill("step", pick=_last_kubeadm_back)), ("retry", FWD_WORKERS), ("rollback", None)],
    "rb-end-retry-killed-then-rb": [("start", FWD_WORKERS), ("rollback", Kill("end")), ("retry", FWD_WORKERS),
                                    ("rollback", Kill("end")), ("rollback", None)],
    "rb-end-retry-cp-killed-then-retry": [
        ("start", FWD_WORKERS), ("rollback", Kill("end")),
        ("retry", Kill("step", "control_plane", lambda s: isinstance(s, K8sPackages) and s.version == NEW)),
        ("retry", None)],
    # the first rollback knew of the snapshot only; the retry went on to the workers
    "snap-rb-then-retry-further-then-rb": [("start", Kill("end", "snapshot")), ("rollback", Kill("end")),
                                           ("retry", FWD_WORKERS), ("rollback", None)],
    "full-then-retry-then-rb": [("start", FWD_WORKERS), ("retry", FWD_WORKERS), ("rollback", Kill("entry")),
                                ("rollback", Kill("end")), ("retry", FWD_WORKERS), ("rollback", None)],
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
async def test_sequence_converges(k8s: K8s, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    for i, node in enumerate(("workernode-0", "workernode-1", "masternode-1")):  # drains move them
        k8s.twin(inst_id).add_pod(f"web-{i}", node)
    new_vnfd = _newer(k8s)
    old_inst = k8s.app.instances.get(inst_id)
    before_keys, before = etcd_keys(k8s.state(inst_id)), _cluster(k8s, inst_id)
    assert before == _at(OLD, k8s, inst_id)
    op_id, occ = "", None
    for i, (task, kill) in enumerate(SEQUENCES[name]):
        arm(monkeypatch, kill, rollback=task == "rollback")
        if task == "start":
            occ = k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP})
            op_id = occ.id
        else:
            occ = getattr(k8s.app.instances, task)(op_id)
        occ = await k8s.wait(occ)
        if kill is not None:
            assert occ.operation_state == OpState.FAILED_TEMP, (i, task, occ.operation_state)
            assert "killed" in occ.error["detail"], (i, task, occ.error)  # the kill fired, nothing else failed
    arm(monkeypatch, None, False)
    assert occ is not None
    inst = k8s.app.instances.get(inst_id)
    if SEQUENCES[name][-1][0] == "retry":
        assert occ.operation_state == OpState.COMPLETED, occ.error
        assert _cluster(k8s, inst_id) == _at(NEW, k8s, inst_id)
        assert (inst.vnfd_id, inst.additional_params["k8s_cluster_installation_param"]["kubernetes_version"]) == \
            (new_vnfd, NEW)
        vim = k8s.app.vims.get(inst.driver_state["kubeadm"]["vim_id"])
        assert vim is not None and vim.extra["kubernetes_version"] == NEW
    else:
        assert occ.operation_state == OpState.ROLLED_BACK, occ.error
        assert _cluster(k8s, inst_id) == before
        assert etcd_keys(k8s.state(inst_id)) == before_keys
        assert (inst.vnfd_id, inst.additional_params) == (old_inst.vnfd_id, old_inst.additional_params)
        vim = k8s.app.vims.get(inst.driver_state["kubeadm"]["vim_id"])
        assert vim is not None and vim.extra.get("kubernetes_version", OLD) == OLD


class _PausingExecutor(_KillingExecutor):
    """Holds the hook after the step `pick` matches until released (a SIGSTOPped owner)."""

    def __init__(self, ex: Any, pick: Pick, paused: asyncio.Event, release: asyncio.Event) -> None:
        super().__init__(ex, pick, lambda: None)
        self.paused, self.release = paused, release

    async def run(self, host: Any, step: NodeStep) -> Any:
        res = await self.ex.run(host, step)
        if self.pick(step) and not self.paused.is_set():
            self.paused.set()
            await self.release.wait()
        return res


async def _take_over(paused: LcmEngine, op_id: str) -> LcmEngine:
    """Another process (its own engine on the same database and cloud) takes the occurrence over."""
    with paused.uow() as uow:  # the paused owner's last heartbeat ages past orphan_after
        assert uow.op_occs.heartbeat(op_id, paused.worker_id, utcnow() - timedelta(seconds=60))
        uow.commit()
    other = LcmEngine(paused.uow, vnfd_of=paused.vnfd_of, files_of=paused.files_of,
                      infra_drivers=paused.infra_drivers, vim_of=paused.vim_of, mgmt=paused.mgmt,
                      liveness=paused.liveness, vim_registry=paused.vim_registry, nodes_of=paused.stages.nodes_of,
                      worker_id="other", orphan_after=30)
    other.stages.snapshots = paused.stages.snapshots
    await other.recover()
    return other


@pytest.mark.parametrize("then", ["retry", "rollback"])
async def test_a_rollback_taken_over_part_way_then_retried_or_rolled_back(k8s: K8s, monkeypatch: pytest.MonkeyPatch,
                                                                          then: str) -> None:
    """The rollback's owner paused after the first control plane was reverted, taken over by
    another process (FAILED_TEMP), then retried or rolled back there; the paused owner resumes
    and is fenced before its next node step. The cluster converges to the new or the old version."""
    inst_id, _ = await k8s.instantiate("ha")
    new_vnfd = _newer(k8s)
    before = _cluster(k8s, inst_id)
    arm(monkeypatch, FWD_WORKERS, rollback=False)
    occ = await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP and "killed" in occ.error["detail"]
    arm(monkeypatch, None, False)
    paused_at, release = asyncio.Event(), asyncio.Event()
    real_rb = upgrade.roll_back

    async def pausing(c: Any, phase: str) -> None:
        if not paused_at.is_set():
            c.ex = _PausingExecutor(c.ex, _first_master_reverted, paused_at, release)
        await real_rb(c, phase)

    monkeypatch.setattr(upgrade, "roll_back", pausing)
    k8s.app.instances.rollback(occ.id)
    await asyncio.wait_for(paused_at.wait(), 10)
    paused = k8s.app.engine
    _stop_heartbeat(paused)
    await asyncio.sleep(paused.heartbeat.stats.interval)  # its last ownership check is no longer fresh
    other = await _take_over(paused, occ.id)
    assert k8s.app.instances.op_get(occ.id).operation_state == OpState.FAILED_TEMP
    await other.start()
    try:
        monkeypatch.setattr(k8s.app.instances, "submit", lambda op_id, rb: other.submit(op_id, rollback=rb))
        k8s.app.engine = other
        release.set()  # the zombie resumes while the other process works
        final = await k8s.wait(getattr(k8s.app.instances, then)(occ.id), timeout=30)
        await _until(lambda: occ.id not in paused.running)
    finally:
        k8s.app.engine = paused
        await other.stop()
    if then == "retry":
        assert final.operation_state == OpState.COMPLETED, final.error
        assert _cluster(k8s, inst_id) == _at(NEW, k8s, inst_id)
    else:
        assert final.operation_state == OpState.ROLLED_BACK, final.error
        assert _cluster(k8s, inst_id) == before
