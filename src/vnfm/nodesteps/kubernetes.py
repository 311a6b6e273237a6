"""Kubernetes cluster steps that any cluster driver uses (kubeadm, Kubespray): wait for a node,
drain, uncordon, delete, label, the VIM's ServiceAccount token, NFS PersistentVolumes. They run on a host with
an admin kubeconfig (a control plane, or the external load balancer of a Kubespray cluster).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_ip

_NODE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_LABEL_KEY = re.compile(r"^([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_LABEL_VAL = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")


def node_name(vnfc_name: str) -> str:
    """A Kubernetes node name (RFC 1123 label) for a VNFC name, e.g. masterNode-0 -> masternode-0."""
    n = re.sub(r"[^a-z0-9-]+", "-", vnfc_name.lower()).strip("-")[:63].strip("-")
    return n or "node"


def _check_node(name: str) -> None:
    if not _NODE.match(name):
        raise ValueError(f"node name {name!r} is not an RFC 1123 label")


@dataclass(frozen=True)
class _OnNode(NodeStep):
    """A step about one Kubernetes node, run where an admin kubeconfig is."""

    node: str

    def __post_init__(self) -> None:
        _check_node(self.node)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class WaitNodeReady(_OnNode):
    kind: ClassVar[str] = "k8s-wait-node-ready"
    deadline_s: float = 600.0


@dataclass(frozen=True)
class DrainNode(_OnNode):
    """Cordon, then evict through the eviction API (PDBs respected; DaemonSet and mirror pods
    skipped; emptyDir allowed) until `deadline_s`. A missing node is a no-op. On timeout the
    failure names the blocking pods."""

    kind: ClassVar[str] = "k8s-drain-node"
    deadline_s: float = 300.0


@dataclass(frozen=True)
class UncordonNode(_OnNode):
    """Mark the node schedulable again (undoes the cordon of a drain that a rollback abandons).
    A schedulable node is a no-op; a missing one fails (it was removed: nothing to put back)."""

    kind: ClassVar[str] = "k8s-uncordon-node"


@dataclass(frozen=True)
class DeleteNode(_OnNode):
    kind: ClassVar[str] = "k8s-delete-node"


@dataclass(frozen=True)
class LabelNode(_OnNode):
    kind: ClassVar[str] = "k8s-label-node"
    labels: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        for k, v in self.labels:
            if not _LABEL_KEY.match(k) or not _LABEL_VAL.match(v):
                raise ValueError(f"label {k}={v} is not a valid Kubernetes label")


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
