"""Typed node steps: what a management driver asks a VNFC host to do.

A step is plain, validated data; it says nothing about how it is carried out. A `StepExecutor`
carries steps out on a host: `SshStepExecutor` (vnfm.nodesteps.ssh_executor) runs idempotent
shell scripts over SSH; a simulated cloud implements the same `StepExecutor.run` on its twin
state. Every step is idempotent: running it twice leaves the host as running it once does, and
the second `StepResult.changed` is False.
"""

from __future__ import annotations

import abc
import asyncio
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from vnfm.domain.errors import OperationFailed

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")
_URL = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+(:[0-9]{1,5})?$")
_ABS_PATH = re.compile(r"^/[A-Za-z0-9_./@:+-]*$")

DEFAULT_ETCD_ENDPOINTS: tuple[str, ...] = ("http://127.0.0.1:2379",)


# ============================================================================= validation helpers
def _check_name(what: str, value: str) -> None:
    if not _NAME.match(value):
        raise ValueError(f"{what} {value!r} must be 1-63 of [A-Za-z0-9_.-], starting alphanumeric")


def _check_host(what: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOSTNAME.match(value):
            raise ValueError(f"{what} {value!r} is neither an IP address nor a host name") from None


def _check_port(what: str, value: int) -> None:
    if not isinstance(value, int) or not 0 < value < 65536:
        raise ValueError(f"{what} {value!r} is not a TCP port")


def _check_url(what: str, value: str) -> None:
    if not _URL.match(value):
        raise ValueError(f"{what} {value!r} is not an http(s)://host:port URL")


def _check_path(what: str, value: str) -> None:
    if not _ABS_PATH.match(value) or "/../" in value + "/" or "//" in value:
        raise ValueError(f"{what} {value!r} must be a plain absolute path")


def _check_client(value: str) -> None:
    if value == "*":
        return
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        _check_host("NFS client", value)


def split_host_port(value: str) -> tuple[str, int]:
    """'registry.local:5000' / '[fd00::1]:5000' -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{value!r} is not host:port")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    _check_host("host", host)
    _check_port("port", int(port))
    return host, int(port)


# ============================================================================= results / errors
@dataclass(frozen=True)
class StepResult:
    changed: bool
    data: dict[str, Any] = field(default_factory=dict)
    output: str = ""  # diagnostic output (stderr tail); never secrets


class StepFailed(OperationFailed):
    def __init__(self, host: str, step: NodeStep, reason: str) -> None:
        super().__init__(f"{step.describe()} failed on {host}: {reason}", host=host, step=step.kind)
        self.host = host
        self.step = step
        self.reason = reason


# ============================================================================= steps
@dataclass(frozen=True)
class NodeStep:
    kind: ClassVar[str] = "step"

    def describe(self) -> str:
        return self.kind


@dataclass(frozen=True)
class EtcdTls:
    """Client TLS files already present on the node (paths), e.g. kubeadm's etcd PKI."""

    cacert: str
    cert: str
    key: str

    def __post_init__(self) -> None:
        for what, p in (("cacert", self.cacert), ("cert", self.cert), ("key", self.key)):
            _check_path(f"etcd TLS {what}", p)


@dataclass(frozen=True)
class _EtcdClientStep(NodeStep):
    endpoints: tuple[str, ...] = field(default=DEFAULT_ETCD_ENDPOINTS, kw_only=True)
    tls: EtcdTls | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not self.endpoints:
            raise ValueError("at least one etcd endpoint is needed")
        for e in self.endpoints:
            _check_url("etcd endpoint", e)


@dataclass(frozen=True)
class EtcdStart(NodeStep):
    """Start an etcd member on this host (no-op when it already runs under that name).
    `initial_cluster`: (name, peer_url) of every member, this one included."""

    kind: ClassVar[str] = "etcd-start"
    name: str
    peer_url: str
    client_url: str
    initial_cluster: tuple[tuple[str, str], ...]
    state: str = "new"  # "new" when forming a cluster, "existing" when joining after EtcdMemberAdd
    token: str = "vnfm-etcd"  # noqa: S105 - the cluster token is an identifier, not a secret
    data_dir: str = "/var/lib/etcd"

    def __post_init__(self) -> None:
        _check_name("etcd member name", self.name)
        _check_name("etcd cluster token", self.token)
        _check_url("peer URL", self.peer_url)
        _check_url("client URL", self.client_url)
        _check_path("data dir", self.data_dir)
        if self.state not in ("new", "existing"):
            raise ValueError("state must be 'new' or 'existing'")
        names = [n for n, _ in self.initial_cluster]
        if self.name not in names:
            raise ValueError(f"initial_cluster must contain this member {self.name!r}")
        for n, u in self.initial_cluster:
            _check_name("etcd member name", n)
            _check_url("peer URL", u)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class EtcdStop(NodeStep):
    kind: ClassVar[str] = "etcd-stop"
    wipe_data: bool = False
    data_dir: str = "/var/lib/etcd"

    def __post_init__(self) -> None:
        _check_path("data dir", self.data_dir)


@dataclass(frozen=True)
class EtcdHealth(_EtcdClientStep):
    """data: healthy (bool), endpoints ({url: bool}). With `wait_s` > 0, waits up to that long
    for every endpoint to become healthy (a readiness loop, not a sleep)."""

    kind: ClassVar[str] = "etcd-health"
    wait_s: float = 0.0


@dataclass(frozen=True)
class EtcdMemberList(_EtcdClientStep):
    """data: members = [{id (hex), name, peer_urls, client_urls}]."""

    kind: ClassVar[str] = "etcd-member-list"


@dataclass(frozen=True)
class EtcdMemberRemove(_EtcdClientStep):
    """Remove the member called `name` and, when `peer_url` is given, the member with that peer
    URL: a member added by a join that never started has no name yet (no-op if there is none).
    etcd refuses removals until the leader has seen the members for 5 s (strict reconfig
    check): retried up to `deadline_s`."""

    kind: ClassVar[str] = "etcd-member-remove"
    name: str = ""
    peer_url: str = ""
    deadline_s: float = 30.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_name("etcd member name", self.name)
        if self.peer_url:
            _check_url("etcd peer URL", self.peer_url)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class EtcdMemberAdd(_EtcdClientStep):
    """Add member `name` with `peer_url` (no-op if a member has that peer URL already).
    data: initial_cluster = "n1=url1,n2=url2,..." to start the new member with."""

    kind: ClassVar[str] = "etcd-member-add"
    name: str = ""
    peer_url: str = ""
    deadline_s: float = 30.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_name("etcd member name", self.name)
        _check_url("peer URL", self.peer_url)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


class Backend(NamedTuple):
    name: str
    addr: str
    port: int


@dataclass(frozen=True)
class HaproxyApplyConfig(NodeStep):
    """Install a complete HAProxy configuration: validated with `haproxy -c` first (a broken one is
    refused and the running one stays), then swapped in and reloaded without dropping
    connections (master-worker mode, USR2), or HAProxy is started if it is not running."""

    kind: ClassVar[str] = "haproxy-apply-config"
    config: str
    config_path: str = "/etc/haproxy/haproxy.cfg"
    pidfile: str = "/run/haproxy.pid"
    deadline_s: float = 15.0

    def __post_init__(self) -> None:
        _check_path("config path", self.config_path)
        _check_path("pid file", self.pidfile)


@dataclass(frozen=True)
class HaproxySetBackends(NodeStep):
    """TCP load balancing of `frontend_port` over `backends` (e.g. the Kubernetes API servers)."""

    kind: ClassVar[str] = "haproxy-set-backends"
    backends: tuple[Backend, ...]
    frontend_port: int = 6443
    bind_addr: str = "*"
    check_interval_ms: int = 2000
    config_path: str = "/etc/haproxy/haproxy.cfg"
    pidfile: str = "/run/haproxy.pid"

    def __post_init__(self) -> None:
        object.__setattr__(self, "backends", tuple(Backend(*b) for b in self.backends))
        _check_port("frontend port", self.frontend_port)
        if self.bind_addr != "*":
            _check_host("bind address", self.bind_addr)
        seen = set()
        for b in self.backends:
            _check_name("backend name", b.name)
            _check_host("backend address", b.addr)
            _check_port("backend port", b.port)
            if b.name in seen:
                raise ValueError(f"duplicate backend name {b.name!r}")
            seen.add(b.name)
        if not 100 <= self.check_interval_ms <= 600_000:
            raise ValueError("check_interval_ms must be within 100..600000")

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(b.name for b in self.backends)}]"


@dataclass(frozen=True)
class SetHostsEntries(NodeStep):
    """Own a marked block of /etc/hosts: exactly `entries` (address, names...), nothing else
    of the file is touched. An empty tuple removes the block."""

    kind: ClassVar[str] = "set-hosts-entries"
    entries: tuple[tuple[str, tuple[str, ...]], ...]
    block: str = "vnfm"
    hosts_file: str = "/etc/hosts"

    def __post_init__(self) -> None:
        _check_name("block name", self.block)
        _check_path("hosts file", self.hosts_file)
        norm = []
        for addr, names in self.entries:
            ipaddress.ip_address(addr)
            names_t = (names,) if isinstance(names, str) else tuple(names)
            if not names_t:
                raise ValueError(f"no names for {addr}")
            for n in names_t:
                _check_host("host name", n)
            norm.append((addr, names_t))
        object.__setattr__(self, "entries", tuple(norm))


@dataclass(frozen=True)
class NfsExport(NodeStep):
    """Serve `path` over NFSv4 with nfs-ganesha (userspace, FSAL VFS) to `clients` (addresses,
    CIDRs or "*"). The path must live on a file system with file handles (ext4, xfs, tmpfs)."""

    kind: ClassVar[str] = "nfs-export"
    path: str
    clients: tuple[str, ...]
    export_id: int = 1
    pseudo: str | None = None  # NFSv4 pseudo path; defaults to `path`
    bind_addr: str | None = None
    port: int = 2049
    root_squash: bool = False
    config_path: str = "/etc/ganesha/ganesha.conf"
    pidfile: str = "/run/ganesha.pid"
    deadline_s: float = 20.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "clients", tuple(self.clients))
        _check_path("export path", self.path)
        _check_path("pseudo path", self.pseudo_path)
        _check_path("config path", self.config_path)
        _check_path("pid file", self.pidfile)
        _check_port("NFS port", self.port)
        if self.bind_addr is not None:
            ipaddress.ip_address(self.bind_addr)
        if not self.clients:
            raise ValueError("at least one NFS client (address, CIDR or '*') is needed")
        for c in self.clients:
            _check_client(c)
        if not 0 < self.export_id < 65535:
            raise ValueError("export_id must be within 1..65534")

    @property
    def pseudo_path(self) -> str:
        return self.pseudo or self.path

    def describe(self) -> str:
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class RegistryServe(NodeStep):
    """Run a Docker registry (distribution) on this host; HTTPS when a certificate is given.
    The private key is a secret: it reaches the host on stdin and is stored 0600."""

    kind: ClassVar[str] = "registry-serve"
    port: int = 5000
    storage_dir: str = "/var/lib/docker-registry"
    tls_cert_pem: str | None = None
    tls_key_pem: str | None = field(default=None, repr=False)
    config_dir: str = "/etc/docker/registry"
    pidfile: str = "/run/vnfm-registry.pid"
    deadline_s: float = 20.0

    def __post_init__(self) -> None:
        _check_port("registry port", self.port)
        for what, p in (("storage dir", self.storage_dir), ("config dir", self.config_dir),
                        ("pid file", self.pidfile)):
            _check_path(what, p)
        if (self.tls_cert_pem is None) != (self.tls_key_pem is None):
            raise ValueError("tls_cert_pem and tls_key_pem go together")

    @property
    def tls(self) -> bool:
        return self.tls_cert_pem is not None


@dataclass(frozen=True)
class RegistryClientConfig(NodeStep):
    """Make a cluster node trust and reach a private registry `registry` ("host:port"):
    containerd hosts.toml (+ ca.crt) under certs_dir, the CA for containers-image tools
    (podman/skopeo/cri-o) under containers_certs_dir, registries.conf.d for a plain-HTTP registry,
    and an optional /etc/hosts entry (address, name). containerd reads certs.d at every pull when
    its CRI `registry.config_path` points at `certs_dir` (kubeadm's driver sets that)."""

    kind: ClassVar[str] = "registry-client-config"
    registry: str
    ca_pem: str | None = None
    hosts_entry: tuple[str, str] | None = None
    plain_http: bool = False
    certs_dir: str = "/etc/containerd/certs.d"
    containers_certs_dir: str = "/etc/containers/certs.d"
    registries_conf_dir: str = "/etc/containers/registries.conf.d"

    def __post_init__(self) -> None:
        split_host_port(self.registry)
        for what, p in (("certs dir", self.certs_dir), ("containers certs dir", self.containers_certs_dir),
                        ("registries.conf.d", self.registries_conf_dir)):
            _check_path(what, p)
        if self.hosts_entry is not None:
            addr, name = self.hosts_entry
            ipaddress.ip_address(addr)
            _check_host("registry host name", name)
        if self.plain_http and self.ca_pem:
            raise ValueError("a plain-HTTP registry has no CA")
        if self.ca_pem is not None and "BEGIN CERTIFICATE" not in self.ca_pem:
            raise ValueError("ca_pem is not a PEM certificate")

    @property
    def registry_host(self) -> str:
        return split_host_port(self.registry)[0]

    def describe(self) -> str:
        return f"{self.kind} {self.registry}"


# ============================================================================= executors
class StepExecutor(abc.ABC):
    """Carries node steps out on hosts. `host` is whatever the executor resolves to a machine
    (an address for SSH, a VNFC name for a simulated twin)."""

    @abc.abstractmethod
    async def run(self, host: str, step: NodeStep) -> StepResult:
        """Run one step; raise StepFailed (naming host and step) when it cannot be done."""

    async def run_many(self, hosts: Iterable[str], step: NodeStep) -> dict[str, StepResult]:
        """The same step on several hosts in parallel; raises the first failure after all ran."""
        hosts = list(hosts)
        results = await asyncio.gather(*(self.run(h, step) for h in hosts), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return {h: r for h, r in zip(hosts, results, strict=True) if isinstance(r, StepResult)}

    async def run_all(self, host: str, steps: Sequence[NodeStep]) -> list[StepResult]:
        """Steps in order on one host."""
        return [await self.run(host, s) for s in steps]

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        """Contact every host now: a first contact pins its host key, a later one must present the
        pinned key. Raises before anything was changed anywhere when a key changed."""
        return None

    async def close(self) -> None:
        """Release connections (the session is not used afterwards)."""
        return None

    def note(self, key: str, value: Any) -> None:
        """A fact about the VNF worth showing to observers (e.g. the registered VIM, with no
        secret); executors that keep a state view record it, the others ignore it."""
        return None
