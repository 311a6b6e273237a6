"""An embedded vnfm (SQLite + zero-latency simulated cloud) with the Kubespray driver and the
example package shaped like seed 002's user guide (`examples/packages/kubespray`)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig
from vnfm.adapters.infra.simulator.twin.operator import operator_view
from vnfm.adapters.infra.simulator.twin.view import instance_state
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.model import OpOcc, OpState
from vnfm.examples import example_csar

ANSIBLE = "10.10.0.50"
ROOT_PATH = "/home/ubuntu/kubespray-2.16.0"
INVENTORY = f"{ROOT_PATH}/inventory/mycluster"
NODE_PW = "s3cret-node-pw"
ANSIBLE_PW = "s3cret-ansible-pw"
LB_PW = "s3cret-lb-pw"

# seed 002's simple_kubernetes_param_file.json (passwords made unique so that a leak is visible)
PARAMS: dict[str, Any] = {
    "k8s_cluster_installation_param": {
        "vim_name": "kubernetes_vim",
        "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_FloatingIP",
                        "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": NODE_PW,
                        "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24"},
        "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_FloatingIP",
                        "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": NODE_PW},
        "proxy": {"http_proxy": "http://user1:password1@host1:3128",
                  "https_proxy": "https://user2:password2@host2:3128"},
        "ansible": {"ip_address": ANSIBLE, "username": "ubuntu", "password": ANSIBLE_PW,
                    "kubespray_root_path": ROOT_PATH, "transferring_inventory_path": INVENTORY},
        "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "ubuntu",
                              "ssh_password": LB_PW, "script_path": "Scripts/install_external_lb.sh"},
    },
    "lcm-operation-user-data": "./UserData/lcm_user_data.py",
    "lcm-operation-user-data-class": "SampleUserData",
}

# seed 002's scale/heal body "with additionalParams": whole dicts, another Ansible server
OVERRIDES: dict[str, Any] = {
    "k8s_cluster_installation_param": {
        "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_FloatingIP",
                        "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "workernode1"},
        "ansible": {"ip_address": "10.10.0.23", "username": "ansible", "password": "ansible-pw-2",
                    "kubespray_root_path": ROOT_PATH, "transferring_inventory_path": INVENTORY},
        "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "external_lb_user",
                              "ssh_password": "externallb", "script_path": "Scripts/install_external_lb.sh"},
    }
}


def params(**changes: Any) -> dict[str, Any]:
    """PARAMS with `a__b=value` changes inside k8s_cluster_installation_param (None deletes)."""
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


class Ks:
    def __init__(self, app: App) -> None:
        self.app = app
        self.vnfd_id = ""

    def onboard(self) -> None:
        pkg = self.app.packages.create({})
        pkg = self.app.packages.upload(pkg.id, example_csar("kubespray"))
        self.vnfd_id = str(pkg.vnfd_id)

    async def wait(self, occ: OpOcc, timeout: float = 30.0) -> OpOcc:
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

    async def done(self, occ: OpOcc) -> OpOcc:
        occ = await self.wait(occ)
        assert occ.operation_state == OpState.COMPLETED, occ.error
        return occ

    async def instantiate(self, extra: dict[str, Any] | None = None, ok: bool = True) -> tuple[str, OpOcc]:
        inst = self.app.instances.create({"vnfdId": self.vnfd_id})
        occ = await self.wait(self.app.instances.instantiate(
            inst.id, {"flavourId": "simple", "additionalParams": extra or PARAMS}))
        if ok:
            assert occ.operation_state == OpState.COMPLETED, occ.error
        return inst.id, occ

    def state(self, inst_id: str) -> dict[str, Any]:
        """What GET /sim/v1/state/{id} shows."""
        return instance_state(self.app.sim, inst_id) or {}

    def operator(self) -> dict[str, Any]:
        return operator_view(self.app.sim)

    def messages(self, occ: OpOcc) -> list[str]:
        return [str(e["message"]) for e in occ.events]


@pytest.fixture
async def ks(tmp_path: Path) -> AsyncIterator[Ks]:
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=5)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
    app = build(settings, sim=sim, notifier=None, twin=TwinConfig(poll=0.002))
    await app.start()
    await app.stop_backup_schedule()  # the tests run rounds themselves: a late first round would take theirs
    h = Ks(app)
    h.onboard()
    try:
        yield h
    finally:
        await app.stop()
