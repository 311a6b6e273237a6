"""Seed 002's Kubespray cluster through the REAL engine, the Kubespray driver and SSH against test
hosts backing the simulated servers (engine_site.py), with the REAL ansible-core on the operator's
Ansible server (a test host outside the VNF, on the VNF's network) running the STAND-IN Kubespray
tree (tests/fixtures/kubespray_standin). The LB runs the REAL HAProxy and the REAL kubectl (the
driver's kubectl jump host); the master's :6443 relays to the simulated Kubernetes API. As in
test_kubespray_standin_driver.py, what a real Kubespray run leaves behind is played by the node
access: after cluster.yml the API's admin.conf on the master, and after cluster.yml / scale.yml the
kubelets of the nodes it ran on register with the API (`KubesprayHosts`).

Flow: instantiate (LB + 1 master + 2 workers); scale out by one worker whose VM makes the scale-out
fail half-way (the Kubespray marker task fails on that node in facts.yml, after the inventory was
written, the run key authorized and the other nodes' facts gathered: FAILED_TEMP naming playbook,
task and node), the VM mended, retry (COMPLETED: the node joined, in the LB's pool); scale in by that
worker (a real drain and node deletion through the LB's kubectl, remove-node.yml, out of the
inventory and of the pool; its host destroyed)."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.conftest import require
from tests.integration.engine_hosts import SIM_NET, SIM_PUBLIC_NET, HostPool
from tests.integration.engine_site import MASTER, WORKER, Site, open_site
from tests.integration.harness import Testbed, TestHost
from tests.integration.kubernetes.kubeapi import forward_api, install_admin, install_kubectl
from tests.integration.test_kubespray_standin_playbooks import INV, MARKS, ROOT, _cat, _install_ansible_server
from tests.integration.test_lb_frontends import CONF_DIR
from vnfm.adapters.nodes.ssh import SshAccess, SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import OpState
from vnfm.domain.resources import Vnfc
from vnfm.examples import example_csar
from vnfm.nodesteps.base import NodeStep, StepResult
from vnfm.nodesteps.kubespray import KubesprayPlaybook
from vnfm.service.ports import NodeHost

pytestmark = pytest.mark.integration

LB = "externalLB"
ANSIBLE_ADDRESS = f"{SIM_NET}.254"  # the operator's server on the VNF's network (the cloud allocates from below)
# a VM that breaks scale.yml half-way: Kubespray's marker directory is a file there
BROKEN = "/var/lib/kubespray-standin"


class KubesprayHosts(SshAccess):
    """The production SSH node access. Before each playbook, the Ansible server (outside the
    cloud, as the operator's is) is given the floating IPs the cloud holds now (destination NAT
    in its own namespace, as engine_hosts does in vnfm's); after each cluster.yml / scale.yml run
    it plays what the real Kubespray leaves: the API's admin.conf on the masters, the nodes it ran
    on registered."""

    def __init__(self, ssh: SshExecutor) -> None:
        super().__init__(timeout=240)
        self.ssh = ssh
        self.site: Site | None = None
        self.ansible: TestHost | None = None

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> SshStepExecutor:
        ex = super().session(instance_id, hosts, pins)
        run = ex.run

        async def run_then_kubelets(host: str, step: NodeStep, *a: Any, **kw: Any) -> StepResult:
            if isinstance(step, KubesprayPlaybook):
                await self._floating_ips()
            res = await run(host, step, *a, **kw)
            if isinstance(step, KubesprayPlaybook) and step.playbook in ("cluster.yml", "scale.yml"):
                await self._kubelets(step.limit)
            return res

        ex.run = run_then_kubelets  # type: ignore[method-assign]
        return ex

    async def _floating_ips(self) -> None:
        assert self.site is not None and self.ansible is not None
        rules = "".join(f"iptables -w 5 -t nat -A OUTPUT -d {f}/32 -j DNAT --to-destination {b.host.address}\n"
                        for b in self.site.pool.by_vnfc.values() for f in b.floating)
        await self.ssh.run_script(self.ansible.target(), "set -e\niptables -w 5 -t nat -F OUTPUT\n"
                                  f"ip route replace {SIM_PUBLIC_NET}.0/24 dev eth0\n" + rules, check=True)

    async def _kubelets(self, limit: tuple[str, ...]) -> None:
        site = self.site
        assert site is not None
        for m in site.pool.hosts(MASTER):
            await install_admin(self.ssh, m, site.api)
        for v in site.vnfcs():
            name = v.name.lower()
            if v.vdu_id in (MASTER, WORKER) and (not limit or name in limit) and name not in site.nodes():
                site.api.register_node(name, "master" if v.vdu_id == MASTER else "worker",
                                       site.pool.host_of(v.id).address)


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[tuple[Site, TestHost]]:
    require("haproxy", "python3")
    access = KubesprayHosts(ssh)
    testbed.add_bridge_address(f"{SIM_NET}.1/24")  # before open_site: the Ansible server is on that network
    (ansible,) = testbed.start_hosts(1, [(ANSIBLE_ADDRESS,)])
    access.ansible = ansible
    try:
        await _install_ansible_server(ssh, ansible)
        # the API is reached through the LB and the master, at fixed or floating addresses
        sans = tuple(f"{net}.{i}" for net in (SIM_NET, SIM_PUBLIC_NET) for i in range(2, 64))
        async with open_site(testbed, ssh, tmp_path, provision, node_access=access, api_sans=sans) as s:
            access.site = s
            yield s, ansible
    finally:
        testbed.destroy_hosts([ansible])


async def provision(site: Site, pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
    """The VM image: kubectl on the LB and the master; the master's API server port relays to the
    simulated API; a VM made to break scale.yml when the test asks."""
    if vnfc.vdu_id in (LB, MASTER):
        await install_kubectl(site.ssh, h)
    if vnfc.vdu_id == MASTER:
        await forward_api(site.ssh, h, site.api)
    if vnfc.vdu_id == WORKER and site.fail_next_join:
        site.fail_next_join = False
        await site.ssh.run(h.target(), f"mkdir -p /var/lib && echo injected > {BROKEN}", check=True)


def request(key: str, ansible: str) -> dict[str, Any]:
    return {"flavourId": "simple", "additionalParams": {"k8s_cluster_installation_param": {
        "vim_name": "itest-kubespray-engine",
        "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                        "nic_cp_name": "masterNode_CP1", "username": "root", "ssh_private_key": key,
                        "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24"},
        "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                        "nic_cp_name": "workerNode_CP2", "username": "root", "ssh_private_key": key},
        "ansible": {"ip_address": ansible, "username": "root", "ssh_private_key": key,
                    "kubespray_root_path": ROOT, "transferring_inventory_path": INV, "playbook_timeout": 240},
        "external_lb_param": {"ssh_cp_name": "externalLB_CP3", "ssh_username": "root", "ssh_private_key": key,
                              "script_path": "Scripts/install_external_lb.sh"},
        "drain_timeout": 30,
    }}}


async def test_engine_kubespray_instantiate_scale_out_failed_half_way_retry_scale_in(
        site: tuple[Site, TestHost]) -> None:
    s, ansible = site
    app, ssh = s.app, s.ssh
    s.create(example_csar("kubespray"))

    # ---- instantiate: cluster.yml through the Ansible server, the LB's HAProxy and kubectl
    await s.done(app.instances.instantiate(s.inst_id, request(s.pool.bed.client_key_pem, ansible.address)))
    (lb_v,), (m_v,) = s.vnfcs(LB), s.vnfcs(MASTER)
    workers = s.vnfcs(WORKER)
    lb = s.pool.host_of(lb_v.id)
    assert len(workers) == 2 and len(s.pool.hosts()) == 4
    for v in (m_v, *workers):
        assert "role=" in (await _cat(ssh, s.pool.host_of(v.id), f"{MARKS}/cluster.yml") or ""), v.name
    assert s.nodes() == ["masternode-0", "workernode-0", "workernode-1"]
    nodes = (await ssh.run(lb.target(), "kubectl get nodes -o name", check=True)).stdout.split()
    assert nodes == ["node/masternode-0", "node/workernode-0", "node/workernode-1"]  # LB -> HAProxy -> master
    st = s.state()
    assert st["host_keys"][lb_v.id] == lb.host_key and st["host_keys"][f"host:{ansible.address}"] == ansible.host_key

    # ---- scale out by a worker whose VM breaks scale.yml half-way: FAILED_TEMP, mended, retry
    s.fail_next_join = True
    scale = {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1}
    occ = await s.wait(app.instances.scale(s.inst_id, copy.deepcopy(scale)))
    assert occ.operation_state == OpState.FAILED_TEMP, occ.error
    (new,) = [v for v in s.vnfcs(WORKER) if v.id not in {w.id for w in workers}]
    new_host = s.pool.host_of(new.id)
    detail = json.dumps(occ.error)
    # facts.yml ran on every node and failed on the new one (its marker task): scale.yml never ran
    assert "kubespray facts.yml failed" in detail and "fatal: [workernode-2]" in detail and BROKEN in detail, detail
    assert "workernode-2" not in s.nodes() and await _cat(ssh, new_host, f"{MARKS}/scale.yml") is None
    await ssh.run(new_host.target(), f"rm -f {BROKEN}", check=True)  # the operator mends the VM
    await s.done(app.instances.retry(occ.id))
    assert "joined workernode-2" in (await _cat(ssh, new_host, f"{MARKS}/scale.yml") or "")
    assert "workernode-2" in s.nodes() and new_host.address in (await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or "")
    for w in workers:  # --limit: the other nodes were not joined again
        assert await _cat(ssh, s.pool.host_of(w.id), f"{MARKS}/scale.yml") is None

    # ---- scale in (the newest worker): drained and deleted through the LB's kubectl, remove-node.yml
    await s.done(app.instances.scale(s.inst_id, {**scale, "type": "SCALE_IN"}))
    assert {v.id for v in s.vnfcs(WORKER)} == {w.id for w in workers} and new.id not in s.pool.by_vnfc
    assert s.nodes() == ["masternode-0", "workernode-0", "workernode-1"]
    hosts_yaml = yaml.safe_load(await _cat(ssh, ansible, f"{INV}/hosts.yaml") or "")
    assert sorted(hosts_yaml["all"]["children"]["kube_node"]["hosts"]) == ["workernode-0", "workernode-1"]
    assert new_host.address not in (await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or "")
