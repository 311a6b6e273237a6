"""etcd membership steps: start/stop a member, health, list/add/remove members.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_name, _check_path, _check_url

DEFAULT_ETCD_ENDPOINTS: tuple[str, ...] = ("http://127.0.0.1:2379",)


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
    """Add member `name` with `peer_url` (no-op if a member has that peer URL already); with
    `learner`, as a learner (no vote until promoted; etcd allows one learner at a time).
    data: initial_cluster = "n1=url1,n2=url2,..." to start the new member with."""

    kind: ClassVar[str] = "etcd-member-add"
    name: str = ""
    peer_url: str = ""
    deadline_s: float = 30.0
    learner: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_name("etcd member name", self.name)
        _check_url("peer URL", self.peer_url)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class EtcdMemberPromote(_EtcdClientStep):
    """Promote learner `name` to a voting member once it is in sync with the leader: etcd refuses
    ("can only promote a learner member which is in sync with leader") until then, so the promotion
    is retried up to `deadline_s`. No-op when `name` already votes; fails when there is no member
    of that name. data: id (hex) of the member."""

    kind: ClassVar[str] = "etcd-member-promote"
    name: str = ""
    deadline_s: float = 60.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_name("etcd member name", self.name)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"
