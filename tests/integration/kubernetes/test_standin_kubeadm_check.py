"""The stand-in kubeadm's input checks (standins.KUBEADM_CHECK) refuse what kubeadm refuses, and
accept the configurations the node scripts write (those pass in the stand-in integration tests).
No test hosts needed: the checker runs with the system's python3, as on a host."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.kubernetes.standins import KUBEADM_CHECK

INIT = """apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: "10.0.0.1"
  bindPort: 6443
nodeRegistration:
  name: "k8s-m1"
  criSocket: unix:///run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: "v1.30.4"
controlPlaneEndpoint: "10.0.0.1:6443"
networking:
  podSubnet: "10.244.0.0/16"
  serviceSubnet: "10.96.0.0/12"
apiServer:
  certSANs:
    - "10.0.0.1"
"""
JOIN = f"""apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: "10.0.0.1:6443"
    token: "abcdef.0123456789abcdef"
    caCertHashes: ["sha256:{'a' * 64}"]
nodeRegistration:
  name: "k8s-w1"
  criSocket: unix:///run/containerd/containerd.sock
controlPlane:
  certificateKey: "{'b' * 64}"
  localAPIEndpoint:
    advertiseAddress: "10.0.0.2"
    bindPort: 6443
"""


@pytest.fixture
def kubeadm(tmp_path: Path):
    check = tmp_path / "kubeadm_check.py"
    check.write_text(KUBEADM_CHECK)

    def run(*args: str, init: str = INIT, join: str = JOIN) -> str:
        (tmp_path / "init.yaml").write_text(init)
        (tmp_path / "join.yaml").write_text(join)
        argv = [a.replace("INIT", str(tmp_path / "init.yaml")).replace("JOIN", str(tmp_path / "join.yaml"))
                for a in args]
        r = subprocess.run(["python3", str(check), *argv], capture_output=True, text=True, timeout=30)
        return "ok" if r.returncode == 0 else r.stderr.strip()

    return run


def test_the_scripts_commands_pass(kubeadm) -> None:
    assert kubeadm("init", "--config", "INIT", "--upload-certs") == "ok"
    assert kubeadm("join", "--config", "JOIN") == "ok"
    assert kubeadm("token", "create", "--ttl", "30m") == "ok"
    assert kubeadm("init", "phase", "upload-certs", "--upload-certs") == "ok"
    assert kubeadm("reset", "-f") == "ok"


@pytest.mark.parametrize(("args", "init", "join", "error"), [
    (("reset",), INIT, JOIN, "unknown command or flags: kubeadm reset"),
    (("init", "--config", "INIT", "--upload-cert"), INIT, JOIN, "unknown command or flags"),
    (("token", "create", "--ttl", "30x"), INIT, JOIN, "invalid argument '30x' for --ttl"),
    (("init", "--config", "INIT", "--upload-certs"), INIT.replace("v1beta3", "v1beta9", 1), JOIN,
     "apiVersion 'kubeadm.k8s.io/v1beta9' is not kubeadm.k8s.io/v1beta3"),
    (("init", "--config", "INIT", "--upload-certs"), INIT.replace("bindPort", "bindPrt"), JOIN,
     "localAPIEndpoint: strict decoding error: unknown field(s) ['bindPrt']"),
    (("init", "--config", "INIT", "--upload-certs"), INIT.replace("10.244.0.0/16", "10.244.0.0/33"), JOIN,
     "networking.podSubnet: '10.244.0.0/33' is not a valid CIDR"),
    (("init", "--config", "INIT", "--upload-certs"), INIT.replace('"k8s-m1"', '"K8S_M1"'), JOIN,
     "nodeRegistration.name: 'K8S_M1' is not a valid node name"),
    (("init", "--config", "INIT", "--upload-certs"), INIT.replace("v1.30.4", "1.30"), JOIN,
     "kubernetesVersion: '1.30' is not vX.Y.Z"),
    (("join", "--config", "JOIN"), INIT, JOIN.replace("abcdef.", "abcdef-"), "the bootstrap token is not of the form"),
    (("join", "--config", "JOIN"), INIT, JOIN.replace("sha256:", "md5:"), "caCertHashes: want sha256:"),
    (("join", "--config", "JOIN"), INIT, JOIN.replace('"10.0.0.1:6443"', '"10.0.0.1"'),
     "apiServerEndpoint: '10.0.0.1' is not host:port"),
])
def test_refused_as_kubeadm_refuses(kubeadm, args, init, join, error) -> None:
    assert error in kubeadm(*args, init=init, join=join)
