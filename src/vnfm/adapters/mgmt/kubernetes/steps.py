"""Kubernetes node steps (kubeadm based), in the style of vnfm.nodesteps: plain validated data.

Cluster-wide steps (wait for Ready, drain, delete, label, VIM token, join info) run on a control
plane host with the admin kubeconfig. Secrets (bootstrap token, certificate key) are fields with
repr=False and travel to hosts as exported variables on stdin, never in argv.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field, fields
from typing import ClassVar

from vnfm.nodesteps.steps import NfsExport, NodeStep, RegistryClientConfig

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


# ============================================================================= private registries (seed 003)
_REGISTRY = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$")


@dataclass(frozen=True)
class NodeRegistryConfig(RegistryClientConfig):
    """RegistryClientConfig for a registry named as its images reference it: "host:port" or just
    "host" (the seeds' "registry.example.com", HTTPS on 443), so containerd's certs.d/<name>
    matches the image references."""

    kind: ClassVar[str] = "registry-client-config"

    def __post_init__(self) -> None:
        if not _REGISTRY.match(self.registry):
            raise ValueError(f"registry {self.registry!r} is not host[:port]")
        probe = self.registry if re.search(r":[0-9]+$", self.registry) else f"{self.registry}:443"
        RegistryClientConfig(**{**{f.name: getattr(self, f.name) for f in fields(RegistryClientConfig)},
                                "registry": probe})  # the base step's validation

    @property
    def registry_host(self) -> str:
        h = self.registry.rsplit(":", 1)[0] if re.search(r":[0-9]+$", self.registry) else self.registry
        return h[1:-1] if h.startswith("[") else h


@dataclass(frozen=True)
class RegistryAuthEntry:
    server: str
    username: str = field(repr=False)
    password: str = field(repr=False)


@dataclass(frozen=True)
class ContainerdRegistries(NodeStep):
    """containerd's CRI reads per-registry hosts.toml from `config_path` (set when the node's
    config lacks it) and the credentials of `auth` (a marked block of config.toml, which is then
    0600; an empty tuple removes the block). containerd is restarted only when something changed."""

    kind: ClassVar[str] = "containerd-registries"
    auth: tuple[RegistryAuthEntry, ...] = ()
    config_path: str = "/etc/containerd/certs.d"
    config_file: str = "/etc/containerd/config.toml"

    def __post_init__(self) -> None:
        for a in self.auth:
            if not _REGISTRY.match(a.server):
                raise ValueError(f"registry {a.server!r} is not host[:port]")
            if not a.username or not a.password:
                raise ValueError(f"registry {a.server}: username and password are both needed")
            if any(c in a.username + a.password for c in "\n\r"):
                raise ValueError(f"registry {a.server}: credentials must be single lines")
        for p in (self.config_path, self.config_file):
            if not re.match(r"^/[A-Za-z0-9_./-]+$", p):
                raise ValueError(f"{p!r} is not a plain absolute path")

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(a.server for a in self.auth)}]"

    def auth_block(self, plugin: str) -> str:
        """The TOML for `plugin` (CRI plugin id), credentials as TOML basic strings."""
        lines = []
        for a in self.auth:
            lines += [f"[plugins.{json.dumps(plugin)}.registry.configs.{json.dumps(a.server)}.auth]",
                      f"  username = {json.dumps(a.username)}", f"  password = {json.dumps(a.password)}"]
        return "\n".join(lines)


# ============================================================================= storage server (seed 001)
@dataclass(frozen=True)
class PrepareVolume(NodeStep):
    """Make the block device of volume `volume_id` (or `device`) an ext4 file system (only when it
    has none), mounted at `mount_to` with a persistent /etc/fstab entry (by UUID, nofail)."""

    kind: ClassVar[str] = "storage-prepare-volume"
    volume_id: str
    mount_to: str
    device: str | None = None
    fs_type: str = "ext4"
    fstab: str = "/etc/fstab"

    def __post_init__(self) -> None:
        if not re.match(r"^[A-Za-z0-9-]{1,64}$", self.volume_id):
            raise ValueError(f"volume id {self.volume_id!r} is not a VIM volume id")
        for p in (self.mount_to, self.fstab, *([self.device] if self.device else [])):
            if not re.match(r"^/[A-Za-z0-9_./@:+-]*$", p) or "/../" in p + "/" or "//" in p:
                raise ValueError(f"{p!r} is not a plain absolute path")
        if self.fs_type not in ("ext4", "xfs"):
            raise ValueError("fs_type must be ext4 or xfs")

    def describe(self) -> str:
        return f"{self.kind} {self.volume_id} -> {self.mount_to}"


@dataclass(frozen=True)
class NfsExports(NodeStep):
    """Several NfsExport at once: one nfs-ganesha configuration with an EXPORT per item (the
    NfsExport step owns the whole configuration, so exports must be installed together)."""

    kind: ClassVar[str] = "nfs-exports"
    exports: tuple[NfsExport, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "exports", tuple(self.exports))
        if not self.exports:
            raise ValueError("at least one export is needed")
        first = self.exports[0]
        ids, pseudos = set(), set()
        for e in self.exports:
            if (e.port, e.bind_addr, e.config_path, e.pidfile) != (first.port, first.bind_addr, first.config_path,
                                                                   first.pidfile):
                raise ValueError("all exports must share port, bind address, config and pid file")
            if e.export_id in ids or e.pseudo_path in pseudos:
                raise ValueError(f"duplicate export id or pseudo path ({e.export_id}, {e.pseudo_path})")
            ids.add(e.export_id)
            pseudos.add(e.pseudo_path)

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(e.path for e in self.exports)}]"


@dataclass(frozen=True)
class InstallNfsClient(NodeStep):
    """The NFS client (nfs-common, mount.nfs) a kubelet needs to mount NFS PersistentVolumes."""

    kind: ClassVar[str] = "nfs-client"


@dataclass(frozen=True)
class ApplyPersistentVolume(NodeStep):
    """On a control plane: create or update PersistentVolume `name` (an NFS PV). The NFS source of
    a PV is immutable: when it changed, an unbound PV is replaced, a bound one fails the step."""

    kind: ClassVar[str] = "k8s-apply-pv"
    name: str
    manifest: str  # YAML
    nfs_server: str
    nfs_path: str

    def __post_init__(self) -> None:
        _check_node(self.name)
        _check_ip("NFS server", self.nfs_server)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class DeletePersistentVolumes(NodeStep):
    """On a control plane: delete the named PVs, all or none: when one is Bound (in use by a
    claim) nothing is deleted and the step fails naming the PVs and their claims."""

    kind: ClassVar[str] = "k8s-delete-pvs"
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        for n in self.names:
            _check_node(n)

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(self.names)}]"
