"""Kubernetes node steps (kubeadm based), in the style of vnfm.nodesteps: plain validated data.

Cluster-wide steps (wait for Ready, drain, delete, label, VIM token, join info) run on a control
plane host with the admin kubeconfig. Secrets (bootstrap token, certificate key) are fields with
repr=False and travel to hosts as exported variables on stdin, never in argv.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.steps import NodeStep

_NODE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_LABEL_KEY = re.compile(r"^([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_LABEL_VAL = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


def node_name(vnfc_name: str) -> str:
    """A Kubernetes node name (RFC 1123 label) for a VNFC name, e.g. masterNode-0 -> masternode-0."""
    n = re.sub(r"[^a-z0-9-]+", "-", vnfc_name.lower()).strip("-")[:63].strip("-")
    return n or "node"


def _check_node(name: str) -> None:
    if not _NODE.match(name):
        raise ValueError(f"node name {name!r} is not an RFC 1123 label")


def _check_ip(what: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{what} {value!r} is not an IP address") from None


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

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class KubeadmInit(NodeStep):
    """Initialise the first control plane (no-op when this host already runs one)."""

    kind: ClassVar[str] = "k8s-kubeadm-init"
    node: str
    advertise_address: str
    control_plane_endpoint: str  # address:port (the VIP/HAProxy in HA)
    pod_cidr: str
    service_cidr: str
    version: str
    cert_sans: tuple[str, ...] = ()

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
class WaitNodeReady(NodeStep):
    kind: ClassVar[str] = "k8s-wait-node-ready"
    node: str
    deadline_s: float = 600.0

    def __post_init__(self) -> None:
        _check_node(self.node)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class DrainNode(NodeStep):
    """Cordon, then evict through the eviction API (PDBs respected; DaemonSet and mirror pods
    skipped; emptyDir allowed) until `deadline_s`. A missing node is a no-op. On timeout the
    failure names the blocking pods."""

    kind: ClassVar[str] = "k8s-drain-node"
    node: str
    deadline_s: float = 300.0

    def __post_init__(self) -> None:
        _check_node(self.node)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class DeleteNode(NodeStep):
    kind: ClassVar[str] = "k8s-delete-node"
    node: str

    def __post_init__(self) -> None:
        _check_node(self.node)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class LabelNode(NodeStep):
    kind: ClassVar[str] = "k8s-label-node"
    node: str
    labels: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        _check_node(self.node)
        for k, v in self.labels:
            if not _LABEL_KEY.match(k) or not _LABEL_VAL.match(v):
                raise ValueError(f"label {k}={v} is not a valid Kubernetes label")

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class KeepalivedVip(NodeStep):
    """keepalived VRRP instance holding `vip` on the interface that has `local_address`, tracking
    the local HAProxy; `peers` are the other masters (unicast)."""

    kind: ClassVar[str] = "k8s-keepalived-vip"
    vip: str
    local_address: str
    priority: int
    peers: tuple[str, ...] = ()
    router_id: int = 51

    def __post_init__(self) -> None:
        _check_ip("VIP", self.vip)
        _check_ip("local address", self.local_address)
        for p in self.peers:
            _check_ip("peer", p)
        if not 1 <= self.priority <= 254:
            raise ValueError("priority must be within 1..254")
        if not 1 <= self.router_id <= 255:
            raise ValueError("router_id must be within 1..255")


@dataclass(frozen=True)
class VimToken(NodeStep):
    """A dedicated ServiceAccount (cluster-admin binding) and a long-lived token Secret for it.
    data: token (secret), ca_pem."""

    kind: ClassVar[str] = "k8s-vim-token"
    service_account: str = "vnfm-vim"
    namespace: str = "kube-system"

    def __post_init__(self) -> None:
        _check_node(self.service_account)
        _check_node(self.namespace)
