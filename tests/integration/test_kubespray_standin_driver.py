"""The Kubespray driver's hooks over real SSH on test hosts, with the REAL ansible-core on the
Ansible-server host running the STAND-IN Kubespray tree (tests/fixtures/kubespray_standin).
The LB runs the REAL HAProxy, and the REAL kubectl runs on the master and on the LB (the kubectl
jump host) against the simulator's Kubernetes API (tests/integration/kubernetes/kubeapi.py), which
the master's :6443 relays to: the LB's kubectl goes LB:8383 -> HAProxy -> master:6443 -> the API.
The stand-in cluster.yml writes a placeholder admin.conf; right after the playbook the test puts
the one a real Kubespray would have written (the API's CA and an admin token) in its place.
Instantiate, scale out and in (a real drain and node deletion), heal of a dead worker, terminate."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.integration.conftest import require
from tests.integration.harness import TestHost
from tests.integration.kubernetes.kubeapi import SimApi, forward_api, install_admin, install_kubectl
from tests.integration.test_kubespray_standin_playbooks import INV, MARKS, ROOT, _cat, _install_ansible_server
from tests.integration.test_lb_frontends import CONF_DIR
from vnfm.adapters.kube.client import api_client
from vnfm.adapters.mgmt.kubespray import KubesprayDriver
from vnfm.adapters.nodes.ssh import SshAccess, SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.errors import BadRequest
from vnfm.domain.model import LcmOperation, Vim, VnfInstance
from vnfm.domain.resources import CpResource, Vnfc, VnfResources
from vnfm.examples import example_csar
from vnfm.nodesteps.base import NodeStep, StepResult
from vnfm.nodesteps.kubespray import KubesprayPlaybook
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import LcmContext, NodeHost

pytestmark = pytest.mark.integration

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


class Vims:
    def __init__(self) -> None:
        self.vims: dict[str, Vim] = {}

    def list(self) -> list[Vim]:
        return list(self.vims.values())

    def register(self, vim: Vim) -> Vim:
        if vim.id in self.vims:  # as the VNFM's registry: an id is registered once
            raise BadRequest(f"VIM {vim.id} is already registered")
        self.vims[vim.id] = vim
        return vim

    def update(self, vim: Vim) -> Vim:
        self.vims[vim.id] = vim
        return vim

    def get(self, vim_id: str) -> Vim | None:
        return self.vims.get(vim_id)

    def delete(self, vim_id: str) -> None:
        self.vims.pop(vim_id, None)

    def dependents(self, instance_id: str) -> list[Any]:
        return []  # no CNF runs on this test's cluster


def _vnfc(vdu: str, cp: str, seq: int, h: TestHost) -> Vnfc:
    return Vnfc(id=f"vnfc-{vdu}-{seq}", vdu_id=vdu, server_id=f"server-{vdu}-{seq}", name=f"{vdu}-{seq}", seq=seq,
                cps=[CpResource(id=f"cp-{vdu}-{seq}", cpd_id=cp, port_id=f"port-{vdu}-{seq}",
                                ip_addresses=[h.address])])


class Site:
    def __init__(self, ansible: TestHost, lb: TestHost, master: TestHost, workers: list[TestHost],
                 access: SshAccess) -> None:
        bed = ansible.bed
        self.access = access
        self.vnfd = parse_vnfd(read_csar(example_csar("kubespray")))
        key = bed.client_key_pem
        self.params: dict[str, Any] = {"k8s_cluster_installation_param": {
            "vim_name": "itest-kubespray",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "root", "ssh_private_key": key,
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "root", "ssh_private_key": key},
            "proxy": {"https_proxy": "http://proxyuser:pr0xy-s3cret-drv@10.232.0.1:3128"},
            "ansible": {"ip_address": ansible.address, "username": "root", "ssh_private_key": key,
                        "kubespray_root_path": ROOT, "transferring_inventory_path": INV, "playbook_timeout": 240},
            "external_lb_param": {"ssh_cp_name": "externalLB_CP3", "ssh_username": "root", "ssh_private_key": key,
                                  "script_path": "Scripts/install_external_lb.sh"},
            "drain_timeout": 30,
        }}
        vnfcs = [_vnfc("externalLB", "externalLB_CP3", 0, lb), _vnfc("masterNode", "masterNode_CP1", 0, master),
                 *(_vnfc("workerNode", "workerNode_CP2", i, w) for i, w in enumerate(workers))]
        self.instance = VnfInstance(id=str(uuid.uuid4()), vnfd_id=self.vnfd.id, flavour_id="simple",
                                    additional_params=copy.deepcopy(self.params))
        self.instance.resources = VnfResources(vnfcs=vnfcs)
        self.state: dict[str, Any] = {}
        self.vims = Vims()
        self.progress: list[str] = []
        self.driver = KubesprayDriver()

    async def hook(self, hook: str, operation: LcmOperation, request: dict[str, Any], **kw: Sequence[Vnfc]) -> None:
        ctx = LcmContext(hook=hook, operation=operation, op_id=str(uuid.uuid4()), instance=self.instance,
                         request=request, additional_params=copy.deepcopy(self.params), vnfd=self.vnfd,
                         flavour=self.vnfd.flavours["simple"], package=None, resources=self.instance.resources,
                         vims=self.vims, state=self.state, progress=self.progress.append, nodes=self.access,
                         params=KubesprayDriver.declared.for_operation(
                             str(operation), self.params, (request or {}).get("additionalParams") or self.params),
                         **{k: list(v) for k, v in kw.items()})
        await self.driver.handle(hook, ctx)


class AdminAfterClusterYml(SshAccess):
    """SSH node access that, after each cluster.yml run, replaces the stand-in's placeholder
    admin.conf on the master by the simulated API's (what a real Kubespray run leaves there)."""

    def __init__(self, ssh: SshExecutor, master: TestHost, api: SimApi) -> None:
        super().__init__()
        self.ssh, self.master, self.api = ssh, master, api

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> SshStepExecutor:
        ex = super().session(instance_id, hosts, pins)
        run = ex.run

        async def run_then_admin(host: str, step: NodeStep, *a: Any, **kw: Any) -> StepResult:
            res = await run(host, step, *a, **kw)
            if isinstance(step, KubesprayPlaybook) and step.playbook == "cluster.yml":
                await install_admin(self.ssh, self.master, self.api)
            return res

        ex.run = run_then_admin  # type: ignore[method-assign]
        return ex


async def test_kubespray_standin_driver_lifecycle_over_ssh(make_hosts, ssh: SshExecutor, tmp_path: Path) -> None:
    require("haproxy", "python3")
    ansible, lb, m, w0, w1 = make_hosts(5)
    await _install_ansible_server(ssh, ansible)
    api = SimApi(tmp_path / "kube-api", [("masternode-0", "master", m.address),
                                         ("workernode-0", "worker", w0.address),
                                         ("workernode-1", "worker", w1.address)], sans=(lb.address, m.address))
    try:
        for h in (m, lb):
            await install_kubectl(ssh, h)
        await forward_api(ssh, m, api)  # the "API server" on the master, behind the LB
        await _lifecycle(ssh, api, ansible, lb, m, w0, w1)
    finally:
        api.stop()


async def _lifecycle(ssh: SshExecutor, api: SimApi, ansible: TestHost, lb: TestHost, m: TestHost, w0: TestHost,
                     w1: TestHost) -> None:
    site = Site(ansible, lb, m, [w0], AdminAfterClusterYml(ssh, m, api))

    # ---- instantiate: the check before any VM, then the cluster through the Ansible server
    await site.hook("instantiate_start", LcmOperation.INSTANTIATE, {})
    await site.hook("instantiate_end", LcmOperation.INSTANTIATE, {}, added=site.instance.resources.vnfcs)
    for h, role in ((m, "master"), (w0, "worker")):
        assert f"role={role}" in (await _cat(ssh, h, f"{MARKS}/cluster.yml") or "")
        assert "vnfm-kubespray" not in (await _cat(ssh, h, "/root/.ssh/authorized_keys") or "")  # run key gone
    assert lb.address in (await _cat(ssh, m, f"{MARKS}/apiserver-sans") or "").split()
    (vim,) = site.vims.list()
    assert vim.access_info["authUrl"] == f"https://{lb.address}:8383" and vim.access_info["bearer_token"]
    assert vim.access_info["ssl_ca_cert"] == api.endpoint.ca_pem
    kubeconfig = yaml.safe_load(await _cat(ssh, lb, "/root/.kube/config") or "")
    assert kubeconfig["clusters"][0]["cluster"]["server"] == f"https://{lb.address}:8383"
    # the LB's kubectl reaches the API through the real HAProxy (*:8383 -> the master's :6443), and so
    # does the VIM the driver registered (its token, issued by the API, and the API's CA)
    nodes = (await ssh.run(lb.target(), "kubectl get nodes -o name", check=True)).stdout.split()
    assert nodes == ["node/masternode-0", "node/workernode-0", "node/workernode-1"]
    with api_client(vim) as c:
        assert len(client.CoreV1Api(c).list_node().items) == 3
        client.AppsV1Api(c).create_namespaced_deployment("default", WEB)
    cfg = await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or ""
    assert m.address in cfg and w0.address in cfg and w1.address not in cfg  # the NodePort pool
    assert any(p.startswith("kubespray: cluster.yml finished in ") for p in site.progress)
    assert set(site.state["host_keys"]) >= {"vnfc-masterNode-0", "vnfc-workerNode-0", f"host:{ansible.address}"}

    # ---- scale out: the new worker only (facts.yml, scale.yml --limit)
    new = _vnfc("workerNode", "workerNode_CP2", 1, w1)
    site.instance.resources = VnfResources(vnfcs=[*site.instance.resources.vnfcs, new])
    await site.hook("scale_end", LcmOperation.SCALE, {"type": "SCALE_OUT", "aspectId": "worker_instance"},
                    added=[new])
    assert "joined workernode-1" in (await _cat(ssh, w1, f"{MARKS}/scale.yml") or "")
    assert await _cat(ssh, w0, f"{MARKS}/scale.yml") is None
    assert w1.address in (await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or "")

    # ---- scale in: drained (a pod evicted) and deleted through the LB's kubectl, remove-node.yml, out of hosts.yaml
    await site.hook("scale_start", LcmOperation.SCALE, {"type": "SCALE_IN", "aspectId": "worker_instance"},
                    removed=[new])
    assert "draining node workernode-1 through the LB's kubectl" in site.progress
    assert "workernode-1" not in api.state()["nodes"]  # drained (cordoned, pods evicted) and deleted
    assert sorted(p["node"] for p in api.state()["pods"].values()) == ["workernode-0", "workernode-0"]
    assert "reset workernode-1" in (await _cat(ssh, w1, f"{MARKS}/reset") or "")
    hosts_yaml = yaml.safe_load(await _cat(ssh, ansible, f"{INV}/hosts.yaml") or "")
    assert list(hosts_yaml["all"]["children"]["kube_node"]["hosts"]) == ["workernode-0"]
    assert w1.address not in (await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or "")
    site.instance.resources = VnfResources(vnfcs=[v for v in site.instance.resources.vnfcs if v.id != new.id])

    # ---- heal of a dead worker: ungraceful removal (no drain), then the replacement joins
    w0_vnfc = next(v for v in site.instance.resources.vnfcs if v.id == "vnfc-workerNode-0")
    ansible.bed.stop_hosts([w0])
    heal = {"vnfcInstanceId": [w0_vnfc.id]}
    await site.hook("heal_start", LcmOperation.HEAL, heal, healed=[w0_vnfc])
    assert any("ungraceful removal" in p for p in site.progress)
    assert "workernode-0" in (await _cat(ssh, m, f"{MARKS}/deleted-nodes") or "")
    w0.restart(new_host_key=True)  # the cloud's replacement VM: same address, new host key
    await ssh.run(w0.target(), f"rm -rf {MARKS}", check=True)
    await site.hook("heal_end", LcmOperation.HEAL, heal, healed=[w0_vnfc])
    assert "joined workernode-0" in (await _cat(ssh, w0, f"{MARKS}/scale.yml") or "")
    assert site.state["host_keys"]["vnfc-workerNode-0"] == w0.host_key

    # ---- terminate: the VIM and exactly the inventory directory go
    await site.hook("terminate_end", LcmOperation.TERMINATE, {})
    assert not site.vims.list()
    assert not (await ssh.run(ansible.target(), f"test -e {INV}")).ok
    assert await _cat(ssh, ansible, f"{ROOT}/cluster.yml") is not None
    text = "\n".join(site.progress)
    assert "pr0xy-s3cret-drv" not in text and "PRIVATE KEY" not in text
