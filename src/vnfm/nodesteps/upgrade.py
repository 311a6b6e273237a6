"""Upgrade steps of a kubeadm cluster, and their undo: etcd snapshot save / fetch / put / restore,
the Kubernetes packages at a version (up or down), `kubeadm upgrade apply` (first control plane),
`kubeadm upgrade node` (the others), putting back the control plane's manifests kubeadm backed up,
and the Ready-and-at-version check. Drain and uncordon are `nodesteps.kubernetes`' (PDB-aware).

Every step checks before it acts: a node already at the version, a snapshot already saved with
that digest, a restore already done from that snapshot are no-ops (`changed` False).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_name, _check_path, _check_url
from vnfm.nodesteps.etcd import _EtcdClientStep
from vnfm.nodesteps.kubernetes import _check_node

_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_RESTORE_ID = re.compile(r"^[A-Za-z0-9._-]{0,40}$")
PACKAGES = ("kubeadm", "kubelet", "kubectl")
SNAPSHOT_DIR = "/var/lib/vnfm/etcd-snapshots"
MAX_SNAPSHOT_BYTES = 2 * 1024**3  # etcd's own default backend quota is 2 GiB


def _check_version(value: str) -> None:
    if not _VERSION.match(value):
        raise ValueError(f"Kubernetes version {value!r} is not like 1.30.4")


def _check_snapshot_path(value: str) -> None:
    _check_path("snapshot path", value)
    if not value.startswith(SNAPSHOT_DIR + "/") or not value.endswith(".db"):
        raise ValueError(f"snapshot path {value!r} must be a .db file under {SNAPSHOT_DIR}")


def _check_sha(value: str) -> None:
    if not _SHA256.match(value):
        raise ValueError("sha256 must be 64 lowercase hex digits")


@dataclass(frozen=True)
class EtcdSnapshotSave(_EtcdClientStep):
    """`etcdctl snapshot save` to `path` on this control plane, then `etcdutl snapshot status`
    (a snapshot that does not read back fails). Keeps at most `keep` snapshots in the directory
    (the oldest others removed). data: sha256, size, revision, keys. An existing valid file at
    `path` is kept (no-op): its digest is reported."""

    kind: ClassVar[str] = "etcd-snapshot-save"
    path: str = ""
    keep: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_snapshot_path(self.path)
        if not 1 <= self.keep <= 20:
            raise ValueError("keep must be 1..20 snapshots")

    def describe(self) -> str:
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class EtcdSnapshotFetch(NodeStep):
    """Read the snapshot at `path` back (to keep a copy off the cluster). data: content (base64),
    sha256. Fails when it is larger than `max_bytes` or its digest is not `sha256`."""

    kind: ClassVar[str] = "etcd-snapshot-fetch"
    path: str
    sha256: str
    max_bytes: int = MAX_SNAPSHOT_BYTES

    def __post_init__(self) -> None:
        _check_snapshot_path(self.path)
        _check_sha(self.sha256)
        if not 0 < self.max_bytes <= MAX_SNAPSHOT_BYTES:
            raise ValueError(f"max_bytes must be 1..{MAX_SNAPSHOT_BYTES}")


@dataclass(frozen=True)
class EtcdSnapshotPut(NodeStep):
    """Write a snapshot (base64 `content` whose digest is `sha256`) to `path`; no-op when the file
    there has that digest already."""

    kind: ClassVar[str] = "etcd-snapshot-put"
    path: str
    sha256: str
    content: str = field(repr=False)

    def __post_init__(self) -> None:
        _check_snapshot_path(self.path)
        _check_sha(self.sha256)
        try:
            raw = base64.b64decode(self.content, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("content is not base64") from None
        if hashlib.sha256(raw).hexdigest() != self.sha256:
            raise ValueError("content does not match its sha256")


@dataclass(frozen=True)
class EtcdSnapshotRestore(NodeStep):
    """Restore this control plane's etcd member from the snapshot at `path` (digest `sha256`):
    stop the etcd static pod, `etcdutl snapshot restore` as member `name` of `initial_cluster`
    into a fresh directory, swap it for `data_dir`, start etcd again. Every member of the cluster
    restores from the same snapshot. No-op when this member was restored from that digest (and
    `restore_id`) and runs: a restore with another `restore_id` runs again (a rollback after the
    change was retried: etcd changed since the last restore from that snapshot)."""

    kind: ClassVar[str] = "etcd-snapshot-restore"
    path: str
    sha256: str
    name: str
    peer_url: str
    initial_cluster: tuple[tuple[str, str], ...]
    data_dir: str = "/var/lib/etcd"
    restore_id: str = ""

    def __post_init__(self) -> None:
        _check_snapshot_path(self.path)
        _check_sha(self.sha256)
        _check_name("etcd member name", self.name)
        if not _RESTORE_ID.match(self.restore_id):
            raise ValueError("restore_id must be up to 40 letters, digits, '.', '_' or '-'")
        _check_url("peer URL", self.peer_url)
        _check_path("data dir", self.data_dir)
        if (self.name, self.peer_url) not in self.initial_cluster:
            raise ValueError(f"initial_cluster must contain this member {self.name!r}")
        for n, u in self.initial_cluster:
            _check_name("etcd member name", n)
            _check_url("peer URL", u)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"

    @property
    def marker(self) -> str:
        """What a done restore is recorded as on the host."""
        return f"{self.sha256}:{self.restore_id}" if self.restore_id else self.sha256


@dataclass(frozen=True)
class K8sPackages(NodeStep):
    """The node's `packages` (of kubeadm, kubelet, kubectl) at exactly `version` (upgraded or
    downgraded, held); kubelet restarted when it changed."""

    kind: ClassVar[str] = "k8s-packages"
    version: str
    packages: tuple[str, ...] = PACKAGES

    def __post_init__(self) -> None:
        _check_version(self.version)
        if not self.packages or len(set(self.packages)) != len(self.packages) \
                or any(p not in PACKAGES for p in self.packages):
            raise ValueError(f"packages must be distinct names of {', '.join(PACKAGES)}")

    def describe(self) -> str:
        return f"{self.kind} {'+'.join(self.packages)}={self.version}"


@dataclass(frozen=True)
class KubeadmUpgradeApply(NodeStep):
    """`kubeadm upgrade apply` on the first control plane (kubeadm at `version` already): its
    static pods, the cluster's configuration and add-ons move to `version`. No-op when this
    control plane runs `version`."""

    kind: ClassVar[str] = "k8s-kubeadm-upgrade-apply"
    node: str
    version: str

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_version(self.version)

    def describe(self) -> str:
        return f"{self.kind} {self.node} v{self.version}"


@dataclass(frozen=True)
class KubeadmUpgradeNode(NodeStep):
    """`kubeadm upgrade node` (the other control planes: their static pods; workers: the kubelet
    configuration), kubeadm at `version` already. No-op when done at that version."""

    kind: ClassVar[str] = "k8s-kubeadm-upgrade-node"
    node: str
    version: str
    control_plane: bool

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_version(self.version)

    def describe(self) -> str:
        return f"{self.kind} {'control-plane' if self.control_plane else 'worker'} {self.node} v{self.version}"


@dataclass(frozen=True)
class KubeadmRevertControlPlane(NodeStep):
    """Undo an upgrade of this control plane: the static-pod manifests kubeadm backed up before
    upgrading (those of `version`) are put back. No-op when it runs `version`."""

    kind: ClassVar[str] = "k8s-kubeadm-revert-control-plane"
    node: str
    version: str

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_version(self.version)

    def describe(self) -> str:
        return f"{self.kind} {self.node} v{self.version}"


@dataclass(frozen=True)
class NodeAtVersion(NodeStep):
    """On a host with an admin kubeconfig: wait (up to `deadline_s`) until node `node` is Ready
    and its kubelet reports `version`; fails naming what it saw."""

    kind: ClassVar[str] = "k8s-node-at-version"
    node: str
    version: str
    deadline_s: float = 600.0

    def __post_init__(self) -> None:
        _check_node(self.node)
        _check_version(self.version)
        if not 0 < self.deadline_s <= 7200:
            raise ValueError("deadline_s must be in (0, 7200]")

    def describe(self) -> str:
        return f"{self.kind} {self.node} v{self.version}"
