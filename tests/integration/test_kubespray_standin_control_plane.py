"""Control-plane and etcd changes with the REAL ansible-core against the stand-in Kubespray tree
(tests/fixtures/kubespray_standin) on test hosts, as strict as Kubespray's docs/operations/nodes.md:
scale.yml refuses a control plane, an etcd host joins only by cluster.yml
--limit=etcd,kube_control_plane -e ignore_assert_errors=yes and only while every member's etcd
configuration is current (upgrade-cluster.yml with the same limit updates them), an even etcd count
needs ignore_assert_errors, the first control plane cannot be removed, and an inventory with the
group_vars layout of Kubespray before v2.16 is refused. The same playbook invocations as the
driver's (adapters/mgmt/kubespray/masters.py)."""

from __future__ import annotations

import pytest

from tests.integration.harness import TestHost
from tests.integration.test_kubespray_standin_playbooks import (
    INV,
    MARKER,
    MARKS,
    _cat,
    _install_ansible_server,
    _inventory,
    _playbook,
    _session,
)
from vnfm.adapters.mgmt.kubespray.masters import ETCD_LIMIT, IGNORE_ASSERTS
from vnfm.adapters.mgmt.kubespray.nodes import CONFIRM
from vnfm.adapters.mgmt.kubespray.site import RunKey
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import StepFailed
from vnfm.nodesteps.kubespray import AuthorizedKey

pytestmark = pytest.mark.integration


async def test_kubespray_standin_control_plane_and_etcd_changes(make_hosts, ssh: SshExecutor) -> None:
    ansible, m0, m1, m2, w0 = make_hosts(5)
    await _install_ansible_server(ssh, ansible)
    ex = _session([ansible, m0, m1, m2, w0])
    key = RunKey.generate()
    nodes = {"masternode-0": (m0, "master"), "workernode-0": (w0, "worker")}

    async def run(playbook: str, *extra: tuple[str, str], limit: tuple[str, ...] = ()) -> None:
        await ex.run(ansible.address, _playbook(key, playbook, limit, extra))

    async def refused(playbook: str, *extra: tuple[str, str], limit: tuple[str, ...] = ()) -> str:
        with pytest.raises(StepFailed) as e:
            await run(playbook, *extra, limit=limit)
        return e.value.reason

    async def members(h: TestHost) -> list[str]:
        return (await _cat(ssh, h, f"{MARKS}/etcd-member") or "").split()

    try:
        await ex.run(ansible.address, _inventory(nodes, w0.address))
        for h in (m0, m1, m2, w0):
            await ex.run(h.address, AuthorizedKey(MARKER, key.public))
        await run("cluster.yml")
        assert await members(m0) == ["masternode-0"]

        # ---- a second master: an even etcd count in between needs ignore_assert_errors
        nodes["masternode-1"] = (m1, "master")
        await ex.run(ansible.address, _inventory(nodes, w0.address))
        assert "Stop if etcd has an even number of members" in await refused("facts.yml")
        await run("facts.yml", IGNORE_ASSERTS)
        assert "scale.yml cannot add control plane or etcd host masternode-1" in await refused(
            "scale.yml", IGNORE_ASSERTS, limit=("masternode-1",))
        assert "TASK [Stop if an etcd host is added without the documented limits]" in await refused(
            "cluster.yml", IGNORE_ASSERTS)
        await run("cluster.yml", IGNORE_ASSERTS, limit=ETCD_LIMIT)
        assert await members(m1) == ["masternode-0", "masternode-1"]
        assert await members(m0) == ["masternode-0"]  # until upgrade-cluster.yml

        # ---- a third before the members' configuration is current: refused
        nodes["masternode-2"] = (m2, "master")
        await ex.run(ansible.address, _inventory(nodes, w0.address))
        why = await refused("cluster.yml", IGNORE_ASSERTS, limit=ETCD_LIMIT)
        assert "TASK [Stop if a member's etcd configuration lists other members than the current ones]" in why
        del nodes["masternode-2"]
        await ex.run(ansible.address, _inventory(nodes, w0.address))
        await run("upgrade-cluster.yml", IGNORE_ASSERTS, limit=ETCD_LIMIT)
        assert await members(m0) == ["masternode-0", "masternode-1"]
        nodes["masternode-2"] = (m2, "master")
        await ex.run(ansible.address, _inventory(nodes, w0.address))
        await run("facts.yml")
        await run("cluster.yml", IGNORE_ASSERTS, limit=ETCD_LIMIT)
        await run("upgrade-cluster.yml", IGNORE_ASSERTS, limit=ETCD_LIMIT)
        for h in (m0, m1, m2):
            assert await members(h) == ["masternode-0", "masternode-1", "masternode-2"]

        # ---- removal: never the first control plane; another one's etcd configuration goes
        assert "TASK [Stop if the first control plane is to be removed" in await refused(
            "remove-node.yml", ("node", "masternode-0"), *CONFIRM)
        await run("remove-node.yml", ("node", "masternode-2"), *CONFIRM)
        assert await _cat(ssh, m2, f"{MARKS}/etcd-member") is None

        # ---- an inventory with group_vars of Kubespray before v2.16 is refused
        assert (await ssh.run(ansible.target(), f"mkdir -p {INV}/group_vars/k8s-cluster")).ok
        why = await refused("facts.yml")
        assert "TASK [Stop if the inventory has the group_vars layout of Kubespray before v2.16]" in why
    finally:
        await ex.close()
