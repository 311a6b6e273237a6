"""Healing the only master of a kubeadm cluster on the simulated cloud: the cluster restored from an
etcd snapshot (a scheduled backup when the master is dead, one taken now when it answers), the
workers kept (same VNFCs, Ready), the data-loss window said before the VM is replaced; the 422
without a snapshot; the twin as strict as the real programs (another CA: workers NotReady; a corrupt
snapshot refused); a failure mid-heal retried to completion."""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from vnfm.adapters.mgmt.kubeadm.restore import window
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import OpState
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.kubernetes import WaitNodeReady
from vnfm.nodesteps.restore import KubeletServer

from .conftest import PARAMS, K8s
from .test_kube_api import api_client

BACKED_UP = {**PARAMS, "etcd_backup": {"interval": 600, "keep": 2}}


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}


async def _create(k8s: K8s, inst_id: str, tmp: Path, *names: str) -> None:
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])

    def run() -> None:
        core = client.CoreV1Api(api_client(vim, tmp))
        for n in names:
            core.create_namespaced_config_map("default", _config_map(n))

    await asyncio.to_thread(run)


async def _names(k8s: K8s, inst_id: str, tmp: Path) -> set[str]:
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])

    def run() -> set[str]:
        core = client.CoreV1Api(api_client(vim, tmp))
        return {c.metadata.name for c in core.list_namespaced_config_map("default").items}

    return await asyncio.to_thread(run)


async def _backup(k8s: K8s) -> None:
    assert k8s.app.backups is not None
    assert await k8s.app.backups.round() == 1


def _master_and_workers(k8s: K8s, inst_id: str) -> tuple[Any, list[Any]]:
    res = k8s.app.instances.get(inst_id).resources
    return res.of_vdu("masterNode")[0], res.of_vdu("workerNode")


def _progress(k8s: K8s, occ_id: str) -> list[str]:
    return [str(e["message"]) for e in k8s.app.instances.op_get(occ_id).events]


async def test_dead_master_restored_from_backup_workers_kept(k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple", BACKED_UP)
    await _create(k8s, inst_id, tmp_path, "before-1", "before-2")
    await _backup(k8s)
    await _create(k8s, inst_id, tmp_path, "after-1")
    assert {"before-1", "before-2", "after-1"} <= await _names(k8s, inst_id, tmp_path)
    master, workers = _master_and_workers(k8s, inst_id)
    old_server = master.server_id
    app.sim.inject(stopped=[master.id])  # the master's VM died

    occ = await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [master.id]}))
    names = await _names(k8s, inst_id, tmp_path)
    assert {"before-1", "before-2"} <= names and "after-1" not in names  # the snapshot's state, nothing later
    m2, w2 = _master_and_workers(k8s, inst_id)
    assert m2.id == master.id and m2.server_id != old_server  # the master's VM replaced
    assert [(w.id, w.server_id) for w in w2] == [(w.id, w.server_id) for w in workers]  # workers kept
    v = k8s.view(inst_id)
    assert all(v["nodes"][n]["ready"] for n in v["nodes"])
    assert [m["name"] for m in v["etcd_members"]] == ["masternode-0"]
    lines = _progress(k8s, occ.id)
    plan = [ln for ln in lines if "restoring the single control plane masternode-0 from etcd snapshot backup-" in ln]
    assert plan and "the newest the VNFM holds" in plan[0] and "are lost" in plan[0]
    assert lines.index(plan[0]) < next(i for i, ln in enumerate(lines) if "restored from" in ln)
    st = app.instances.get(inst_id).driver_state["kubeadm"]
    assert st["pki"]["secret"] and st["restore"]["name"].startswith("backup-")
    # the PKI copy: encrypted at rest, in no progress line
    ca_key = json.loads(st["pki"]["secret"])["ca.key"]
    with sqlite3.connect(app.settings.database_url.removeprefix("sqlite:///")) as con:
        raw = "\n".join(str(r) for t in ("vnf_instances", "vnf_lcm_op_occs") for r in con.execute(f"SELECT * FROM {t}"))
    assert ca_key not in raw and base64.b64decode(ca_key).decode() not in raw and "enc:v1:" in raw
    assert not [ln for ln in lines if ca_key in ln or "twin ca.key" in ln]


async def test_twin_kubelet_at_another_server_not_ready_until_repointed(k8s: K8s) -> None:
    """As strict as a kubelet: one whose kubelet.conf names another API server stays NotReady."""
    inst_id, _ = await k8s.instantiate("simple")
    master, workers = _master_and_workers(k8s, inst_id)
    tw = k8s.twin(inst_id)
    st = k8s.state(inst_id)
    endpoint = st["cluster"]["endpoint"]
    wsid = workers[0].server_id
    m_addr, w_addr = st["nodes"]["masternode-0"]["addresses"][0], st["nodes"]["workernode-0"]["addresses"][0]

    def stale(s: dict[str, Any]) -> None:
        s["hosts"][wsid]["kubelet_server"] = "10.9.9.9:6443"
        s["nodes"]["workernode-0"]["ready"] = False

    tw.tx(stale)
    with pytest.raises(StepFailed, match="did not become Ready"):
        await tw.run(m_addr, WaitNodeReady("workernode-0", 0.05))
    assert (await tw.run(w_addr, KubeletServer(endpoint))).changed
    await tw.run(m_addr, WaitNodeReady("workernode-0", 5))
    assert not (await tw.run(w_addr, KubeletServer(endpoint))).changed


async def test_live_master_snapshot_taken_now(k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple", BACKED_UP)
    await _backup(k8s)
    await _create(k8s, inst_id, tmp_path, "after-backup")
    master, workers = _master_and_workers(k8s, inst_id)
    occ = await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [master.id]}))
    assert "after-backup" in await _names(k8s, inst_id, tmp_path)  # the snapshot taken now has it
    assert any("taken now on masternode-0" in ln for ln in _progress(k8s, occ.id))
    assert [w.id for w in _master_and_workers(k8s, inst_id)[1]] == [w.id for w in workers]


async def test_refused_without_snapshot_or_with_workers(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple")
    master, workers = _master_and_workers(k8s, inst_id)
    with pytest.raises(UnprocessableEntity) as e:
        app.instances.heal(inst_id, {"vnfcInstanceId": [master.id]})
    assert "the VNFM holds none of this cluster" in e.value.detail and "etcd_backup" in e.value.detail
    assert "heal the entire VNF" in e.value.detail
    with pytest.raises(UnprocessableEntity, match="in another request"):
        app.instances.heal(inst_id, {"vnfcInstanceId": [master.id, workers[0].id]})
    assert [o.operation_state for o in app.instances.op_list()] == [OpState.COMPLETED]


async def test_other_ca_leaves_workers_not_ready(k8s: K8s) -> None:
    """The twin is as strict as kubelets: a master restored with another cluster's CA is not trusted."""
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple", BACKED_UP)
    other, _ = await k8s.instantiate("simple")
    await _backup(k8s)
    master, _ = _master_and_workers(k8s, inst_id)
    with app.uow() as u:  # the VNFM's copy replaced by another cluster's PKI
        inst, foreign = u.instances.get(inst_id), u.instances.get(other)
        inst.driver_state["kubeadm"]["pki"] = foreign.driver_state["kubeadm"]["pki"]
        u.instances.save(inst)
        u.commit()
    app.sim.inject(stopped=[master.id])
    req = {"vnfcInstanceId": [master.id],
           "additionalParams": {"k8s_cluster_installation_param": {"node_ready_timeout": 0.3}}}
    occ = await k8s.wait(app.instances.heal(inst_id, req))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert occ.error is not None and "workernode-" in occ.error["detail"]
    assert "did not become Ready" in occ.error["detail"]


async def test_corrupt_snapshot_refused(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple", BACKED_UP)
    await _backup(k8s)
    master, workers = _master_and_workers(k8s, inst_id)
    app.sim.inject(stopped=[master.id])
    stored = next((app.settings.data_dir / "etcd-backups" / inst_id).iterdir())
    stored.write_bytes(b"\x00not an etcd snapshot" + stored.read_bytes()[20:])  # corrupted in the VNFM's store
    occ = await k8s.wait(app.instances.heal(inst_id, {"vnfcInstanceId": [master.id]}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert occ.error is not None and "integrity check failed" in occ.error["detail"]
    assert [w.id for w in _master_and_workers(k8s, inst_id)[1]] == [w.id for w in workers]


async def test_failure_mid_heal_then_retry_completes(k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple", BACKED_UP)
    await _create(k8s, inst_id, tmp_path, "kept")
    await _backup(k8s)
    master, workers = _master_and_workers(k8s, inst_id)
    app.sim.inject(stopped=[master.id])
    k8s.twin(inst_id).set_faults(never_ready=["masternode-0"])  # fails after kubeadm init ran on the new VM
    req = {"vnfcInstanceId": [master.id],
           "additionalParams": {"k8s_cluster_installation_param": {"node_ready_timeout": 0.3}}}
    occ = await k8s.wait(app.instances.heal(inst_id, req))
    assert occ.operation_state == OpState.FAILED_TEMP and "masternode-0" in (occ.error or {})["detail"]
    k8s.twin(inst_id).set_faults(never_ready=[])
    occ = await k8s.done(app.instances.retry(occ.id))
    assert "kept" in await _names(k8s, inst_id, tmp_path)
    assert [w.id for w in _master_and_workers(k8s, inst_id)[1]] == [w.id for w in workers]
    assert all(n["ready"] for n in k8s.view(inst_id)["nodes"].values())


def test_window_text() -> None:
    assert window(1_900_000_000.0, now=1_900_000_000.0 + 41 * 60) == \
        "objects changed after 2030-03-17T17:46:40Z (41 min ago) are lost"
