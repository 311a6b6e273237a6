"""Load balancing on a host: HAProxy configuration and backends, keepalived holding a VIP, and the
frontends an external load balancer VM serves for several owners (a cluster's API, each CNF's
NodePorts), each owner's part kept apart so that changing one never touches another's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from vnfm.nodesteps.base import NodeStep, _check_host, _check_ip, _check_name, _check_path, _check_port


class Backend(NamedTuple):
    name: str
    addr: str
    port: int


def _check_backends(backends: tuple[Backend, ...]) -> None:
    """Names, addresses and ports of one HAProxy backend's servers (a name once: HAProxy refuses
    a server name twice in a backend)."""
    seen = set()
    for b in backends:
        _check_name("backend name", b.name)
        _check_host("backend address", b.addr)
        _check_port("backend port", b.port)
        if b.name in seen:
            raise ValueError(f"duplicate backend name {b.name!r}")
        seen.add(b.name)


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
        _check_backends(self.backends)
        if not 100 <= self.check_interval_ms <= 600_000:
            raise ValueError("check_interval_ms must be within 100..600000")

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(b.name for b in self.backends)}]"


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


class PoolRef(NamedTuple):
    """A server pool of an owner of the load balancer (see ServerPool), by owner and name."""

    owner: str
    name: str


@dataclass(frozen=True)
class Frontend:
    """One TCP frontend: `port` on every address of the load balancer, round-robin over `backends`,
    or over the servers of `pool` (another owner's, e.g. the cluster's NodePort pool, which that
    owner keeps current) at the port the client connected to."""

    name: str
    port: int
    backends: tuple[Backend, ...]
    pool: PoolRef | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "backends", tuple(Backend(*b) for b in self.backends))
        _check_name("frontend name", self.name)
        _check_port("frontend port", self.port)
        _check_backends(self.backends)
        if self.pool is not None:
            object.__setattr__(self, "pool", PoolRef(*self.pool))
            _check_name("pool owner", self.pool.owner)
            _check_name("pool name", self.pool.name)
            if self.backends:
                raise ValueError(f"frontend {self.name}: backends or a pool, not both")


@dataclass(frozen=True)
class ServerPool:
    """A named set of servers with no port of its own (an HAProxy backend whose servers take the
    port the client connected to): e.g. every node of a cluster, for its NodePorts. Its HAProxy
    name is `vnfm_<owner>_pool_<name>`, so other owners' frontends may route to it."""

    name: str
    servers: tuple[tuple[str, str], ...]  # (server name, address)

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", tuple(tuple(s) for s in self.servers))
        _check_name("pool name", self.name)
        names = [n for n, _ in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"pool {self.name}: a server name is listed twice")
        for n, addr in self.servers:
            _check_name("server name", n)
            _check_host("server address", addr)


@dataclass(frozen=True)
class LbFrontends(NodeStep):
    """Own one part of a load balancer's HAProxy configuration: exactly `frontends`, under `owner`
    (e.g. "cluster" for a Kubespray cluster's API and NodePort backends, "cnf-<instance id>" for a
    CNF's NodePorts). The parts of other owners stay byte-identical. The whole configuration is
    checked (`haproxy -c`) before it is activated with a hitless reload; a broken one is never
    activated. No frontends: the owner's part is removed. A port may belong to one owner only.
    `pools`: the owner's server pools (see ServerPool); a frontend may route to a pool of any owner,
    which must exist (`haproxy -c` refuses a configuration naming a missing one, so an owner's pool
    cannot go while another owner's frontend routes to it). data: ports = the ports now served for
    this owner."""

    kind: ClassVar[str] = "lb-frontends"
    owner: str
    frontends: tuple[Frontend, ...]
    conf_dir: str = "/etc/haproxy/vnfm.d"
    pidfile: str = "/run/haproxy.pid"
    deadline_s: float = 15.0
    pools: tuple[ServerPool, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "frontends", tuple(self.frontends))
        object.__setattr__(self, "pools", tuple(self.pools))
        _check_name("load balancer owner", self.owner)
        pool_names = [p.name for p in self.pools]
        if len(set(pool_names)) != len(pool_names):
            raise ValueError(f"owner {self.owner}: a pool name is listed twice")
        _check_path("config dir", self.conf_dir)
        _check_path("pid file", self.pidfile)
        ports = [f.port for f in self.frontends]
        if len(set(ports)) != len(ports):
            raise ValueError(f"owner {self.owner}: a port is listed twice")
        names = [f.name for f in self.frontends]
        if len(set(names)) != len(names):
            raise ValueError(f"owner {self.owner}: a frontend name is listed twice")

    def describe(self) -> str:
        return f"{self.kind} {self.owner} [{', '.join(str(f.port) for f in self.frontends)}]"
