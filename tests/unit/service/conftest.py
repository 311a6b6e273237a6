"""An embedded vnfm (SQLite + simulated cloud with zero latency) for service-level tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.mgmt.bindings import MgmtDrivers
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.model import OpOcc, OpState
from vnfm.domain.params import Declared, FreeForm, Params, doc
from vnfm.examples import example_csar
from vnfm.service.lcm.scheduler import LcmEngine
from vnfm.service.ports import LcmContext, MgmtDriver

SEED_PARAMS = {
    "k8s_cluster_installation_param": {
        "script_path": "Scripts/install_k8s_cluster.sh",
        "vim_name": "kubernetes_vim",
        "master_node": {
            "aspect_id": "master_instance",
            "ssh_cp_name": "masterNode_CP1",
            "nic_cp_name": "masterNode_CP1",
            "username": "ubuntu",
            "password": "s3cret-master-pw",
            "pod_cidr": "192.168.0.0/16",
            "cluster_cidr": "10.199.187.0/24",
            "cluster_cp_name": "masterNode_CP1",
        },
        "worker_node": {
            "aspect_id": "worker_instance",
            "ssh_cp_name": "workerNode_CP2",
            "nic_cp_name": "workerNode_CP2",
            "username": "ubuntu",
            "password": "s3cret-worker-pw",
        },
    }
}


class RecorderParams(Params):
    """The stand-in driver reads the seeds' cluster parameters as they come (it builds nothing)."""

    cluster: FreeForm | None = doc("the seeds' cluster parameters", alias="k8s_cluster_installation_param")
    registry: FreeForm | None = doc("seed 003's registry VNF", alias="private_registry_installation_param")
    lb: FreeForm | None = doc("seed 002's CNF load balancer", alias="lcm-kubernetes-external-lb")


class Recorder(MgmtDriver):
    """Records every hook call; can be told to fail a hook a number of times."""

    name = "recorder"
    declared = Declared("recorder", RecorderParams, merge_depth=2)

    def __init__(self) -> None:
        self.calls: list[LcmContext] = []
        self.fail: dict[str, int] = {}

    async def handle(self, hook: str, ctx: LcmContext) -> None:
        self.calls.append(ctx)
        ctx.state.setdefault("hooks", []).append(hook)
        if self.fail.get(hook, 0) > 0:
            self.fail[hook] -= 1
            pw = ctx.additional_params["k8s_cluster_installation_param"]["master_node"]["password"]
            raise RuntimeError(f"{hook} exploded with password {pw}")

    def hooks(self) -> list[str]:
        return [c.hook for c in self.calls]


class Harness:
    def __init__(self, app: App, recorder: Recorder) -> None:
        self.app = app
        self.rec = recorder
        self.pkg_id = ""
        self.vnfd_id = ""

    def onboard(self) -> None:
        pkg = self.app.packages.create({})
        pkg = self.app.packages.upload(pkg.id, example_csar())
        self.pkg_id, self.vnfd_id = pkg.id, str(pkg.vnfd_id)

    async def wait(self, occ: OpOcc, timeout: float = 20.0) -> OpOcc:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            cur = self.app.instances.op_get(occ.id)
            if cur.operation_state in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK, OpState.FAILED_TEMP) \
                    and occ.id not in self.app.engine.running:
                return cur
            if loop.time() > deadline:
                raise TimeoutError(f"{occ.id} still {cur.operation_state}")
            await asyncio.sleep(0.005)

    async def instantiated(self, flavour: str = "simple", **extra: Any) -> str:
        inst = self.app.instances.create({"vnfdId": self.vnfd_id})
        body = {"flavourId": flavour, "additionalParams": SEED_PARAMS, **extra}
        occ = await self.wait(self.app.instances.instantiate(inst.id, body))
        assert occ.operation_state == OpState.COMPLETED, occ.error
        return inst.id


async def until(cond: Any, timeout: float = 10.0, step: float = 0.01) -> None:
    """Poll `cond()` until it is true; fails the test after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(step)


async def restart_engine(app: App, **changes: Any) -> LcmEngine:
    """Stop the app's engine and start one built like it, with `changes` to its constructor's
    arguments; the instance service then hands its occurrences to the new one."""
    old = app.engine
    await old.stop()
    kw: dict[str, Any] = dict(vnfd_of=old.vnfd_of, files_of=old.files_of, infra_drivers=old.infra_drivers,
                              vim_of=old.vim_of, mgmt=old.mgmt, liveness=old.liveness, notifier=old.notes.notifier,
                              vim_registry=old.vim_registry, worker_id=old.worker_id,
                              orphan_after=old.orphan_after, poll_interval=old.poll_interval,
                              nodes_of=old.nodes_of)
    kw.update(changes)
    fresh = LcmEngine(old.uow, **kw)
    app.engine = fresh
    app.instances.submit = lambda op_id, rb: fresh.submit(op_id, rollback=rb)
    app.instances.on_cancel = fresh.request_cancel
    await fresh.start()
    return fresh


@pytest.fixture
async def h(tmp_path: Path) -> AsyncIterator[Harness]:
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=0.5)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
    rec = Recorder()
    reg = MgmtDrivers()
    reg.register("kubeadm", lambda: rec)
    app = build(settings, sim=sim, mgmt=reg, notifier=None)
    await app.start()
    harness = Harness(app, rec)
    harness.onboard()
    try:
        yield harness
    finally:
        await app.stop()
