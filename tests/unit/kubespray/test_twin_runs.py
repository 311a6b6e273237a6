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
