"""Steps of the single-master restore (heal of the only control plane from an etcd snapshot):

- `PkiFetch`: read the cluster's identity from a control plane (the kubernetes, etcd and
  front-proxy CAs, the service-account key pair), so the VNFM keeps a copy.
- `PkiPut`: put that identity on a new control plane before kubeadm runs there (kubeadm uses
  CA files it finds instead of generating new ones, so the workers' kubelets keep trusting the API
  server and service-account tokens stay valid).
- `EtcdRestoreMember`: `etcdutl snapshot restore` (etcdctl on 3.4) of a snapshot into the data
  directory of a host where no etcd runs yet, as the only member (membership reset to one). A
  stock kubeadm host has no etcdutl: it is then taken from the etcd image kubeadm uses for the
  cluster's Kubernetes version (pulled through containerd, mounted read-only).
- `KubeletServer`: point a worker's kubelet (`/etc/kubernetes/kubelet.conf`) at an API server
  address, kubelet restarted when it changed.

`KubeadmInit(existing_etcd=True)` (nodesteps/kubeadm.py) then starts the control plane on the
restored data. Every step checks before it acts (`changed` False when nothing had to change).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_name, _check_path, _check_url
from vnfm.nodesteps.kubeadm import _check_endpoint
from vnfm.nodesteps.upgrade import _check_sha, _check_snapshot_path, _check_version

# kubeadm's PKI files that make a cluster's identity, relative to /etc/kubernetes/pki
PKI_FILES = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key",
             "etcd/ca.crt", "etcd/ca.key")
PKI_DIR = "/etc/kubernetes/pki"
MAX_PKI_FILE = 64 * 1024
_B64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def check_pki(files: tuple[tuple[str, str], ...]) -> None:
    """Exactly kubeadm's identity files, each base64 and small."""
    names = [n for n, _ in files]
    if sorted(names) != sorted(PKI_FILES):
        raise ValueError(f"the PKI must be exactly {', '.join(PKI_FILES)}")
    for n, content in files:
        try:
            raw = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"PKI file {n} is not base64") from None
        if not raw or len(raw) > MAX_PKI_FILE:
            raise ValueError(f"PKI file {n} is empty or larger than {MAX_PKI_FILE} bytes")


@dataclass(frozen=True)
class PkiFetch(NodeStep):
    """On a control plane: data = files {relative path: base64} of `PKI_FILES` (secrets)."""

    kind: ClassVar[str] = "k8s-pki-fetch"


@dataclass(frozen=True)
class PkiPut(NodeStep):
    """Install `files` ((relative path, base64), all of `PKI_FILES`) under /etc/kubernetes/pki,
    keys mode 0600; uploaded by SFTP, never on a command line. No-op when every file there has that
    content; fails when a different CA is already installed (this host belongs to another cluster)."""

    kind: ClassVar[str] = "k8s-pki-put"
    files: tuple[tuple[str, str], ...] = field(repr=False)

    def __post_init__(self) -> None:
        check_pki(self.files)


@dataclass(frozen=True)
class EtcdRestoreMember(NodeStep):
    """Restore the snapshot at `path` (digest `sha256`) into `data_dir` as the single member `name`
    (`peer_url`), on a host where no etcd runs yet (no etcd static pod manifest). No-op when
    `data_dir` was restored from that digest; fails when the snapshot does not restore (corrupt).
    etcdutl (or etcd 3.4's etcdctl) comes from the host's PATH, else from the etcd image kubeadm
    lists for `kubernetes_version` (the host must be prepared: containerd, kubeadm, crictl)."""

    kind: ClassVar[str] = "etcd-restore-member"
    path: str
    sha256: str
    name: str
    peer_url: str
    kubernetes_version: str
    data_dir: str = "/var/lib/etcd"

    def __post_init__(self) -> None:
        _check_snapshot_path(self.path)
        _check_sha(self.sha256)
        _check_name("etcd member name", self.name)
        _check_url("peer URL", self.peer_url)
        _check_version(self.kubernetes_version)
        _check_path("data dir", self.data_dir)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class KubeletServer(NodeStep):
    """This node's kubelet talks to the API server at `endpoint` (address:port): the `server` of
    /etc/kubernetes/kubelet.conf rewritten and the kubelet restarted when it named another one."""

    kind: ClassVar[str] = "k8s-kubelet-server"
    endpoint: str

    def __post_init__(self) -> None:
        _check_endpoint(self.endpoint)

    def describe(self) -> str:
        return f"{self.kind} {self.endpoint}"
