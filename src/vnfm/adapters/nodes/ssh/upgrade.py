"""Upgrade steps over SSH (nodesteps/upgrade.py): etcd snapshots (etcdctl / etcdutl on the
control plane), the Kubernetes packages at a version, kubeadm upgrade / revert, Ready at a version."""

from __future__ import annotations

import base64
import os
import tempfile

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.nodes.ssh.etcd import _tls_env
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.upgrade import (
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


async def snapshot_save(ex: ScriptRunner, t: SshTarget, s: EtcdSnapshotSave) -> StepResult:
    out = await ex.script(t, s, "etcd_snapshot_save", {"ENDPOINTS": ",".join(s.endpoints), "SNAPSHOT": s.path,
                                                       "KEEP": str(s.keep)}, _tls_env(s), timeout=600)
    data = {"sha256": out.get("sha256", ""), "size": int(out.get("size") or 0),
            "revision": int(out.get("revision") or 0), "keys": int(out.get("keys") or 0)}
    return StepResult(changed(out), data)


async def snapshot_fetch(ex: ScriptRunner, t: SshTarget, s: EtcdSnapshotFetch) -> StepResult:
    out = await ex.script(t, s, "etcd_snapshot_fetch", {"SNAPSHOT": s.path, "SHA256": s.sha256,
                                                        "MAX_BYTES": str(s.max_bytes)}, timeout=600)
    return StepResult(False, {"content": out.get("content", ""), "sha256": s.sha256})


async def snapshot_put(ex: ScriptRunner, t: SshTarget, s: EtcdSnapshotPut) -> StepResult:
    fd, local = tempfile.mkstemp(prefix="vnfm-etcd-", suffix=".db")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64decode(s.content))
        uploaded = f".vnfm-etcd-{s.sha256[:16]}.db"
        await ex.upload(t, s, local, uploaded, timeout=600)
    finally:
        os.unlink(local)
    out = await ex.script(t, s, "etcd_snapshot_put", {"UPLOADED": uploaded, "SNAPSHOT": s.path, "SHA256": s.sha256})
    return StepResult(changed(out))


async def snapshot_restore(ex: ScriptRunner, t: SshTarget, s: EtcdSnapshotRestore) -> StepResult:
    out = await ex.script(t, s, "etcd_snapshot_restore", {
        "SNAPSHOT": s.path, "SHA256": s.sha256, "NAME": s.name, "PEER_URL": s.peer_url,
        "INITIAL_CLUSTER": ",".join(f"{n}={u}" for n, u in s.initial_cluster), "DATA_DIR": s.data_dir,
        "MARKER": s.marker}, timeout=600)
    return StepResult(changed(out))


async def packages(ex: ScriptRunner, t: SshTarget, s: K8sPackages) -> StepResult:
    out = await ex.script(t, s, "kube_packages", {"PACKAGES": " ".join(s.packages), "K8S_VERSION": s.version},
                          timeout=900)
    return StepResult(changed(out))


async def _kubeadm(ex: ScriptRunner, t: SshTarget, s: KubeadmUpgradeApply | KubeadmUpgradeNode
                   | KubeadmRevertControlPlane, mode: str) -> StepResult:
    out = await ex.script(t, s, "kubeadm_upgrade", {"MODE": mode, "K8S_VERSION": s.version}, timeout=1800)
    return StepResult(changed(out))


async def upgrade_apply(ex: ScriptRunner, t: SshTarget, s: KubeadmUpgradeApply) -> StepResult:
    return await _kubeadm(ex, t, s, "apply")


async def upgrade_node(ex: ScriptRunner, t: SshTarget, s: KubeadmUpgradeNode) -> StepResult:
    return await _kubeadm(ex, t, s, "node-cp" if s.control_plane else "node-worker")


async def revert(ex: ScriptRunner, t: SshTarget, s: KubeadmRevertControlPlane) -> StepResult:
    return await _kubeadm(ex, t, s, "revert")


async def at_version(ex: ScriptRunner, t: SshTarget, s: NodeAtVersion) -> StepResult:
    await ex.script(t, s, "node_at_version", {"NODE": s.node, "K8S_VERSION": s.version,
                                              "DEADLINE_S": f"{s.deadline_s:g}"}, timeout=s.deadline_s + 60)
    return StepResult(False)


HANDLERS: dict[type, Handler] = {
    EtcdSnapshotSave: snapshot_save,
    EtcdSnapshotFetch: snapshot_fetch,
    EtcdSnapshotPut: snapshot_put,
    EtcdSnapshotRestore: snapshot_restore,
    K8sPackages: packages,
    KubeadmUpgradeApply: upgrade_apply,
    KubeadmUpgradeNode: upgrade_node,
    KubeadmRevertControlPlane: revert,
    NodeAtVersion: at_version,
}
