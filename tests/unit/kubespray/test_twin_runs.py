"""The twin's Kubespray runs fail where the real ansible-playbook and Kubespray would: the hosts a
playbook's plays connect to (remove-node.yml gathers the facts of every host) must all take the
run key, and a tree that fits no known release layout is refused naming the layouts."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
from vnfm.adapters.infra.simulator.twin.operator import OPERATOR_EXTRAS, RELEASE_FILES, set_operator_host
from vnfm.adapters.mgmt.kubespray.site import RunKey
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.kubespray import AuthorizedKey, KubesprayCheckInventory, KubesprayPlaybook

from .conftest import ANSIBLE, INVENTORY, ROOT_PATH, Ks

MARK = "vnfm-kubespray-test"


def _hosts(ks: Ks) -> dict[str, str]:
    """Inventory host name -> the address Ansible reaches it at."""
    inv = ks.app.sim.extras(OPERATOR_EXTRAS)["hosts"][ANSIBLE]["inventories"][INVENTORY]
    return {name: h["ansible_host"] for name, h in inv["hosts"].items()}


def _run(inst_id: str, key: RunKey, playbook: str, *extra: tuple[str, str], root: str = ROOT_PATH) -> Any:
    return KubesprayPlaybook(root, INVENTORY, inst_id, playbook, extra_vars=extra, private_key=key.private)


async def test_remove_node_fails_unreachable_until_the_key_is_on_every_host(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    hosts = _hosts(ks)
    assert sorted(hosts) == ["masternode-0", "workernode-0", "workernode-1"]
    ex = TwinExecutor(ks.app.sim, inst_id, operators={ANSIBLE})
    key = RunKey.generate()
    removal = _run(inst_id, key, "remove-node.yml", ("node", "workernode-1"), ("skip_confirmation", "yes"),
                   ("delete_nodes_confirmation", "yes"))
    # the key on the control plane and the removed node only (what the driver did before issue 22)
    for name in ("masternode-0", "workernode-1"):
        await ex.run(hosts[name], AuthorizedKey(MARK, key.public))
    with pytest.raises(StepFailed) as e:
        await ex.run(ANSIBLE, removal)
    assert "[workernode-0]: UNREACHABLE!" in e.value.reason and "Permission denied (publickey)" in e.value.reason
    assert "workernode-1" in {n["name"] for n in ks.state(inst_id)["kubernetes"]["nodes"]}  # nothing removed
    # ungraceful (reset_nodes=false): no facts, no reset: the first control plane is enough
    ungraceful = _run(inst_id, key, "remove-node.yml", ("node", "workernode-1"), ("skip_confirmation", "yes"),
                      ("delete_nodes_confirmation", "yes"), ("reset_nodes", "false"),
                      ("allow_ungraceful_removal", "true"))
    res = await ex.run(ANSIBLE, ungraceful)
    assert set(res.data["recap"]) == {"masternode-0"}
    assert res.data["path"] == "playbooks/remove_node.yml"
    # graceful again (of the other worker) once the key is on every host: it goes through
    await ex.run(hosts["workernode-0"], AuthorizedKey(MARK, key.public))
    res = await ex.run(ANSIBLE, _run(inst_id, key, "remove-node.yml", ("node", "workernode-0"),
                                     ("skip_confirmation", "yes"), ("delete_nodes_confirmation", "yes")))
    assert set(res.data["recap"]) == {"masternode-0", "workernode-0", "workernode-1"}


async def test_each_release_layout_is_found_and_a_tree_of_none_is_refused(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    hosts = _hosts(ks)
    ex = TwinExecutor(ks.app.sim, inst_id, operators={ANSIBLE})
    key = RunKey.generate()
    for addr in hosts.values():
        await ex.run(addr, AuthorizedKey(MARK, key.public))
    old = [f for f in RELEASE_FILES["v2.23"] if not f.startswith("playbooks/")]  # a v2.22+ tree without playbooks/
    set_operator_host(ks.app.sim, ANSIBLE, kubespray_roots={ROOT_PATH: RELEASE_FILES["v2.16"], "/opt/v2.31":
                                                            list(RELEASE_FILES["v2.31"]), "/opt/broken": old})
    check = await ex.run(ANSIBLE, KubesprayCheckInventory(ROOT_PATH, INVENTORY, inst_id))
    assert check.data["layout"] == "Kubespray v2.16 to v2.21 (playbooks at the root)"
    res = await ex.run(ANSIBLE, _run(inst_id, key, "facts.yml"))
    assert res.data["path"] == "facts.yml"
    # v2.16's remove-node.yml asks with vars_prompt: skip_confirmation alone does not answer it
    with pytest.raises(StepFailed, match="delete_nodes_confirmation=yes"):
        await ex.run(ANSIBLE, _run(inst_id, key, "remove-node.yml", ("node", "workernode-1"),
                                   ("skip_confirmation", "yes")))
    check = await ex.run(ANSIBLE, KubesprayCheckInventory("/opt/v2.31", "/opt/inv-31", inst_id))
    assert check.data["layout"] == "Kubespray v2.22 and later (playbooks/)"
    with pytest.raises(StepFailed) as e:
        await ex.run(ANSIBLE, KubesprayCheckInventory("/opt/broken", "/opt/inv-b", inst_id))
    assert "fits none of the known release layouts" in e.value.reason
    assert "Kubespray v2.22 and later (playbooks/): playbooks/cluster.yml" in e.value.reason
    assert "Kubespray v2.16 to v2.21 (playbooks at the root): cluster.yml" in e.value.reason
    with pytest.raises(StepFailed, match="fits none of the known release layouts"):
        await ex.run(ANSIBLE, _run(inst_id, key, "facts.yml", root="/opt/broken"))


async def test_control_plane_and_etcd_changes_only_as_kubespray_documents_them(ks: Ks) -> None:
    """docs/operations/nodes.md: a control plane joins by cluster.yml, never scale.yml; an etcd host
    by cluster.yml --limit=etcd,kube_control_plane -e ignore_assert_errors=yes, then the members'
    configuration by upgrade-cluster.yml with the same limit; after remove-node.yml of a member,
    cluster.yml regenerates the others'; the first control plane never leaves."""
    inst_id, _ = await ks.instantiate()
    await ks.done(ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "master_instance",
                                                   "numberOfSteps": 2}))
    ex = TwinExecutor(ks.app.sim, inst_id, operators={ANSIBLE})
    key = RunKey.generate()
    for addr in _hosts(ks).values():
        await ex.run(addr, AuthorizedKey(MARK, key.public))

    def run(playbook: str, *extra: tuple[str, str], limit: tuple[str, ...] = ()) -> KubesprayPlaybook:
        return KubesprayPlaybook(ROOT_PATH, INVENTORY, inst_id, playbook, limit, extra, private_key=key.private)

    confirm = (("skip_confirmation", "yes"), ("delete_nodes_confirmation", "yes"))
    ignore, etcd = ("ignore_assert_errors", "yes"), ("etcd", "kube_control_plane")
    members = lambda: sorted(ks.app.sim.extras(inst_id)["k8s"]["etcd"]["members"])  # noqa: E731
    with pytest.raises(StepFailed, match="masternode-0 is the first host of kube_control_plane"):
        await ex.run(ANSIBLE, run("remove-node.yml", ("node", "masternode-0"), *confirm))
    with pytest.raises(StepFailed, match="scale.yml cannot add control plane or etcd host.s. masternode-2"):
        await ex.run(ANSIBLE, run("scale.yml", limit=("masternode-2",)))
    await ex.run(ANSIBLE, run("remove-node.yml", ("node", "masternode-2"), *confirm))
    assert members() == ["masternode-0", "masternode-1"]
    assert ks.state(inst_id)["kubespray"]["etcd_stale"] == {"hosts": ["masternode-0", "masternode-1"],
                                                            "fix": "cluster.yml"}
    # masternode-2 is still in the inventory: a cluster.yml would add it to etcd again
    with pytest.raises(StepFailed, match="masternode-2 are added by cluster.yml --limit=etcd,kube_control_plane"):
        await ex.run(ANSIBLE, run("cluster.yml"))
    with pytest.raises(StepFailed, match="etcd configuration of masternode-0, masternode-1 still lists"):
        await ex.run(ANSIBLE, run("cluster.yml", ignore, limit=etcd))
    with pytest.raises(StepFailed, match="still lists the members before the last change: run cluster.yml"):
        await ex.run(ANSIBLE, run("remove-node.yml", ("node", "masternode-1"), *confirm))
    await ex.run(ANSIBLE, run("upgrade-cluster.yml", ignore, limit=etcd))
    assert "etcd_stale" not in ks.state(inst_id)["kubespray"]
    await ex.run(ANSIBLE, run("cluster.yml", ignore, limit=etcd))
    assert members() == ["masternode-0", "masternode-1", "masternode-2"]
    assert ks.state(inst_id)["kubespray"]["etcd_stale"]["hosts"] == ["masternode-0", "masternode-1"]
    with pytest.raises(StepFailed, match="run upgrade-cluster.yml --limit=etcd,kube_control_plane"):
        await ex.run(ANSIBLE, run("remove-node.yml", ("node", "masternode-1"), *confirm))
    await ex.run(ANSIBLE, run("upgrade-cluster.yml", ignore, limit=etcd))
    assert "etcd_stale" not in ks.state(inst_id)["kubespray"]


async def test_an_inventory_sample_of_kubespray_before_2_16_is_refused(ks: Ks) -> None:
    """group_vars/k8s-cluster (releases before v2.16) would not apply to the k8s_cluster group."""
    set_operator_host(ks.app.sim, ANSIBLE, kubespray_roots={
        ROOT_PATH: [*RELEASE_FILES["v2.16"], "inventory/sample/group_vars/k8s-cluster/k8s-cluster.yml"]})
    _, occ = await ks.instantiate(ok=False)
    assert "has the layout of Kubespray before v2.16 (group_vars/k8s-cluster)" in occ.error["detail"]
