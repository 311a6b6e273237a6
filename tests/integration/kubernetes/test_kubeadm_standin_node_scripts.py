"""The Kubernetes driver's node scripts over real SSH, with RECORDING STAND-INS for kubeadm,
systemctl and apt (standins.py) on PATH inside the test hosts, and the REAL kubectl against the
simulator's Kubernetes API (kubeapi.py; the stand-in kubeadm registers the nodes there as their
kubelets would). This is NOT a Kubernetes cluster: it checks which commands the scripts run, in
which order, what they leave in the API, that a second run changes nothing, and that secrets never
reach a command line. etcd (started by the stand-in kubeadm) is real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes import standins
from tests.integration.kubernetes.kubeapi import SimApi
from vnfm.adapters.mgmt.cluster.etcd import ETCD_ENDPOINTS, ETCD_TLS
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget
from vnfm.nodesteps import (
    DeleteNode,
    DrainNode,
    EtcdMemberList,
    JoinInfo,
    KubeadmInit,
    KubeadmJoin,
    LabelNode,
    PrepareNode,
    StepFailed,
    WaitNodeReady,
)

pytestmark = pytest.mark.integration

VERSION = "1.30.4"
PROXY_PW = "pr0xy-s3cret"
HTTP_PROXY = f"http://proxyuser:{PROXY_PW}@10.232.0.1:3128"


def programs(lines: list[str]) -> list[str]:
    """'apt-get update -q' -> 'apt-get update'; the first two words of each recorded call."""
    return [" ".join(line.split()[:2]) for line in lines]


async def test_kubeadm_standin_node_scripts_calls_order_idempotence_secrets(make_hosts, ssh: SshExecutor,
                                                                            tmp_path: Path) -> None:
    require("etcd", "etcdctl", "openssl", "python3")
    m1, m2, w1 = make_hosts(3)
    pki = standins.Pki.create()
    api = SimApi(tmp_path / "kube-api", [])
    for h in (m1, m2, w1):
        await standins.install(ssh, h, pki, etcd_hosts=[m1, m2], api=api)
    await standins.calico_mirror(ssh, m1)
    bed = m1.bed
    targets = {
        m1.address: SshTarget(m1.address, username="root", password=bed.root_password, known_host_key=m1.host_key),
        m2.address: SshTarget(m2.address, username="root", password=bed.root_password, known_host_key=m2.host_key),
        w1.address: SshTarget(w1.address, username="root", private_key=bed.client_key_pem,
                              known_host_key=w1.host_key),
    }
    ex = SshStepExecutor(SshExecutor(command_timeout=120), targets, timeout=120)
    names = {m1.address: "k8s-m1", m2.address: "k8s-m2", w1.address: "k8s-w1"}
    secrets: list[str] = [bed.root_password, PROXY_PW]
    try:
        # ---- prepare node: apt/containerd/kubelet through the stand-ins; then nothing
        prep = {h.address: PrepareNode(names[h.address], VERSION, HTTP_PROXY, None, "10.232.0.0/24")
                for h in (m1, m2, w1)}
        for addr, step in prep.items():
            assert (await ex.run(addr, step)).changed
        calls = await standins.argv_log(ssh, m1)
        assert programs(calls) == [
            "hostnamectl set-hostname", "swapoff -a", "modprobe overlay", "modprobe br_netfilter",
            "sysctl --system", "apt-get update", "apt-get install", "containerd config", "systemctl daemon-reload",
            "systemctl restart", "curl -fsSL", "gpg --batch", "apt-get update", "apt-mark unhold",
            "apt-get install", "apt-mark hold", "systemctl enable",
        ], calls
        assert calls[0] == "hostnamectl set-hostname k8s-m1"
        assert "kubelet=1.30.4-\\*" in calls[14] and "kubeadm=1.30.4-\\*" in calls[14]
        assert calls[-1] == "systemctl enable --now kubelet"
        for addr, step in prep.items():
            assert not (await ex.run(addr, step)).changed
        assert await standins.argv_log(ssh, m1) == calls  # the second run called nothing
        # the proxy credentials are only in root-only files
        mode = await ssh.run(m1.target(), "stat -c '%a %n' /etc/apt/apt.conf.d/95vnfm-proxy "
                                          "/etc/systemd/system/containerd.service.d/http-proxy.conf", check=True)
        assert [ln.split()[0] for ln in mode.stdout.splitlines()] == ["600", "600"]

        # ---- init the first control plane
        init = KubeadmInit("k8s-m1", m1.address, f"{m1.address}:6443", "10.244.0.0/16", "10.96.0.0/12", VERSION,
                           (m1.address, "10.232.0.250"))
        n0 = len(await standins.argv_log(ssh, m1))
        assert (await ex.run(m1.address, init)).changed
        calls = (await standins.argv_log(ssh, m1))[n0:]
        assert programs(calls) == ["kubeadm init"]
        assert re.fullmatch(r"kubeadm init --config /tmp/tmp\.\w+/kubeadm\.yaml --upload-certs", calls[0])
        # the real kubectl applied the CNI manifest (from the mirror) and set the pod CIDR in it
        calico = api.state()["api"]["objects"]["daemonsets"]["kube-system/calico-node"]
        env = calico["spec"]["template"]["spec"]["containers"][0]["env"]
        assert env == [{"name": "CALICO_IPV4POOL_CIDR", "value": "10.244.0.0/16"}]
        assert api.state()["nodes"]["k8s-m1"]["role"] == "master"
        cfg = (await ssh.get_file(m1.target(), f"{standins.LOG_DIR}/kubeadm-init.yaml")).decode()
        assert f'controlPlaneEndpoint: "{m1.address}:6443"' in cfg and '- "10.232.0.250"' in cfg
        assert 'kubernetesVersion: "v1.30.4"' in cfg
        n1 = len(await standins.argv_log(ssh, m1))
        assert not (await ex.run(m1.address, init)).changed
        assert programs((await standins.argv_log(ssh, m1))[n1:]) == []  # only kubectl's check
        await ex.run(m1.address, WaitNodeReady("k8s-m1", 30))

        # ---- join a control plane: token and certificate key only inside the 0600 config
        info = (await ex.run(m1.address, JoinInfo())).data
        assert re.fullmatch(r"[0-9a-f]{6}\.[0-9a-f]{16}", info["token"])
        assert re.fullmatch(r"[0-9a-f]{64}", info["certificate_key"])
        secrets += [info["token"], info["certificate_key"]]
        join_cp = KubeadmJoin("k8s-m2", m2.address, f"{m1.address}:6443", True, info["token"], info["ca_cert_hash"],
                              info["certificate_key"])
        n2 = len(await standins.argv_log(ssh, m2))
        assert (await ex.run(m2.address, join_cp)).changed
        calls = (await standins.argv_log(ssh, m2))[n2:]
        assert len(calls) == 1, calls  # no kubelet.conf yet: straight to kubeadm join
        assert re.fullmatch(r"kubeadm join --config /tmp/tmp\.\w+/join\.yaml", calls[0])
        ev = await standins.events(ssh, m2)
        assert ev[0] == "join-config-mode 600 dir-mode 700"
        assert ev[1] == "etcd learner k8s-m2 promoted"  # kubeadm >= 1.29: EtcdLearnerMode
        assert re.fullmatch(r"join k8s-m2 control-plane=1 token-sha256=[0-9a-f]{64}", ev[2])
        n3 = len(await standins.argv_log(ssh, m2))
        assert not (await ex.run(m2.address, join_cp)).changed
        assert programs((await standins.argv_log(ssh, m2))[n3:]) == ["systemctl is-active"]
        await ex.run(m1.address, WaitNodeReady("k8s-m2", 30))
        members = (await ex.run(m1.address, EtcdMemberList(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS))).data["members"]
        assert sorted(m["name"] for m in members) == ["k8s-m1", "k8s-m2"]  # the real etcd has both
        assert not any(m["learner"] for m in members)  # promoted once in sync

        # a wrong token is refused and named without being shown
        bad = KubeadmJoin("k8s-w1", w1.address, f"{m1.address}:6443", False, "abcdef.0123456789abcdef",
                          info["ca_cert_hash"])
        with pytest.raises(StepFailed) as ei:
            await ex.run(w1.address, bad)
        assert "bootstrap token was rejected" in str(ei.value) and "0123456789abcdef" not in str(ei.value)

        # ---- join a worker (key login), label it
        info2 = (await ex.run(m1.address, JoinInfo())).data
        assert info2["token"] != info["token"]
        secrets += [info2["token"], info2["certificate_key"]]
        join_w = KubeadmJoin("k8s-w1", w1.address, f"{m1.address}:6443", False, info2["token"],
                             info2["ca_cert_hash"])
        # a join that failed halfway (after kubelet-start wrote its kubeconfigs; the kubelet is down):
        # the retry resets first, then joins
        await ssh.run(w1.target(), "printf 'apiVersion: v1\\n' > /etc/kubernetes/kubelet.conf; "
                                   "printf 'apiVersion: v1\\n' > /etc/kubernetes/bootstrap-kubelet.conf; "
                                   "rm -f /var/lib/vnfm-standin/units/kubelet", check=True)
        n7 = len(await standins.argv_log(ssh, w1))
        assert (await ex.run(w1.address, join_w)).changed
        calls = (await standins.argv_log(ssh, w1))[n7:]
        assert programs(calls) == ["systemctl is-active", "kubeadm reset", "kubeadm join"], calls
        assert calls[1] == "kubeadm reset -f"
        # a healthy joined node is left alone: only the check runs
        n8 = len(await standins.argv_log(ssh, w1))
        assert not (await ex.run(w1.address, join_w)).changed
        assert programs((await standins.argv_log(ssh, w1))[n8:]) == ["systemctl is-active"]
        # a joined node whose kubelet is down (no bootstrap kubeconfig left) is restarted, not reset
        await ssh.run(w1.target(), "rm -f /var/lib/vnfm-standin/units/kubelet", check=True)
        n9 = len(await standins.argv_log(ssh, w1))
        assert (await ex.run(w1.address, join_w)).changed
        calls = (await standins.argv_log(ssh, w1))[n9:]
        assert programs(calls) == ["systemctl is-active", "systemctl restart", "systemctl is-active"], calls
        assert (await standins.events(ssh, w1))[-1].startswith("join k8s-w1 control-plane=0 ")
        await ex.run(m1.address, WaitNodeReady("k8s-w1", 30))
        label = LabelNode("k8s-w1", (("node-role.kubernetes.io/worker", ""),))
        assert (await ex.run(m1.address, label)).changed
        assert not (await ex.run(m1.address, label)).changed

        # ---- drain and delete the worker; both converge
        assert api.state()["nodes"]["k8s-w1"]["labels"]["node-role.kubernetes.io/worker"] == ""
        assert (await ex.run(m1.address, DrainNode("k8s-w1", 30))).changed
        assert api.state()["nodes"]["k8s-w1"]["cordoned"] is True
        assert not (await ex.run(m1.address, DrainNode("k8s-w1", 30))).changed
        assert (await ex.run(m1.address, DeleteNode("k8s-w1"))).changed
        assert "k8s-w1" not in api.state()["nodes"]
        assert not (await ex.run(m1.address, DeleteNode("k8s-w1"))).changed
        assert not (await ex.run(m1.address, DrainNode("k8s-w1", 30))).changed

        # ---- the order of kubeadm calls on the first control plane
        kubeadm = [c for c in await standins.argv_log(ssh, m1) if c.startswith("kubeadm")]
        assert programs(kubeadm) == ["kubeadm init", "kubeadm token", "kubeadm init", "kubeadm token",
                                     "kubeadm init"]
        assert kubeadm[1] == "kubeadm token create --ttl 30m"
        assert kubeadm[2] == "kubeadm init phase upload-certs --upload-certs"

        # ---- no secret in any command line, nor left in temp files and logs
        for h in (m1, m2, w1):
            argv = "\n".join(await standins.argv_log(ssh, h))
            assert argv
            for s in secrets:
                assert s not in argv, f"a secret is on a command line on {h.name}"
            for s in secrets[2:]:
                assert await standins.files_containing(ssh, h, s, "/tmp", "/var/log", "/etc/kubernetes") == []
    finally:
        await ex.close()
        api.stop()
