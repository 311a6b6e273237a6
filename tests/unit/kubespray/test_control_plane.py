"""Control-plane scale of a Kubespray cluster on the simulated cloud (issue 27 item 4): the master
aspect 1 -> 3 -> 5 -> 3, one master at a time with Kubespray's documented playbooks, etcd's quorum
checked (against the twin's etcd) and the external LB's API frontend equal to the masters of the
moment at every step; refusals with their numbers; a failure half-way, retried and rolled back."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.kubespray.conftest import ANSIBLE, Ks
from vnfm.adapters.infra.simulator.twin import TwinExecutor
from vnfm.adapters.infra.simulator.twin.operator import set_operator_host
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.etcd_quorum import quorum
from vnfm.domain.model import OpState
from vnfm.examples import example_package_dir
from vnfm.packaging.csar import build_csar

MASTERS = "master_instance"
VNFD_ID = "4b7e2f0c-1d3a-4c5e-9f6a-7b8c9d0e1f2a"


def onboard_five_masters(ks: Ks, tmp: Path) -> None:
    """The example package with room for five masters (master_instance up to level 4)."""
    tree = tmp / "kubespray5"
    shutil.copytree(example_package_dir("kubespray"), tree)
    for f in (tree / "Definitions").glob("*.yaml"):
        text = f.read_text().replace("9d3c7e1a-5b2f-4c8e-a1d7-3e6f0b2c4a51", VNFD_ID)
        if f.name == "sample_kubernetes_df_simple.yaml":
            head, _, tail = text.partition("name: masterNode\n")
            tail = tail.replace("max_number_of_instances: 3", "max_number_of_instances: 5", 1)
            text = head + "name: masterNode\n" + tail
            text = text.replace("description: master_instance scaling aspect\n              max_scale_level: 2",
                                "description: master_instance scaling aspect\n              max_scale_level: 4")
        f.write_text(text)
    pkg = ks.app.packages.create({})
    pkg = ks.app.packages.upload(pkg.id, build_csar(tree))
    ks.vnfd_id = str(pkg.vnfd_id)


def scale(ks: Ks, inst_id: str, kind: str, steps: int) -> Any:
    return ks.app.instances.scale(inst_id, {"type": kind, "aspectId": MASTERS, "numberOfSteps": steps})


def assert_moment(ks: Ks, inst_id: str, masters: list[str]) -> None:
    """etcd (the twin's) has exactly these members, healthy, a quorum; the LB's API frontend lists
    exactly these masters; every worker's API proxy too; the cluster's nodes are Ready."""
    st = ks.state(inst_id)
    members = {m["name"]: m for m in ks.app.sim.extras(inst_id)["k8s"]["etcd"]["members"].values()}
    assert len(members) == len(masters)
    assert sum(1 for m in members.values() if m["healthy"]) >= quorum(len(masters))
    groups = st["kubespray"]["inventory"]
    assert groups["kube_control_plane"] == masters == groups["etcd"]
    assert api_backends(ks, inst_id) == sorted(masters)
    for w in groups["kube_node"]:
        assert st["kubespray"]["api_proxy"][w] == masters
    nodes = {n["name"]: n for n in st["kubernetes"]["nodes"]}
    assert all(nodes[m]["ready"] for m in masters)
    assert "etcd_stale" not in st["kubespray"]


def api_backends(ks: Ks, inst_id: str) -> list[str]:
    """The masters the LB's API frontend (*:8383, the cluster's part) sends to, by name."""
    for h in ks.app.sim.extras(inst_id)["k8s"]["hosts"].values():
        part = ((h.get("lb") or {}).get("owners") or {}).get("cluster")
        if part:
            api = next(f for f in part["frontends"] if f["port"] == 8383)
            return sorted(b[0] for b in api["backends"])
    raise AssertionError("no LB")


@contextlib.asynccontextmanager
async def probed(ks: Ks, inst_id: str) -> AsyncIterator[list[str]]:
    """Reads the twin all along an operation: the LB's API frontend (what the VIM, registered at
    the LB, reaches) always sends to control planes of the cluster only, at least one, and
    etcd always has a quorum of healthy members. Yields the problems seen (none expected)."""
    seen: list[str] = []

    async def watch() -> None:
        while True:
            k8s = ks.app.sim.extras(inst_id)["k8s"]
            members = list(k8s["etcd"]["members"].values())
            if sum(1 for m in members if m["healthy"]) < quorum(len(members)):
                seen.append(f"etcd without quorum: {members}")
            masters = {n for n, v in k8s["nodes"].items() if v["role"] == "master"}
            backends = set(api_backends(ks, inst_id))
            if not backends or not backends <= masters:
                seen.append(f"LB sends to {api_backends(ks, inst_id)}, masters are {sorted(masters)}")
            await asyncio.sleep(0)

    task = asyncio.get_running_loop().create_task(watch())
    try:
        yield seen
    finally:
        task.cancel()


def runs(ks: Ks, inst_id: str) -> list[tuple[str, list[str] | None, dict[str, str]]]:
    return [(r["playbook"], r["limit"], r["extra_vars"]) for r in ks.state(inst_id)["kubespray"]["runs"]]


async def test_masters_1_3_5_3_keep_quorum_and_the_lb_follows(ks: Ks, tmp_path: Path) -> None:
    onboard_five_masters(ks, tmp_path)
    inst_id, _ = await ks.instantiate()
    assert_moment(ks, inst_id, ["masternode-0"])
    before = len(runs(ks, inst_id))

    async with probed(ks, inst_id) as problems:
        occ = await ks.done(scale(ks, inst_id, "SCALE_OUT", 2))
    assert problems == []
    assert_moment(ks, inst_id, ["masternode-0", "masternode-1", "masternode-2"])
    new = runs(ks, inst_id)[before:]
    etcd_runs = [r for r in new if r[1] == ["etcd", "kube_control_plane"]]
    assert [r[0] for r in etcd_runs] == ["cluster.yml", "upgrade-cluster.yml"] * 2
    assert all(r[2].get("ignore_assert_errors") == "yes" for r in etcd_runs)
    assert not any(r[0] == "scale.yml" for r in new)
    assert new[-1][:2] == ("cluster.yml", ["kube_node"])  # the workers' API proxy
    msgs = ks.messages(occ)
    assert any("control plane masternode-1 joined: 2 control plane(s)" in m and "quorum 2" in m for m in msgs)
    assert any("control plane masternode-2 joined: 3 control plane(s)" in m and "tolerates 1" in m for m in msgs)
    assert any("cluster.yml --limit etcd,kube_control_plane -e ignore_assert_errors=yes finished in" in m
               and "(hosts: masternode-0, masternode-1, masternode-2)" in m for m in msgs)

    async with probed(ks, inst_id) as problems:
        await ks.done(scale(ks, inst_id, "SCALE_OUT", 2))
    assert problems == []
    five = [f"masternode-{i}" for i in range(5)]
    assert_moment(ks, inst_id, five)

    before = len(runs(ks, inst_id))
    async with probed(ks, inst_id) as problems:
        occ = await ks.done(scale(ks, inst_id, "SCALE_IN", 2))
    assert problems == []
    assert_moment(ks, inst_id, five[:3])
    new = runs(ks, inst_id)[before:]
    removals = [r for r in new if r[0] == "remove-node.yml"]
    assert [r[2]["node"] for r in removals] == ["masternode-4", "masternode-3"]
    assert "ignore_assert_errors" not in removals[0][2]  # 5 in the inventory
    assert removals[1][2]["ignore_assert_errors"] == "yes"  # 4 in the inventory
    assert [r[1] for r in new if r[0] == "cluster.yml"] == [None, None]  # regenerated on every node
    assert any("control plane masternode-4 removed: 4 control plane(s)" in m for m in ks.messages(occ))
    assert ks.app.instances.get(inst_id).scale_levels[MASTERS] == 2


async def test_even_sizes_and_the_first_control_plane_are_refused_at_request_time(ks: Ks, tmp_path: Path) -> None:
    onboard_five_masters(ks, tmp_path)
    inst_id, _ = await ks.instantiate()
    with pytest.raises(UnprocessableEntity, match=r"1 -> 2 masters: Kubespray's etcd needs an odd number"):
        scale(ks, inst_id, "SCALE_OUT", 1)
    await ks.done(scale(ks, inst_id, "SCALE_OUT", 2))
    first = ks.app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
    with pytest.raises(UnprocessableEntity, match="masternode-0, the first host of kube_control_plane"):
        ks.app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": MASTERS, "numberOfSteps": 2,
                                         "additionalParams": {"vnfc_instance_ids": [first.id]}})


async def test_a_scale_in_that_would_lose_quorum_is_refused_with_the_numbers(ks: Ks, tmp_path: Path) -> None:
    """5 masters, 2 of them unhealthy: removing 2 healthy ones leaves 3 members of which 1 healthy.
    The hook finds it against etcd before changing anything (FAILED_TEMP); what it saw is kept,
    so the next such request is refused at once (422), with the same numbers."""
    onboard_five_masters(ks, tmp_path)
    inst_id, _ = await ks.instantiate()
    await ks.done(scale(ks, inst_id, "SCALE_OUT", 4))

    def sicken(st: dict[str, Any]) -> None:
        for name in ("masternode-1", "masternode-2"):
            st["etcd"]["members"][name]["healthy"] = False

    TwinExecutor(ks.app.sim, inst_id).tx(sicken)
    runs_before = len(runs(ks, inst_id))
    occ = await ks.wait(scale(ks, inst_id, "SCALE_IN", 2))
    assert occ.operation_state == OpState.FAILED_TEMP
    detail = occ.error["detail"]
    assert ("removing etcd member masternode-4 would lose quorum: 4 members would remain, 2 of them healthy, "
            "quorum is 3 (unhealthy: masternode-1, masternode-2; heal them first)") in detail
    assert "nothing was changed" in detail
    assert len(runs(ks, inst_id)) == runs_before
    assert len(api_backends(ks, inst_id)) == 5
    rolled = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rolled.operation_state == OpState.ROLLED_BACK, rolled.error
    with pytest.raises(UnprocessableEntity, match="4 members would remain, 2 of them healthy, quorum is 3"):
        scale(ks, inst_id, "SCALE_IN", 2)


async def test_a_failure_half_way_is_retried_then_another_rolled_back(ks: Ks, tmp_path: Path) -> None:
    onboard_five_masters(ks, tmp_path)
    inst_id, _ = await ks.instantiate()
    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={"upgrade-cluster.yml": "etcd : Configure etcd"})
    occ = await ks.wait(scale(ks, inst_id, "SCALE_OUT", 2))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "kubespray upgrade-cluster.yml --limit etcd,kube_control_plane" in occ.error["detail"]
    assert "TASK [etcd : Configure etcd]" in occ.error["detail"]
    st = ks.state(inst_id)
    assert st["kubespray"]["etcd_stale"]["fix"].startswith("upgrade-cluster.yml")  # the twin saw it half done
    assert api_backends(ks, inst_id) == ["masternode-0"]  # the LB never listed a half-joined master

    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={})
    await ks.done(ks.app.instances.retry(occ.id))
    assert_moment(ks, inst_id, ["masternode-0", "masternode-1", "masternode-2"])

    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={"upgrade-cluster.yml": "etcd : Configure etcd"})
    occ = await ks.wait(scale(ks, inst_id, "SCALE_OUT", 2))
    assert occ.operation_state == OpState.FAILED_TEMP
    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={})
    rolled = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rolled.operation_state == OpState.ROLLED_BACK, rolled.error
    assert_moment(ks, inst_id, ["masternode-0", "masternode-1", "masternode-2"])
    assert len(ks.app.instances.get(inst_id).resources.of_vdu("masterNode")) == 3


async def test_an_ha_cluster_heals_a_worker_and_is_healed_entire(ks: Ks, tmp_path: Path) -> None:
    onboard_five_masters(ks, tmp_path)
    inst_id, _ = await ks.instantiate()
    await ks.done(scale(ks, inst_id, "SCALE_OUT", 2))
    three = ["masternode-0", "masternode-1", "masternode-2"]
    w0 = ks.app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    await ks.done(ks.app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id]}))
    assert_moment(ks, inst_id, three)
    await ks.done(ks.app.instances.heal(inst_id, {}))
    assert_moment(ks, inst_id, three)
    await ks.done(scale(ks, inst_id, "SCALE_IN", 2))
    assert_moment(ks, inst_id, ["masternode-0"])
