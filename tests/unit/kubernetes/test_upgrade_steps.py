"""The upgrade steps on the twin: as strict as kubeadm / the kubelet / etcdutl where it matters,
idempotent, and an etcd snapshot that really carries the cluster's content."""

from __future__ import annotations

import base64
import hashlib

import pytest

from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.kubernetes import DrainNode
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

from .conftest import K8s

PATH = f"{SNAPSHOT_DIR}/etcd-test.db"


def test_steps_refuse_bad_values() -> None:
    for bad in (lambda: EtcdSnapshotSave(path="/tmp/x.db"), lambda: EtcdSnapshotSave(path=f"{SNAPSHOT_DIR}/../x.db"),
                lambda: K8sPackages("1.31"), lambda: K8sPackages("1.31.0", ("kubeadm", "docker")),
                lambda: EtcdSnapshotPut(PATH, "0" * 64, base64.b64encode(b"x").decode()),
                lambda: NodeAtVersion("Bad_Name", "1.31.0")):
        with pytest.raises(ValueError):
            bad()
    put = EtcdSnapshotPut(PATH, hashlib.sha256(b"secret").hexdigest(), base64.b64encode(b"secret").decode())
    assert "c2VjcmV0" not in repr(put)


async def test_twin_upgrade_steps(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    ex = k8s.twin(inst_id)
    st = k8s.state(inst_id)
    m0 = st["nodes"]["masternode-0"]["addresses"][0]
    w0 = st["nodes"]["workernode-0"]["addresses"][0]
    ex.add_pod("web-1", "workernode-0")
    before = etcd_keys(k8s.state(inst_id))
    assert "/registry/pods/default/web-1" in before

    saved = await ex.run(m0, EtcdSnapshotSave(path=PATH))
    assert saved.changed and not (await ex.run(m0, EtcdSnapshotSave(path=PATH))).changed
    sha = saved.data["sha256"]
    with pytest.raises(StepFailed, match="not a control plane"):
        await ex.run(w0, EtcdSnapshotSave(path=PATH))
    with pytest.raises(StepFailed, match="more than the 10 allowed"):
        await ex.run(m0, EtcdSnapshotFetch(PATH, sha, max_bytes=10))
    content = (await ex.run(m0, EtcdSnapshotFetch(PATH, sha))).data["content"]

    # kubelet never newer than the API server; kubeadm first, one minor at a time
    with pytest.raises(StepFailed, match="newer than the cluster's API server"):
        await ex.run(w0, K8sPackages("1.31.0", ("kubelet",)))
    with pytest.raises(StepFailed, match="kubeadm is 1.30.4, not 1.31.0"):
        await ex.run(m0, KubeadmUpgradeApply("masternode-0", "1.31.0"))
    await ex.run(m0, K8sPackages("1.32.0", ("kubeadm",)))
    with pytest.raises(StepFailed, match="one minor version up at most"):
        await ex.run(m0, KubeadmUpgradeApply("masternode-0", "1.32.0"))
    await ex.run(m0, K8sPackages("1.31.0", ("kubeadm",)))
    await ex.run(w0, K8sPackages("1.31.0", ("kubeadm",)))
    with pytest.raises(StepFailed, match="run upgrade apply first"):
        await ex.run(w0, KubeadmUpgradeNode("workernode-0", "1.31.0", False))
    assert (await ex.run(m0, KubeadmUpgradeApply("masternode-0", "1.31.0"))).changed
    assert not (await ex.run(m0, KubeadmUpgradeApply("masternode-0", "1.31.0"))).changed
    assert k8s.state(inst_id)["cluster"]["version"] == "1.31.0"
    await ex.run(m0, DrainNode("workernode-0"))
    await ex.run(w0, K8sPackages("1.31.0", ("kubelet", "kubectl")))
    await ex.run(m0, NodeAtVersion("workernode-0", "1.31.0", 5))
    with pytest.raises(StepFailed, match="not Ready at 1.31.0 within 0.05s: it is Ready at 1.30.4"):
        await ex.run(m0, NodeAtVersion("masternode-0", "1.31.0", 0.05))
    ex.add_pod("late-1", "workernode-0")
    assert etcd_keys(k8s.state(inst_id)) != before

    # the undo: manifests back, etcd restored from the snapshot (also from a copy put back)
    assert (await ex.run(m0, KubeadmRevertControlPlane("masternode-0", "1.30.4"))).changed
    assert not (await ex.run(m0, EtcdSnapshotPut(PATH, sha, content))).changed
    member = (("masternode-0", f"https://{m0}:2380"),)
    with pytest.raises(StepFailed, match="no snapshot with that digest"):
        await ex.run(m0, EtcdSnapshotRestore(PATH, "1" * 64, "masternode-0", f"https://{m0}:2380", member))
    assert (await ex.run(m0, EtcdSnapshotRestore(PATH, sha, "masternode-0", f"https://{m0}:2380", member))).changed
    assert not (await ex.run(m0, EtcdSnapshotRestore(PATH, sha, "masternode-0", f"https://{m0}:2380",
                                                     member))).changed
    assert etcd_keys(k8s.state(inst_id)) == before
    assert k8s.state(inst_id)["pods"]["default/web-1"]["node"] == "workernode-0"  # where the snapshot had it
    # etcd changed again (the change retried): the same snapshot is restored again under another id
    ex.add_pod("late-2", "workernode-0")
    again = EtcdSnapshotRestore(PATH, sha, "masternode-0", f"https://{m0}:2380", member, restore_id="run-2")
    assert (await ex.run(m0, again)).changed and not (await ex.run(m0, again)).changed
    assert etcd_keys(k8s.state(inst_id)) == before
    with pytest.raises(ValueError, match="restore_id"):
        EtcdSnapshotRestore(PATH, sha, "masternode-0", f"https://{m0}:2380", member, restore_id="a b")
