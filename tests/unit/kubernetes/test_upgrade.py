"""change_vnfpkg of a kubeadm cluster on the simulated cloud: a Kubernetes upgrade one minor up,
control plane then workers one node at a time, the API reachable throughout; a fault at a middle
node leaves FAILED_TEMP; rollback brings every node and etcd's content back; retry completes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin.upgrade import api_reachable, etcd_keys
from vnfm.domain.errors import VnfmError
from vnfm.domain.model import OpState
from vnfm.examples import example_csar_version

from .conftest import K8s, params

NEW_VNFD = "5f2a9c1e-7b3d-4e8a-9c6f-000000000011"
UP = {"k8s_cluster_installation_param": {"kubernetes_version": "1.31.2"}}


def _newer(k8s: K8s, version: str = "1.1", vnfd_id: str = NEW_VNFD) -> str:
    pkg = k8s.app.packages.create({})
    return str(k8s.app.packages.upload(pkg.id, example_csar_version(version, vnfd_id)).vnfd_id)


def _versions(k8s: K8s, inst_id: str) -> dict[str, Any]:
    st = k8s.state(inst_id)
    return {name: (n["version"], st["hosts"][n["server_id"]].get("control_plane") if n["role"] == "master" else None)
            for name, n in sorted(st["nodes"].items())}


class Probe:
    """Reads the twin state every poll while an operation runs: was the API ever unreachable,
    and the order nodes reached the new kubelet version."""

    def __init__(self, k8s: K8s, inst_id: str, version: str) -> None:
        self.k8s, self.inst_id, self.version = k8s, inst_id, version
        self.down = 0
        self.order: list[str] = []
        self.cordoned_at_once = 0
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        while True:
            st = self.k8s.state(self.inst_id)
            if st.get("nodes") and not api_reachable(st):
                self.down += 1
            for name, n in st["nodes"].items():
                if n.get("version") == self.version and name not in self.order:
                    self.order.append(name)
            self.cordoned_at_once = max(self.cordoned_at_once, sum(1 for n in st["nodes"].values() if n["cordoned"]))
            await asyncio.sleep(0.001)

    def __enter__(self) -> Probe:
        self.task = asyncio.get_running_loop().create_task(self.run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()


async def test_ha_upgrade_one_node_at_a_time_api_up(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    k8s.twin_config.step_latency.update({"apiserver-restart": 0.02, "k8s-packages": 0.01})
    twin = k8s.twin(inst_id)
    twin.add_pod("web-1", "workernode-0", labels={"app": "web"})
    new_vnfd = _newer(k8s)
    assert set(_versions(k8s, inst_id).values()) == {("1.30.4", "1.30.4"), ("1.30.4", None)}
    with Probe(k8s, inst_id, "1.31.2") as probe:
        occ = await k8s.done(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert probe.down == 0  # two other control planes answered while one restarted
    assert probe.order == ["masternode-0", "masternode-1", "masternode-2", "workernode-0", "workernode-1"]
    assert probe.cordoned_at_once == 1
    assert set(_versions(k8s, inst_id).values()) == {("1.31.2", "1.31.2"), ("1.31.2", None)}
    st = k8s.state(inst_id)
    assert st["cluster"]["version"] == "1.31.2" and not any(n["cordoned"] for n in st["nodes"].values())
    inst = k8s.app.instances.get(inst_id)
    assert inst.vnfd_id == new_vnfd and inst.vnfd_version == "1.1"
    assert occ.changed_info == {"vnfdId": new_vnfd, "vnfProvider": "Company", "vnfProductName": "Sample K8s Cluster",
                                "vnfSoftwareVersion": "1.1", "vnfdVersion": "1.1"}
    assert inst.additional_params["k8s_cluster_installation_param"]["kubernetes_version"] == "1.31.2"
    vim = k8s.app.vims.get(inst.driver_state["kubeadm"]["vim_id"])
    assert vim is not None and vim.extra["kubernetes_version"] == "1.31.2"
    messages = [e["message"] for e in occ.events]
    assert any(m.startswith("etcd snapshot taken on masternode-0") for m in messages)
    snap = inst.driver_state["kubeadm"]["upgrade"]["snapshot"]
    copy = k8s.app.settings.data_dir / "etcd-snapshots" / inst_id / snap["name"]
    assert copy.is_file() and copy.stat().st_mode & 0o777 == 0o600
    # a scale-out now joins nodes at the new version only
    with pytest.raises(VnfmError) as e:
        k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                          "additionalParams": {"k8s_cluster_installation_param": {
                                              "kubernetes_version": "1.30.4"}}})
    assert e.value.status == 422 and "kubeadm cannot join" in e.value.detail


async def test_fault_at_a_middle_node_rollback_restores_nodes_and_etcd_then_retry_completes(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    twin = k8s.twin(inst_id)
    twin.add_pod("web-1", "workernode-0", labels={"app": "web"})
    twin.add_pdb("web", {"app": "web"}, max_unavailable=1)
    before_keys = etcd_keys(k8s.state(inst_id))
    before_versions = _versions(k8s, inst_id)
    new_vnfd = _newer(k8s)
    old = k8s.app.instances.get(inst_id)
    twin.set_faults(upgrade_fails=["masternode-1"])
    occ = await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "masternode-1" in occ.error["detail"] and "upgrade_control_plane" in occ.error["detail"]
    v = _versions(k8s, inst_id)
    assert v["masternode-0"] == ("1.31.2", "1.31.2") and v["masternode-1"][1] == "1.30.4"
    # the cluster changed since the snapshot (a drain moved the pod, a new object): the restore undoes it
    twin.add_pod("late-1", "workernode-1")
    assert etcd_keys(k8s.state(inst_id)) != before_keys
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert _versions(k8s, inst_id) == before_versions
    st = k8s.state(inst_id)
    assert etcd_keys(st) == before_keys
    assert st["cluster"]["version"] == "1.30.4" and not any(n["cordoned"] for n in st["nodes"].values())
    inst = k8s.app.instances.get(inst_id)
    assert (inst.vnfd_id, inst.vnf_pkg_id, inst.additional_params) == (old.vnfd_id, old.vnf_pkg_id,
                                                                          old.additional_params)
    assert any("etcd restored on 3 member(s)" in e["message"] for e in rb.events)

    # the same fault again, then retry once it is mended: the upgrade completes
    occ = await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert occ.operation_state == OpState.FAILED_TEMP
    twin.set_faults(upgrade_fails=[])
    done = await k8s.wait(k8s.app.instances.retry(occ.id))
    assert done.operation_state == OpState.COMPLETED, done.error
    assert set(_versions(k8s, inst_id).values()) == {("1.31.2", "1.31.2"), ("1.31.2", None)}
    assert k8s.app.instances.get(inst_id).vnfd_id == new_vnfd


async def test_single_master_upgrade(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    new_vnfd = _newer(k8s)
    k8s.twin_config.step_latency["apiserver-restart"] = 0.02
    with Probe(k8s, inst_id, "1.31.2") as probe:
        await k8s.done(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": new_vnfd, "additionalParams": UP}))
    assert probe.down > 0  # one control plane: its API server restarts (kubeadm upgrade apply)
    assert set(_versions(k8s, inst_id).values()) == {("1.31.2", "1.31.2"), ("1.31.2", None)}
    # rollback of a change that failed before any node moved restores no etcd
    newest = _newer(k8s, "1.2", "5f2a9c1e-7b3d-4e8a-9c6f-000000000012")
    k8s.twin(inst_id).set_faults(upgrade_fails=["masternode-0"])
    occ = await k8s.wait(k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": newest, "additionalParams": {
        "k8s_cluster_installation_param": {"kubernetes_version": "1.32.0"}}}))
    assert occ.operation_state == OpState.FAILED_TEMP
    rb = await k8s.wait(k8s.app.instances.rollback(occ.id))
    assert rb.operation_state == OpState.ROLLED_BACK, rb.error
    assert set(_versions(k8s, inst_id).values()) == {("1.31.2", "1.31.2"), ("1.31.2", None)}
    assert k8s.app.instances.get(inst_id).vnfd_id == new_vnfd


REFUSED: list[tuple[dict[str, Any], int, str]] = [
    ({"additionalParams": UP}, 422, "already runs"),  # same vnfdId
    ({"vnfdId": "nope", "additionalParams": UP}, 422, "no onboarded VNF package"),
    ({"vnfdId": NEW_VNFD}, 422, "kubernetes_version: a change_vnfpkg"),
    ({"vnfdId": NEW_VNFD, "additionalParams": {"k8s_cluster_installation_param": {"kubernetes_version": "1.32.1"}}},
     422, "1.30.4; 1.32.1 is 2 minor versions up"),
    ({"vnfdId": NEW_VNFD, "additionalParams": {"k8s_cluster_installation_param": {"kubernetes_version": "1.30.1"}}},
     422, "not newer"),
    ({"vnfdId": NEW_VNFD, "additionalParams": {"k8s_cluster_installation_param": {
        "kubernetes_version": "1.31.2", "proxy": {"http_proxy": "http://p:3128"}}}}, 422, ".proxy: a change_vnfpkg"),
    ({"vnfdId": NEW_VNFD, "additionalParams": UP, "vimConnectionInfo": []}, 422, "vimConnectionInfo"),
    ({"vnfdId": NEW_VNFD, "additionalParams": UP, "bogus": 1}, 400, "bogus"),
]


async def test_change_vnfpkg_refusals_create_nothing(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple", params())
    _newer(k8s)
    older = _newer(k8s, "0.9", "5f2a9c1e-7b3d-4e8a-9c6f-000000000009")
    cases = [*REFUSED, ({"vnfdId": older, "additionalParams": UP}, 422, "not newer than the VNF's 1.0")]
    ops = len(k8s.app.instances.op_list())
    for body, status, text in cases:
        with pytest.raises(VnfmError) as e:
            k8s.app.instances.change_vnfpkg(inst_id, {"vnfdId": k8s.vnfd_id, **body})
        assert e.value.status == status and text in e.value.detail, (body, e.value.detail)
    assert len(k8s.app.instances.op_list()) == ops
