"""kubeadm node steps: prepare a node (containerd, kubelet/kubeadm pinned to a version), init the
first control plane, join information, join. Secrets (bootstrap token, certificate key) are fields
with repr=False and travel to hosts as exported variables on stdin, never in argv.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_ip
from vnfm.nodesteps.kubernetes import _check_node
from vnfm.nodesteps.registry_vnf import check_no_proxy, check_proxy

_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
# kubeadm's EtcdLearnerMode feature gate: alpha (off) in 1.27, beta and on by default from 1.29.
# With it, `kubeadm join --control-plane` adds the new etcd member as a learner and promotes it once
# it is in sync with the leader; before, the member votes from the moment it is added.
ETCD_LEARNER_MODE_SINCE_MINOR = 29


def joins_etcd_as_learner(version: str) -> bool:
    """Whether kubeadm `version`'s control-plane join adds its etcd member as a learner first."""
    m = _VERSION.match(version.lstrip("v"))
    return m is not None and int(version.lstrip("v").split(".")[1]) >= ETCD_LEARNER_MODE_SINCE_MINOR
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


def _check_endpoint(value: str) -> None:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"endpoint {value!r} is not address:port")
    _check_ip("endpoint address", host.strip("[]"))


@dataclass(frozen=True)
class PrepareNode(NodeStep):
    """containerd, kubelet/kubeadm/kubectl pinned to `version`, kernel modules and sysctls,
    hostname = node name, proxy settings for containerd and apt."""

    kind: ClassVar[str] = "k8s-prepare-node"
    node: str
    version: str
    http_proxy: str | None = field(default=None, repr=False)
    https_proxy: str | None = field(default=None, repr=False)
    no_proxy: str = ""

    def __post_init__(self) -> None:
        _check_node(self.node)
        if not _VERSION.match(self.version):
            raise ValueError(f"Kubernetes version {self.version!r} is not like 1.30.4")
        # they land in containerd's systemd drop-in and apt.conf on the node, run by root
        check_proxy("http_proxy", self.http_proxy)
        check_proxy("https_proxy", self.https_proxy)
        check_no_proxy(self.no_proxy)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class KubeadmInit(NodeStep):
    """Initialise the first control plane (no-op when this host already runs one). `existing_etcd`:
    on an etcd data directory restored from a snapshot (`EtcdRestoreMember`), as kubeadm's restore
    does it: `--ignore-preflight-errors=DirAvailable--var-lib-etcd`, the CA files put there kept."""

    kind: ClassVar[str] = "k8s-kubeadm-init"
    node: str
    advertise_address: str
    control_plane_endpoint: str  # address:port (the VIP/HAProxy in HA)
    pod_cidr: str
    service_cidr: str
    version: str
    cert_sans: tuple[str, ...] = ()
    existing_etcd: bool = False

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_ip("advertise address", self.advertise_address)
        _check_endpoint(self.control_plane_endpoint)
        ipaddress.ip_network(self.pod_cidr)
        ipaddress.ip_network(self.service_cidr)
        for s in self.cert_sans:
            _check_ip("certificate SAN", s)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class JoinInfo(NodeStep):
    """On a control plane: data = token, ca_cert_hash, certificate_key (secrets), endpoint."""

    kind: ClassVar[str] = "k8s-join-info"


@dataclass(frozen=True)
class KubeadmJoin(NodeStep):
    """Join this host as worker or control plane (no-op when its kubelet is already a member)."""

    kind: ClassVar[str] = "k8s-kubeadm-join"
    node: str
    advertise_address: str
    endpoint: str
    control_plane: bool
    token: str = field(repr=False)
    ca_cert_hash: str = ""
    certificate_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_ip("advertise address", self.advertise_address)
        _check_endpoint(self.endpoint)
        if not _HASH.match(self.ca_cert_hash):
            raise ValueError("ca_cert_hash must be sha256:<64 hex>")
        if self.control_plane and not self.certificate_key:
            raise ValueError("joining a control plane needs the certificate key")

    def describe(self) -> str:
        return f"{self.kind} {'control-plane' if self.control_plane else 'worker'} {self.node}"


@dataclass(frozen=True)
class MoveControlPlaneEndpoint(NodeStep):
    """On the only control plane of a single-master cluster becoming HA: the API server certificate
    re-issued with `cert_sans` (the VIP among them), kubeadm-config's controlPlaneEndpoint and
    certSANs, the admin/super-admin/controller-manager/scheduler kubeconfigs, kube-proxy's and
    cluster-info's server moved to `endpoint` (the VIP's HAProxy port); the static pods restarted
    and the API waited for through `endpoint` (deadline `deadline_s`). No-op once done."""

    kind: ClassVar[str] = "k8s-move-control-plane-endpoint"
    endpoint: str
    cert_sans: tuple[str, ...]
    deadline_s: float = 300.0

    def __post_init__(self) -> None:
        _check_endpoint(self.endpoint)
        for s in self.cert_sans:
            _check_ip("certificate SAN", s)
        if self.endpoint.rpartition(":")[0].strip("[]") not in self.cert_sans:
            raise ValueError("the new endpoint's address must be among the certificate SANs")

    def describe(self) -> str:
        return f"{self.kind} {self.endpoint}"

