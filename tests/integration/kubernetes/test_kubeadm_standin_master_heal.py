"""The Kubernetes driver's hooks over its SSH executor against 3 real test hosts: a 3-master HA
install, then a master heal. etcd (TLS, kubeadm's PKI paths), HAProxy and /etc/hosts are REAL, and
so is kubectl, against the simulator's Kubernetes API (kubeapi.py), where the stand-in kubeadm
registers the nodes; kubeadm/systemctl/apt are the RECORDING STAND-INS of standins.py (this is NOT
a Kubernetes cluster). Also: a changed host key on a VNFC that is not being healed is refused."""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.harness import NET, TestHost
from tests.integration.kubernetes import standins
from tests.integration.kubernetes.kubeapi import SimApi
from vnfm.adapters.infra.simulator.twin.base import sha
from vnfm.adapters.mgmt.kubeadm import KubeadmDriver
from vnfm.adapters.nodes.ssh import SshAccess
from vnfm.adapters.remote.ssh import HostKeyChanged, SshExecutor
from vnfm.domain.errors import BadRequest
from vnfm.domain.model import LcmOperation, Vim, VnfInstance
from vnfm.domain.resources import CpResource, Vnfc, VnfResources
from vnfm.domain.vnfd import Vnfd
from vnfm.examples import example_csar
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import LcmContext

pytestmark = pytest.mark.integration

VIP = f"{NET}.250"
HAPROXY_STATE = ("import socket; s = socket.socket(socket.AF_UNIX); s.connect('/run/haproxy-admin.sock'); "
                 "s.sendall(b'show servers state\\n'); print(s.makefile().read())")


class Vims:
    """The VIM registry the driver registers the cluster in."""

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


class Cluster:
    """One VNF instance whose three masterNode VNFCs are the test hosts; `state` is the driver's
    persisted state (the same dict across hooks, as the engine keeps it)."""

    def __init__(self, hosts: list[TestHost]) -> None:
        self.hosts = hosts
        self.vnfd: Vnfd = parse_vnfd(read_csar(example_csar()))
        self.flavour = self.vnfd.flavours["ha"]
        bed = hosts[0].bed
        self.params: dict[str, Any] = {"k8s_cluster_installation_param": {
            "vim_name": "itest-k8s",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "root", "password": bed.root_password,
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.96.0.0/12",
                            "cluster_cp_name": "masterNode_CP1", "cluster_vip": VIP},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "root",
                            "ssh_private_key": bed.client_key_pem},
            "node_ready_timeout": 30,
            "drain_timeout": 30,
        }}
        self.vnfcs = [
            Vnfc(id=f"vnfc-m{i}", vdu_id="masterNode", server_id=f"server-m{i}", name=f"masterNode-{i}", seq=i,
                 cps=[CpResource(id=f"cp-m{i}", cpd_id="masterNode_CP1", port_id=f"port-m{i}",
                                 ip_addresses=[h.address])])
            for i, h in enumerate(hosts)
        ]
        self.instance = VnfInstance(id=str(uuid.uuid4()), vnfd_id=self.vnfd.id, flavour_id="ha",
                                    additional_params=copy.deepcopy(self.params))
        self.instance.resources = VnfResources(vnfcs=self.vnfcs)
        self.state: dict[str, Any] = {}
        self.vims = Vims()
        self.progress: list[str] = []
        self.driver = KubeadmDriver()

    def ctx(self, hook: str, operation: LcmOperation, request: dict[str, Any],
            healed: Sequence[Vnfc] = ()) -> LcmContext:
        return LcmContext(hook=hook, operation=operation, op_id=str(uuid.uuid4()), instance=self.instance,
                          request=request, additional_params=copy.deepcopy(self.params), vnfd=self.vnfd,
                          flavour=self.flavour, package=None, resources=self.instance.resources,
                          healed=list(healed), vims=self.vims, state=self.state, progress=self.progress.append,
                          nodes=SshAccess(), params=KubeadmDriver.declared.for_operation(
                              str(operation), self.params, request.get("additionalParams") or self.params))

    async def hook(self, hook: str, operation: LcmOperation, request: dict[str, Any],
                   healed: Sequence[Vnfc] = ()) -> None:
        await self.driver.handle(hook, self.ctx(hook, operation, request, healed))


async def etcdctl(ssh: SshExecutor, h: TestHost, *args: str) -> str:
    pki = "/etc/kubernetes/pki/etcd"
    res = await ssh.run(h.target(), ["etcdctl", "--endpoints=https://127.0.0.1:2379", f"--cacert={pki}/ca.crt",
                                     f"--cert={pki}/healthcheck-client.crt", f"--key={pki}/healthcheck-client.key",
                                     "--dial-timeout=2s", "--command-timeout=5s", *args], check=True)
    return res.stdout


async def members(ssh: SshExecutor, h: TestHost) -> list[str]:
    out = json.loads(await etcdctl(ssh, h, "member", "list", "-w", "json"))
    return sorted(m.get("name", "") for m in out["members"])


async def lb_backends(ssh: SshExecutor, h: TestHost) -> tuple[list[str], list[str], str]:
    """(server lines of the installed haproxy.cfg, servers of the RUNNING HAProxy, its master pid)."""
    cfg = (await ssh.get_file(h.target(), "/etc/haproxy/haproxy.cfg")).decode()
    lines = sorted(ln.split()[1] for ln in cfg.splitlines() if ln.strip().startswith("server "))
    state = await ssh.run(h.target(), ["python3", "-c", HAPROXY_STATE], check=True)
    running = sorted(ln.split()[3] for ln in state.stdout.splitlines() if re.match(r"^\d+ vnfm_be_8383 ", ln))
    pid = (await ssh.get_file(h.target(), "/run/haproxy.pid")).decode().split()[0]
    return lines, running, pid


async def hosts_block(ssh: SshExecutor, h: TestHost) -> list[str]:
    text = (await ssh.get_file(h.target(), "/etc/hosts")).decode()
    m = re.search(r"^# BEGIN vnfm-k8s[^\n]*\n(.*?)^# END vnfm-k8s$", text, re.M | re.S)
    return sorted(m.group(1).split("\n")[:-1]) if m else []


async def replace_vm(ssh: SshExecutor, h: TestHost, pki: standins.Pki, etcd_hosts: list[TestHost],
                     api: SimApi) -> None:
    """Play the cloud rebuilding the VM of `h`: every process dies, a new SSH host key, an empty
    disk as far as the cluster is concerned (the stand-ins and PKI are part of the "image")."""
    h.restart(new_host_key=True)
    await ssh.run(h.target(), "rm -rf /var/lib/etcd /etc/kubernetes /etc/vnfm /etc/haproxy /etc/keepalived "
                              "/var/lib/vnfm-standin /var/log/vnfm-standin /etc/vnfm-standin /etc/containerd "
                              f"&& printf '127.0.0.1 localhost\\n{h.address} {h.name}\\n' > /etc/hosts", check=True)
    await standins.install(ssh, h, pki, etcd_hosts, api)


async def test_kubeadm_standin_master_heal_real_etcd_haproxy_hosts(make_hosts, ssh: SshExecutor,
                                                                   tmp_path: Path) -> None:
    require("etcd", "etcdctl", "haproxy", "openssl", "python3")
    hosts = make_hosts(3)
    pki = standins.Pki.create()
    api = SimApi(tmp_path / "kube-api", [])
    try:
        for h in hosts:
            await standins.install(ssh, h, pki, etcd_hosts=hosts, api=api)
        await standins.calico_mirror(ssh, hosts[0])
        await _install_and_heal(ssh, hosts, pki, api)
    finally:
        api.stop()


async def _install_and_heal(ssh: SshExecutor, hosts: list[TestHost], pki: standins.Pki, api: SimApi) -> None:
    c = Cluster(hosts)
    names = ["masternode-0", "masternode-1", "masternode-2"]

    # ---- install: 3 control planes behind HAProxy on every master, VIM registered
    await c.hook("instantiate_end", LcmOperation.INSTANTIATE, {"flavourId": "ha"})
    assert c.state["ha"] is True and c.state["vip"] == VIP
    assert await members(ssh, hosts[1]) == names
    for h in hosts:
        cfg, running, _ = await lb_backends(ssh, h)
        assert cfg == names and running == names
        assert await hosts_block(ssh, h) == sorted(f"{x.address} {n}" for x, n in zip(hosts, names, strict=True))
    assert c.state["host_keys"] == {f"vnfc-m{i}": h.host_key for i, h in enumerate(hosts)}
    (vim,) = c.vims.vims.values()
    assert vim.interface_info == {"endpoint": f"https://{VIP}:8383"} and vim.id == c.state["vim_id"]
    token = vim.access_info["bearer_token"]
    assert token and "BEGIN CERTIFICATE" in vim.access_info["ssl_ca_cert"]
    # the token was issued by the API (a token Secret of the driver's ServiceAccount) and is valid there
    assert sha(token) in {v["token_sha256"] for v in api.state()["service_accounts"].values()}
    assert sorted(api.state()["nodes"]) == names
    init = await standins.events(ssh, hosts[0])
    assert init[0] == "init masternode-0"
    for h, n in zip(hosts[1:], names[1:], strict=True):
        last = (await standins.events(ssh, h))[-1]
        assert re.fullmatch(rf"join {n} control-plane=1 token-sha256=[0-9a-f]{{64}}", last)
    pids_before = {h.address: (await lb_backends(ssh, h))[2] for h in hosts}

    # ---- heal masterNode-0 (the one that ran kubeadm init): out of etcd, out of every HAProxy
    healed = c.vnfcs[0]
    heal_req = {"vnfcInstanceId": [healed.id]}
    await c.hook("heal_start", LcmOperation.HEAL, heal_req, healed=[healed])
    assert await members(ssh, hosts[1]) == names[1:]  # removed by exact name, 2 healthy remain
    health = json.loads(await etcdctl(ssh, hosts[1], "endpoint", "health", "--cluster", "-w", "json"))
    assert len(health) == 2 and all(e["health"] for e in health)
    for h in hosts[1:]:
        cfg, running, pid = await lb_backends(ssh, h)
        assert cfg == names[1:] and running == names[1:]
        assert pid == pids_before[h.address]  # reloaded, not restarted
    assert sorted(api.state()["nodes"]) == names[1:]  # deleted from the API by a survivor's kubectl

    # the cloud replaces the VM: new server, new host key, empty disk
    old_key = hosts[0].host_key
    await replace_vm(ssh, hosts[0], pki, hosts, api)
    assert hosts[0].host_key != old_key
    healed.server_id = "server-m0-healed"

    await c.hook("heal_end", LcmOperation.HEAL, heal_req, healed=[healed])
    assert await members(ssh, hosts[1]) == names
    assert sorted(api.state()["nodes"]) == names  # registered again by the rejoined node
    health = json.loads(await etcdctl(ssh, hosts[0], "endpoint", "health", "--cluster", "-w", "json"))
    assert len(health) == 3 and all(e["health"] for e in health)
    for h in hosts:
        cfg, running, _ = await lb_backends(ssh, h)
        assert cfg == names and running == names, h.name
        assert await hosts_block(ssh, h) == sorted(f"{x.address} {n}" for x, n in zip(hosts, names, strict=True))
    # the healed VNFC's new key was pinned (and only that one changed)
    assert c.state["host_keys"] == {f"vnfc-m{i}": h.host_key for i, h in enumerate(hosts)}
    calls = [" ".join(x.split()[:2]) for x in await standins.argv_log(ssh, hosts[0])]
    assert calls.index("apt-get install") < calls.index("kubeadm join")  # prepared before it joins
    assert "kubeadm init" not in calls
    assert re.fullmatch(r"join masternode-0 control-plane=1 token-sha256=[0-9a-f]{64}",
                        (await standins.events(ssh, hosts[0]))[-1])

    # ---- a retry of heal_end converges: nothing joins again, no HAProxy reloads, etcd unchanged
    pids = {h.address: (await lb_backends(ssh, h))[2] for h in hosts}
    cfg_m1 = await ssh.get_file(hosts[1].target(), "/etc/haproxy/haproxy.cfg")
    n_calls = len(await standins.argv_log(ssh, hosts[0]))
    await c.hook("heal_end", LcmOperation.HEAL, heal_req, healed=[healed])
    assert await members(ssh, hosts[2]) == names
    assert {h.address: (await lb_backends(ssh, h))[2] for h in hosts} == pids
    assert await ssh.get_file(hosts[1].target(), "/etc/haproxy/haproxy.cfg") == cfg_m1
    new_calls = (await standins.argv_log(ssh, hosts[0]))[n_calls:]
    assert not any(x.startswith(("kubeadm", "apt-get")) for x in new_calls), new_calls

    # ---- no secret on any command line
    secrets = [c.hosts[0].bed.root_password, token]
    for h in hosts:
        argv = "\n".join(await standins.argv_log(ssh, h))
        for s in secrets:
            assert s not in argv
        assert not re.search(r"\b[0-9a-f]{6}\.[0-9a-f]{16}\b", argv)  # bootstrap tokens
        assert not re.search(r"\b[0-9a-f]{64}\b", argv)  # certificate keys
    assert token not in "\n".join(c.progress)

    # ---- a changed host key on a VNFC that is NOT healed is refused before anything changes
    await replace_vm_key_only(hosts[1])
    with pytest.raises(HostKeyChanged) as ei:
        await c.hook("heal_start", LcmOperation.HEAL, {"vnfcInstanceId": [c.vnfcs[2].id]}, healed=[c.vnfcs[2]])
    msg = str(ei.value)
    assert f"host key of {hosts[1].address}:22 changed" in msg and "refusing" in msg
    assert c.state["host_keys"]["vnfc-m1"] != hosts[1].host_key  # the pin was kept
    assert await members(ssh, hosts[0]) == names  # masternode-2 was not removed from etcd
    cfg, _, _ = await lb_backends(ssh, hosts[0])
    assert cfg == names


async def replace_vm_key_only(h: TestHost) -> None:
    """Someone else's machine answers at this VNFC's address (its processes die with the restart)."""
    h.restart(new_host_key=True)
