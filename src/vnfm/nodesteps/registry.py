"""Container registries: serving a Docker registry on a host, and a node's connection to private registries.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field, fields
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_host, _check_path, _check_port, split_host_port


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
