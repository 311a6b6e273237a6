"""An embedded vnfm (SQLite + zero-latency simulated cloud) with the real kubeadm driver."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig, TwinExecutor, view
from vnfm.adapters.mgmt.kubeadm import KubeadmDriver
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.model import OpOcc, OpState
from vnfm.examples import example_csar

MASTER_PW = "s3cret-master-pw"
WORKER_PW = "s3cret-worker-pw"

PARAMS: dict[str, Any] = {
    "k8s_cluster_installation_param": {
        "script_path": "Scripts/install_k8s_cluster.sh",
        "vim_name": "kubernetes_vim",
        "master_node": {
            "aspect_id": "master_instance",
            "ssh_cp_name": "masterNode_CP1",
            "nic_cp_name": "masterNode_CP1",
            "username": "ubuntu",
            "password": MASTER_PW,
            "pod_cidr": "192.168.3.0/16",
            "cluster_cidr": "10.199.187.0/24",
            "cluster_cp_name": "masterNode_CP1",
        },
        "worker_node": {
            "aspect_id": "worker_instance",
            "ssh_cp_name": "workerNode_CP2",
            "nic_cp_name": "workerNode_CP2",
            "username": "ubuntu",
            "password": WORKER_PW,
        },
        "proxy": {
            "http_proxy": "http://user1:password1@host1:3128",
            "https_proxy": "https://user2:password2@host2:3128",
            "no_proxy": "192.168.246.0/24,10.0.0.1",
            "k8s_node_cidr": "10.10.0.0/24",
        },
    }
}


def params(**changes: Any) -> dict[str, Any]:
    p = copy.deepcopy(PARAMS)
    root = p["k8s_cluster_installation_param"]
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        d = root
        for k in parents:
            d = d[k]
        if value is None:
            d.pop(leaf, None)
        else:
            d[leaf] = value
    return p


class K8s:
    def __init__(self, app: App, twin_config: TwinConfig) -> None:
        self.app = app
        self.driver = app.mgmt.driver("kubeadm")
        assert isinstance(self.driver, KubeadmDriver)
        self.twin_config = twin_config
        self.vnfd_id = ""

    def onboard(self) -> None:
        pkg = self.app.packages.create({})
        pkg = self.app.packages.upload(pkg.id, example_csar())
        self.vnfd_id = str(pkg.vnfd_id)

    async def wait(self, occ: OpOcc, timeout: float = 20.0) -> OpOcc:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            cur = self.app.instances.op_get(occ.id)
            if cur.operation_state in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK,
                                       OpState.FAILED_TEMP) and occ.id not in self.app.engine.running:
                return cur
            if loop.time() > deadline:
                raise TimeoutError(f"{occ.id} still {cur.operation_state}")
            await asyncio.sleep(0.005)

    async def instantiate(self, flavour: str = "ha", extra: dict[str, Any] | None = None,
                          ok: bool = True) -> tuple[str, OpOcc]:
        inst = self.app.instances.create({"vnfdId": self.vnfd_id})
        occ = await self.wait(self.app.instances.instantiate(
            inst.id, {"flavourId": flavour, "additionalParams": extra or PARAMS}))
        if ok:
            assert occ.operation_state == OpState.COMPLETED, occ.error
        return inst.id, occ

    async def done(self, occ: OpOcc) -> OpOcc:
        occ = await self.wait(occ)
        assert occ.operation_state == OpState.COMPLETED, occ.error
        return occ

    def twin(self, inst_id: str) -> TwinExecutor:
        return TwinExecutor(self.app.sim, inst_id)

    def view(self, inst_id: str) -> dict[str, Any]:
        return view(self.app.sim.extras(inst_id))

    def state(self, inst_id: str) -> dict[str, Any]:
        return dict(self.app.sim.extras(inst_id).get("k8s") or {})


@pytest.fixture
async def k8s(tmp_path: Path) -> AsyncIterator[K8s]:
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=5)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
    twin = TwinConfig(poll=0.002)
    app = build(settings, sim=sim, notifier=None, twin=twin)
    await app.start()
    await app.stop_backup_schedule()  # the tests run rounds themselves: a late first round would take theirs
    h = K8s(app, twin)
    h.onboard()
    try:
        yield h
    finally:
        await app.stop()
