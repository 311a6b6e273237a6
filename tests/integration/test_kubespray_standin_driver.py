"""The Kubespray driver's hooks over real SSH on test hosts, with the REAL ansible-core on the
Ansible-server host running the STAND-IN Kubespray tree (tests/fixtures/kubespray_standin).
The LB runs the REAL HAProxy (checked by TCP connections through it to a backend on the master).
A stand-in here (NOT the real program): `kubectl` on the master and the LB (a recording script with
a file store: enough for the driver's drain, delete and VIM-token scripts). Instantiate, scale out
and in, heal of a dead worker, terminate."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from tests.integration.conftest import require
from tests.integration.harness import TestHost
from tests.integration.test_kubespray_standin_playbooks import INV, MARKS, ROOT, _cat, _install_ansible_server
from tests.integration.test_lb_frontends import CONF_DIR, converged, start_servers
from vnfm.adapters.mgmt.kubespray import KubesprayDriver
from vnfm.adapters.nodes.ssh import SshAccess
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import LcmOperation, Vim, VnfInstance
from vnfm.domain.resources import CpResource, Vnfc, VnfResources
from vnfm.examples import example_csar
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import LcmContext

pytestmark = pytest.mark.integration

KUBECTL_STANDIN = r"""#!/bin/bash
# STAND-IN for kubectl (NOT the real program): records its argv; a file store for what the
# driver's scripts ask (nodes deleted, ServiceAccount, its token Secret).
S=/var/lib/kubectl-standin
mkdir -p "$S"
printf '%s\n' "$*" >> "$S/argv.log"
args=()
for a in "$@"; do
  case "$a" in
    -n|--namespace) ns_next=1 ;;
    *) if [ -n "${ns_next:-}" ]; then ns_next=; else args+=("$a"); fi ;;
  esac
done
case "${args[0]} ${args[1]:-}" in
  "get node") [ ! -e "$S/deleted-${args[2]}" ] ;;
  "delete node") touch "$S/deleted-${args[2]}" ;;
  "drain "*) exit 0 ;;
  "get serviceaccount"|"get clusterrolebinding") [ -e "$S/${args[1]}-${args[2]}" ] ;;
  "create serviceaccount"|"create clusterrolebinding") touch "$S/${args[1]}-${args[2]}" ;;
  "apply -f") cat > /dev/null; head -c 24 /dev/urandom | base64 > "$S/token" ;;
  "get secret")
    [ -e "$S/token" ] || exit 1
    if [[ "$*" == *jsonpath* ]]; then printf '%s' "$(cat "$S/token")" | base64 -w0; fi ;;
  *) exit 0 ;;
esac
"""

FAKE_CA = "-----BEGIN CERTIFICATE-----\nc3RhbmQtaW4gQ0E=\n-----END CERTIFICATE-----\n"


class Vims:
    def __init__(self) -> None:
        self.vims: dict[str, Vim] = {}

    def list(self) -> list[Vim]:
        return list(self.vims.values())

    def register(self, vim: Vim) -> Vim:
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
    def __init__(self, ansible: TestHost, lb: TestHost, master: TestHost, workers: list[TestHost]) -> None:
        bed = ansible.bed
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
                         vims=self.vims, state=self.state, progress=self.progress.append, nodes=SshAccess(),
                         **{k: list(v) for k, v in kw.items()})
        await self.driver.handle(hook, ctx)


async def _standin_kubectl(ssh: SshExecutor, hosts: Sequence[TestHost]) -> None:
    for h in hosts:
        await ssh.put_file(h.target(), "/usr/local/bin/kubectl", KUBECTL_STANDIN, mode=0o755)
        await ssh.put_file(h.target(), "/etc/kubernetes/pki/ca.crt", FAKE_CA, mode=0o644)


async def test_kubespray_standin_driver_lifecycle_over_ssh(make_hosts, ssh: SshExecutor) -> None:
    require("haproxy", "python3")
    ansible, lb, m, w0, w1 = make_hosts(5)
    await _install_ansible_server(ssh, ansible)
    await _standin_kubectl(ssh, [m, lb])
    await start_servers(ssh, m, [6443])  # the "API server" behind the LB
    site = Site(ansible, lb, m, [w0])

    # ---- instantiate: the check before any VM, then the cluster through the Ansible server
    await site.hook("instantiate_start", LcmOperation.INSTANTIATE, {})
    await site.hook("instantiate_end", LcmOperation.INSTANTIATE, {}, added=site.instance.resources.vnfcs)
    for h, role in ((m, "master"), (w0, "worker")):
        assert f"role={role}" in (await _cat(ssh, h, f"{MARKS}/cluster.yml") or "")
        assert "vnfm-kubespray" not in (await _cat(ssh, h, "/root/.ssh/authorized_keys") or "")  # run key gone
    assert lb.address in (await _cat(ssh, m, f"{MARKS}/apiserver-sans") or "").split()
    (vim,) = site.vims.list()
    assert vim.access_info["authUrl"] == f"https://{lb.address}:8383" and vim.access_info["bearer_token"]
    kubeconfig = yaml.safe_load(await _cat(ssh, lb, "/root/.kube/config") or "")
    assert kubeconfig["clusters"][0]["cluster"]["server"] == f"https://{lb.address}:8383"
    await converged(lb.address, 8383, {f"{m.name}:6443"})  # *:8383 -> the master's :6443, real HAProxy
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

    # ---- scale in: drained and deleted through the LB's kubectl, remove-node.yml, out of hosts.yaml
    await site.hook("scale_start", LcmOperation.SCALE, {"type": "SCALE_IN", "aspectId": "worker_instance"},
                    removed=[new])
    lb_calls = (await _cat(ssh, lb, "/var/lib/kubectl-standin/argv.log") or "").splitlines()
    assert any(c.startswith("drain workernode-1 ") for c in lb_calls)
    assert "delete node workernode-1 --wait=true" in lb_calls
    assert "reset workernode-1" in (await _cat(ssh, w1, f"{MARKS}/reset") or "")
    hosts_yaml = yaml.safe_load(await _cat(ssh, ansible, f"{INV}/hosts.yaml") or "")
    assert list(hosts_yaml["all"]["children"]["kube_node"]["hosts"]) == ["workernode-0"]
    assert w1.address not in (await _cat(ssh, lb, f"{CONF_DIR}/cluster.cfg") or "")
    await converged(lb.address, 8383, {f"{m.name}:6443"})
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
