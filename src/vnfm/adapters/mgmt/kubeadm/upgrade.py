"""change_vnfpkg of a kubeadm cluster: a Kubernetes upgrade (one minor version), and its undo.

Phases (the engine runs each as a stage, `ctx.phase`):
- snapshot: an etcd snapshot on the first master, read back, copied off to the VNFM's store.
- control_plane: one master at a time: kubeadm at the new version, `kubeadm upgrade apply` (first)
  or `upgrade node` (others), drain, kubelet + kubectl, Ready at the version, uncordon.
- workers: one at a time: kubeadm, `upgrade node`, drain (PDB-aware), kubelet + kubectl, Ready at
  the version, uncordon.
Rollback (`ctx.rollback`): every node's packages back to the old version, the control planes'
manifests back, etcd restored from the snapshot on every master when the control plane had moved
(`ctx.phase` names the furthest phase that started), nodes Ready at the old version, uncordoned.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cluster.etcd import ETCD_ENDPOINTS, ETCD_TLS
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.domain import k8s_versions
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import VnfInstance
from vnfm.nodesteps.etcd import EtcdTls
from vnfm.nodesteps.kubernetes import DrainNode, UncordonNode
from vnfm.nodesteps.upgrade import (
    SNAPSHOT_DIR,
    EtcdSnapshotFetch,
    EtcdSnapshotPut,
    EtcdSnapshotRestore,
    EtcdSnapshotSave,
    K8sPackages,
    KubeadmRevertControlPlane,
    KubeadmUpgradeApply,
    KubeadmUpgradeNode,
    NodeAtVersion,
)

PHASES = ("snapshot", "control_plane", "workers")
# the keys of the cluster parameters a change_vnfpkg acts on (any other is refused)
CHANGE_KEYS = frozenset({"kubernetes_version", "node_ready_timeout", "drain_timeout"})


def check_added_version(path: str, instance: VnfInstance, version: str, op: str) -> None:
    """A scale or heal brings nodes at `version` into a cluster whose control plane runs the
    instance's version: the skew policy first, then kubeadm's own rule (join from the same minor)."""
    running = P.parse(instance.additional_params).kubernetes_version
    k8s_versions.check_node_version(path, running, version)
    if k8s_versions.K8sVersion.parse(version).minor != k8s_versions.K8sVersion.parse(running).minor:
        raise UnprocessableEntity(f"{path}: the cluster runs Kubernetes {running} (fixed by its control plane); "
                                  f"kubeadm cannot join a {op.lower()}'s {version} nodes to it (kubeadm joins "
                                  "nodes of the control plane's minor version; leave the key out, or give the "
                                  "cluster's version)")


def check_change(path: str, instance: VnfInstance, extra: dict[str, Any]) -> str:
    """The request's cluster keys of a change_vnfpkg: only those it acts on, a version one minor
    up. Returns the target version."""
    given = extra.get(P.KEY)
    if not isinstance(given, dict) or "kubernetes_version" not in given:
        raise UnprocessableEntity(f"{path}.kubernetes_version: a change_vnfpkg of a kubeadm cluster upgrades "
                                  "Kubernetes: give the new version (one minor version up)")
    for key in given:
        if key not in CHANGE_KEYS:
            raise UnprocessableEntity(f"{path}.{key}: a change_vnfpkg does not act on it (it takes "
                                      f"{', '.join(sorted(CHANGE_KEYS))})")
    running = P.parse(instance.additional_params).kubernetes_version
    target = str(given["kubernetes_version"])
    k8s_versions.check_upgrade(f"{path}.kubernetes_version", running, target)
    return target


def _state(c: Cluster) -> dict[str, Any]:
    up: dict[str, Any] = c.ctx.state.setdefault("upgrade", {})
    if up.get("op_id") != c.ctx.op_id:
        up.clear()
        up.update(op_id=c.ctx.op_id, old=P.parse(c.ctx.instance.additional_params).kubernetes_version,
                  new=c.p.kubernetes_version)
    return up


async def take_snapshot(c: Cluster, up: dict[str, Any], tls: EtcdTls = ETCD_TLS) -> None:
    """An etcd snapshot on the first master (`tls`: its etcd client certificate), read back,
    copied off to the VNFM's store; recorded in `up["snapshot"]`. Taken once per change (a retry
    that runs this phase again finds it and keeps it: etcd as before the change); `up["runs"]`
    counts the forward's runs (a rollback after a retry restores etcd again: `restore_etcd`)."""
    up["runs"] = int(up.get("runs", 0)) + 1
    first = c.masters[0]
    name = f"etcd-{c.ctx.op_id}.db"
    path = f"{SNAPSHOT_DIR}/{name}"
    res = (await c.ex.run(first.ssh, EtcdSnapshotSave(endpoints=ETCD_ENDPOINTS, tls=tls, path=path))).data
    sha = str(res["sha256"])
    fetched = (await c.ex.run(first.ssh, EtcdSnapshotFetch(path, sha))).data
    raw = base64.b64decode(fetched["content"])
    if hashlib.sha256(raw).hexdigest() != sha:
        raise OperationFailed("the copied etcd snapshot's digest differs from the saved one")
    where = c.ctx.snapshots.put(c.ctx.instance.id, name, raw) if c.ctx.snapshots is not None else "(no store)"
    up["snapshot"] = {"path": path, "sha256": sha, "name": name, "size": len(raw), "host": first.name}
    c.ctx.progress(f"etcd snapshot taken on {first.name} ({len(raw)} bytes, {res.get('keys', 0)} keys, sha256 "
                   f"{sha[:12]}), copied to {where}")


def _admin_for(c: Cluster, n: Node) -> Node:
    others = [m for m in c.masters if m is not n]
    return others[0] if others else c.masters[0]


async def _node(c: Cluster, n: Node, version: str, *, first: bool) -> None:
    """One node to `version`, the kubeadm way; a node already there is left alone."""
    up = _state(c)
    if n.name in up.setdefault("done", []):
        return
    admin = _admin_for(c, n)
    c.ctx.progress(f"upgrading {'control plane' if n.master else 'worker'} {n.name} to {version}")
    await c.ex.run(n.ssh, K8sPackages(version, ("kubeadm",)))
    if first:
        await c.ex.run(n.ssh, KubeadmUpgradeApply(n.name, version))
    else:
        await c.ex.run(n.ssh, KubeadmUpgradeNode(n.name, version, n.master))
    await c.ex.run(admin.ssh, DrainNode(n.name, c.p.drain_timeout))
    await c.ex.run(n.ssh, K8sPackages(version, ("kubelet", "kubectl")))
    await c.ex.run(admin.ssh, NodeAtVersion(n.name, version, c.p.node_ready_timeout))
    await c.ex.run(admin.ssh, UncordonNode(n.name))
    up["done"].append(n.name)
    c.ctx.progress(f"{n.name} Ready at {version}")


async def upgrade(c: Cluster, phase: str) -> None:
    up = _state(c)
    if phase == "snapshot":
        # the forward starts (again): the first attempt, or a retry after a rollback began (the
        # engine runs every stage again then). That rollback may have undone nodes listed done
        # (and, killed part-way, not recorded it): no node counts as done. Written with the stage's
        # end, before any node is touched.
        up["done"] = []
        await take_snapshot(c, up)
    elif phase == "control_plane":
        for i, m in enumerate(c.masters):  # one at a time: the others keep the API up through the VIP
            await _node(c, m, up["new"], first=i == 0)
    elif phase == "workers":
        for w in c.workers:  # one at a time: drained, Ready at the version, then the next
            await _node(c, w, up["new"], first=False)
        record_version(c, up["new"])
    else:
        raise OperationFailed(f"unknown change_vnfpkg phase {phase!r}")


async def roll_back(c: Cluster, phase: str) -> None:
    """Undo as far as `phase` (the furthest phase that started)."""
    up = _state(c)
    if phase not in ("control_plane", "workers"):
        c.ctx.progress("rolling back: no node had changed")
        return
    old = up["old"]
    c.ctx.progress(f"rolling back: every node back to Kubernetes {old}")
    for m in c.masters:
        await c.ex.run(m.ssh, K8sPackages(old, ("kubeadm",)))
        await c.ex.run(m.ssh, KubeadmRevertControlPlane(m.name, old))
    await restore_etcd(c, up)
    for n in [*c.masters, *c.workers]:
        admin = _admin_for(c, n)
        await c.ex.run(n.ssh, K8sPackages(old, ("kubeadm", "kubelet", "kubectl")))
        if not n.master:
            await c.ex.run(n.ssh, KubeadmUpgradeNode(n.name, old, False))
        await c.ex.run(admin.ssh, NodeAtVersion(n.name, old, c.p.node_ready_timeout))
        await c.ex.run(admin.ssh, UncordonNode(n.name))
    up["done"] = []
    record_version(c, old)
    c.ctx.progress(f"rolled back: every node Ready at {old}, etcd as before the change")


async def restore_etcd(c: Cluster, up: dict[str, Any], member: Any = None) -> None:
    """Every master's etcd member restored from the snapshot of `up` (the VNFM's copy put back
    first); `member(index, node)` names the members (default: the node names, as kubeadm's). Once
    per run of the forward (`up["runs"]`): a rollback killed after it does not restore again, one
    after a retry that moved nodes (and etcd) again does."""
    snap = up.get("snapshot")
    if not snap:
        raise OperationFailed("no etcd snapshot was taken for this change: cannot restore etcd")
    name = member or (lambda i, m: m.name)
    members = tuple((name(i, m), f"https://{m.nic}:2380") for i, m in enumerate(c.masters))
    raw = c.ctx.snapshots.get(c.ctx.instance.id, snap["name"]) if c.ctx.snapshots is not None else None
    for i, m in enumerate(c.masters):  # every member restores the same snapshot
        if raw is not None:
            await c.ex.run(m.ssh, EtcdSnapshotPut(snap["path"], snap["sha256"], base64.b64encode(raw).decode()))
        await c.ex.run(m.ssh, EtcdSnapshotRestore(snap["path"], snap["sha256"], name(i, m), f"https://{m.nic}:2380",
                                                  members, restore_id=f"run-{up['runs']}" if up.get("runs") else ""))
    c.ctx.progress(f"etcd restored on {len(c.masters)} member(s) from the snapshot (sha256 {snap['sha256'][:12]})")


def record_version(c: Cluster, version: str) -> None:
    """The cluster's Kubernetes VIM says which version the cluster runs (`extra.kubernetes_version`)."""
    vims, vim_id = c.ctx.vims, c.ctx.state.get("vim_id")
    vim = vims.get(vim_id) if vims is not None and vim_id else None
    if vims is None or vim is None:
        return
    vim.extra = {**vim.extra, "kubernetes_version": version}
    vims.update(vim)
