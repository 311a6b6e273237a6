"""Issue 27 item 4, 1 -> 3 masters: the scripts that move a single control plane's endpoint to its VIP
(cp_endpoint_move.sh) and point a kubelet at it (kubelet_server.sh), over real SSH with the REAL
kubectl against the simulator's Kubernetes API, a REAL openssl, and the recording stand-ins of
standins.py for kubeadm (`init phase certs apiserver` / `init phase upload-config kubeadm`, their
configuration checked), crictl (static pods run while their manifest is there) and systemctl. The
"VIP" is a port on the master relayed to the API (what keepalived + HAProxy give in a cluster)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes import standins
from tests.integration.kubernetes.kubeapi import SimApi, forward_api
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget
from vnfm.nodesteps import KubeadmInit, MoveControlPlaneEndpoint, StepFailed
from vnfm.nodesteps.restore import KubeletServer

pytestmark = pytest.mark.integration

VERSION = "1.30.4"
CONF = "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://{addr}:6443\n  name: kubernetes\n"
KUBE_PROXY = """apiVersion: v1
kind: ConfigMap
metadata: {{name: kube-proxy, namespace: kube-system}}
data:
  kubeconfig.conf: |
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        server: https://{addr}:6443
      name: default
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: cluster-info, namespace: kube-public}}
data:
  kubeconfig: |
    apiVersion: v1
    clusters:
    - cluster:
        server: https://{addr}:6443
      name: ""
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: kubeadm-config, namespace: kube-system}}
data:
  ClusterConfiguration: |
    apiServer: {{}}
    apiVersion: kubeadm.k8s.io/v1beta3
    certificatesDir: /etc/kubernetes/pki
    clusterName: kubernetes
    controlPlaneEndpoint: {addr}:6443
    kind: ClusterConfiguration
    kubernetesVersion: v1.30.4
    networking:
      podSubnet: 10.244.0.0/16
      serviceSubnet: 10.96.0.0/12
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: kube-proxy, namespace: kube-system}}
spec:
  selector: {{matchLabels: {{k8s-app: kube-proxy}}}}
  template:
    metadata: {{labels: {{k8s-app: kube-proxy}}}}
    spec:
      containers: [{{name: kube-proxy, image: registry.k8s.io/kube-proxy:v1.30.4}}]
"""


async def test_cp_endpoint_move_and_kubelet_server_scripts(make_hosts, ssh: SshExecutor, tmp_path: Path) -> None:
    require("etcd", "etcdctl", "openssl", "python3")
    m1, w1 = make_hosts(2)
    pki = standins.Pki.create()
    api = SimApi(tmp_path / "kube-api", [], sans=(m1.address,))
    await standins.install(ssh, m1, pki, etcd_hosts=[m1], api=api)
    # the worker needs only the systemctl stand-in (the kubelet's unit) for its script
    await ssh.put_file(w1.target(), "/usr/local/lib/vnfm-standin/common.sh", standins.COMMON, mode=0o644)
    await ssh.put_file(w1.target(), "/usr/local/sbin/systemctl", standins.SYSTEMCTL, mode=0o755)
    await standins.calico_mirror(ssh, m1)
    bed = m1.bed
    targets = {h.address: SshTarget(h.address, username="root", password=bed.root_password, known_host_key=h.host_key)
               for h in (m1, w1)}
    ex = SshStepExecutor(SshExecutor(command_timeout=120), targets, timeout=120)
    try:
        await ex.run(m1.address, KubeadmInit("k8s-m1", m1.address, f"{m1.address}:6443", "10.244.0.0/16",
                                             "10.96.0.0/12", VERSION, (m1.address,)))
        # what kubeadm init leaves that the move changes (the stand-in writes only the API server manifest)
        await ssh.put_file(m1.target(), "/tmp/objects.yaml", KUBE_PROXY.format(addr=m1.address))
        for f in ("controller-manager.conf", "scheduler.conf", "super-admin.conf"):
            await ssh.put_file(m1.target(), f"/etc/kubernetes/{f}", CONF.format(addr=m1.address), mode=0o600)
        await ssh.run(m1.target(), "KUBECONFIG=/etc/kubernetes/admin.conf kubectl apply -f /tmp/objects.yaml && "
                      "touch /etc/kubernetes/manifests/kube-controller-manager.yaml "
                      "/etc/kubernetes/manifests/kube-scheduler.yaml && "
                      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
                      "-subj /CN=kube-apiserver -keyout /etc/kubernetes/pki/apiserver.key "
                      f"-out /etc/kubernetes/pki/apiserver.crt -addext subjectAltName=IP:{m1.address} 2>/dev/null",
                      check=True)
        await forward_api(ssh, m1, api, port=8383)  # the VIP's HAProxy port
        vip = f"{m1.address}:8383"
        move = MoveControlPlaneEndpoint(vip, (m1.address, "10.232.0.250"), deadline_s=30)
        n0 = len(await standins.argv_log(ssh, m1))
        assert (await ex.run(m1.address, move)).changed
        calls = (await standins.argv_log(ssh, m1))[n0:]
        kubeadm = [c for c in calls if c.startswith("kubeadm ")]
        assert [c.split()[:4] for c in kubeadm] == [["kubeadm", "init", "phase", "certs"],
                                                    ["kubeadm", "init", "phase", "upload-config"]]
        assert any(c.startswith("crictl ps -q --name") for c in calls)
        ev = await standins.events(ssh, m1)
        assert f"certs apiserver IP:{m1.address},IP:10.232.0.250" in ev and "upload-config" in ev
        san = await ssh.run(m1.target(), "openssl x509 -noout -ext subjectAltName -in "
                            "/etc/kubernetes/pki/apiserver.crt", check=True)
        assert f"IP Address:{m1.address}" in san.stdout and "IP Address:10.232.0.250" in san.stdout
        got = await ssh.run(m1.target(), "cd /etc/kubernetes && grep -h 'server:' admin.conf super-admin.conf "
                            "controller-manager.conf scheduler.conf; ls manifests", check=True)
        lines = got.stdout.split("\n")
        assert [ln.strip() for ln in lines[:4]] == [f"server: https://{vip}"] * 4
        assert lines[4:7] == ["kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"]
        objs = api.state()["api"]["objects"]
        cc = objs["configmaps"]["kube-system/kubeadm-config"]["data"]["ClusterConfiguration"]
        assert f"controlPlaneEndpoint: {vip}" in cc and '- "10.232.0.250"' in cc
        assert f"server: https://{vip}" in objs["configmaps"]["kube-system/kube-proxy"]["data"]["kubeconfig.conf"]
        assert f"server: https://{vip}" in objs["configmaps"]["kube-public/cluster-info"]["data"]["kubeconfig"]
        restarted = objs["daemonsets"]["kube-system/kube-proxy"]["spec"]["template"]["metadata"]
        assert "kubectl.kubernetes.io/restartedAt" in json.dumps(restarted)
        assert not (await ex.run(m1.address, move)).changed  # done: nothing again

        # ---- the worker's kubelet
        await ssh.put_file(w1.target(), "/etc/kubernetes/kubelet.conf", CONF.format(addr=m1.address), mode=0o600)
        point = KubeletServer(vip)
        n1 = len(await standins.argv_log(ssh, w1))
        assert (await ex.run(w1.address, point)).changed
        assert [c for c in (await standins.argv_log(ssh, w1))[n1:] if c.startswith("systemctl")] == [
            "systemctl restart kubelet"]
        conf = await ssh.run(w1.target(), "grep server: /etc/kubernetes/kubelet.conf", check=True)
        assert conf.stdout.strip() == f"server: https://{vip}"
        assert not (await ex.run(w1.address, point)).changed
        await ssh.put_file(w1.target(), "/etc/kubernetes/kubelet.conf", "apiVersion: v1\nkind: Config\n", mode=0o600)
        with pytest.raises(StepFailed, match="names 0 servers, expected one"):
            await ex.run(w1.address, point)
    finally:
        await ex.close()
        api.stop()
