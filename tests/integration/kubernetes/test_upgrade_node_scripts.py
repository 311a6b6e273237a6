"""The upgrade scripts of kubeadm clusters (issue 26) over real SSH on test hosts:
etcd_snapshot_put and etcd_snapshot_restore with the machine's real etcd 3.4 / etcdctl (a snapshot
saved on one host, fetched, put back on another, restored into a data directory an etcd then
serves: the same keys; a corrupt snapshot fails and leaves the etcd manifest in place), and
node_at_version with the REAL kubectl against the simulated Kubernetes API; kube_packages and
kubeadm_upgrade against the strict apt / kubeadm stand-ins (standins_upgrade.py)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes import standins_upgrade
from tests.integration.kubernetes.kubeapi import SimApi, install_admin, install_kubectl
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import EtcdStart, EtcdStop, StepFailed
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

pytestmark = pytest.mark.integration

ETCDCTL = "ETCDCTL_API=3 etcdctl --endpoints http://127.0.0.1:2379"
MANIFEST = "/etc/kubernetes/manifests/etcd.yaml"


async def _keys(ssh: SshExecutor, host: Any) -> list[str]:
    res = await ssh.run(host.target(), f"{ETCDCTL} get '' --prefix --keys-only", check=True)
    return sorted(k for k in res.stdout.split() if k)


async def test_etcd_snapshot_put_back_and_restore_real_etcd(make_hosts, ssh: SshExecutor) -> None:
    require("etcd", "etcdctl")
    a, b = make_hosts(2)
    ex = SshStepExecutor(ssh, {h.address: h.target() for h in (a, b)})
    peer_a, peer_b = f"http://{a.address}:2380", f"http://{b.address}:2380"
    assert (await ex.run(a.address, EtcdStart("m1", peer_a, f"http://{a.address}:2379", (("m1", peer_a),)))).changed
    for i in range(20):
        await ssh.run(a.target(), f"{ETCDCTL} put /registry/pods/default/p{i} value-{i}", check=True)
    saved_keys = await _keys(ssh, a)
    path = f"{SNAPSHOT_DIR}/etcd-before-1.31.2.db"
    saved = await ex.run(a.address, EtcdSnapshotSave(path=path))
    await ssh.run(a.target(), f"{ETCDCTL} put /registry/after-the-snapshot x", check=True)
    fetched = await ex.run(a.address, EtcdSnapshotFetch(path, saved.data["sha256"]))
    content, digest = fetched.data["content"], saved.data["sha256"]
    assert hashlib.sha256(base64.b64decode(content)).hexdigest() == digest

    # ---- put back (on another control plane): written 0600, then a no-op; nothing left behind
    put = EtcdSnapshotPut(path, digest, content)
    assert (await ex.run(b.address, put)).changed
    res = await ssh.run(b.target(), f"stat -c '%a' {path} && sha256sum {path} && ls -A ~ | grep -c vnfm-etcd || true",
                        check=True)
    mode, sha_line, leftovers = res.stdout.split("\n")[:3]
    assert mode == "600" and sha_line.split()[0] == digest and leftovers == "0"
    assert not (await ex.run(b.address, put)).changed

    # ---- restore into b's data directory (a kubeadm manifest parked meanwhile and put back), then
    # an etcd started on it serves the snapshot's keys, not the one written after it
    await ssh.run(b.target(), f"mkdir -p /etc/kubernetes/manifests && echo 'kind: Pod' > {MANIFEST}", check=True)
    restore = EtcdSnapshotRestore(path, digest, "m1", peer_b, (("m1", peer_b),), data_dir="/var/lib/etcd/m1")
    assert (await ex.run(b.address, restore)).changed
    assert (await ssh.run(b.target(), f"cat {MANIFEST}", check=True)).stdout.strip() == "kind: Pod"
    assert (await ex.run(b.address, EtcdStart("m1", peer_b, f"http://{b.address}:2379", (("m1", peer_b),)))).changed
    await ssh.run(b.target(), f"{ETCDCTL} endpoint health --command-timeout=10s", check=True)
    restored = await _keys(ssh, b)
    assert restored == saved_keys and "/registry/after-the-snapshot" not in restored
    value = await ssh.run(b.target(), f"{ETCDCTL} get /registry/pods/default/p7 --print-value-only", check=True)
    assert value.stdout.strip() == "value-7"
    assert not (await ex.run(b.address, restore)).changed  # restored from that digest already

    # ---- a corrupt snapshot (right digest of wrong bytes) fails in etcdctl's hash check;
    # the data directory and the parked manifest are as they were
    await ex.run(b.address, EtcdStop())
    raw = bytearray(base64.b64decode(content))
    raw[len(raw) // 2] ^= 0xFF
    bad_path = f"{SNAPSHOT_DIR}/etcd-corrupt.db"
    bad = EtcdSnapshotPut(bad_path, hashlib.sha256(raw).hexdigest(), base64.b64encode(raw).decode())
    assert (await ex.run(b.address, bad)).changed
    with pytest.raises(StepFailed, match="(?s)etcd-snapshot-restore m1 failed on .*Error: expected sha256"):
        await ex.run(b.address, EtcdSnapshotRestore(bad_path, bad.sha256, "m1", peer_b, (("m1", peer_b),),
                                                    data_dir="/var/lib/etcd/m1"))
    assert (await ssh.run(b.target(), f"cat {MANIFEST}", check=True)).stdout.strip() == "kind: Pod"
    assert (await ex.run(b.address, EtcdStart("m1", peer_b, f"http://{b.address}:2379", (("m1", peer_b),)))).changed
    await ssh.run(b.target(), f"{ETCDCTL} endpoint health --command-timeout=10s", check=True)
    assert await _keys(ssh, b) == saved_keys


async def test_node_at_version_real_kubectl_against_the_simulated_api(make_hosts, ssh: SshExecutor,
                                                                       tmp_path: Path) -> None:
    (cp,) = make_hosts(1)
    api = SimApi(tmp_path / "kube-api", [("k8s-m1", "master", cp.address), ("k8s-w1", "worker", "10.232.0.201")])
    ex = SshStepExecutor(SshExecutor(command_timeout=120), {cp.address: cp.target()}, timeout=120)
    try:
        await install_kubectl(ssh, cp)
        await install_admin(ssh, cp, api)

        def at(version: str, ready: bool = True) -> Any:
            def fn(st: dict[str, Any]) -> None:
                st["nodes"]["k8s-w1"].update(version=version, ready=ready)
                st["faults"]["never_ready"] = [] if ready else ["k8s-w1"]  # its kubelet stays NotReady
            return fn

        api.change(at("1.31.2"))
        assert not (await ex.run(cp.address, NodeAtVersion("k8s-w1", "1.31.2", 10))).changed
        with pytest.raises(StepFailed, match=r"node k8s-w1 is not Ready at v1\.31\.3 within 2s: "
                                             r"Ready=True at v1\.31\.2"):
            await ex.run(cp.address, NodeAtVersion("k8s-w1", "1.31.3", 2))
        api.change(at("1.31.2", ready=False))
        with pytest.raises(StepFailed, match=r"node k8s-w1 is not Ready at v1\.31\.2 within 2s: "
                                             r"Ready=False at v1\.31\.2"):
            await ex.run(cp.address, NodeAtVersion("k8s-w1", "1.31.2", 2))
        with pytest.raises(StepFailed, match=r"node k8s-absent is not Ready at v1\.31\.2 within 2s: "
                                             r"Ready=unknown at unknown"):
            await ex.run(cp.address, NodeAtVersion("k8s-absent", "1.31.2", 2))
    finally:
        await ex.close()
        api.stop()


async def test_kube_packages_and_kubeadm_upgrade_strict_standins(make_hosts, ssh: SshExecutor) -> None:
    """kube_packages.sh and kubeadm_upgrade.sh against the strict apt/kubeadm stand-ins
    (standins_upgrade.py: what they check, and what they cannot)."""
    cp, worker = make_hosts(2)
    await asyncio.gather(standins_upgrade.install(ssh, cp, "1.30.4", control_plane=True),
                         standins_upgrade.install(ssh, worker, "1.30.4", control_plane=False))
    ex = SshStepExecutor(ssh, {h.address: h.target() for h in (cp, worker)})

    async def installed(host: Any) -> tuple[dict[str, str], list[str]]:
        st = json.loads((await ssh.run(host.target(), "cat /var/lib/vnfm-standin/pkgs.json", check=True)).stdout)
        return st["installed"], st["held"]

    # ---- kubeadm first at the new version (its minor's repository), held again; the kubelet untouched
    assert (await ex.run(cp.address, K8sPackages("1.31.2", ("kubeadm",)))).changed
    pkgs, held = await installed(cp)
    assert pkgs == {"kubeadm": "1.31.2-1.1", "kubelet": "1.30.4-1.1", "kubectl": "1.30.4-1.1"}
    assert held == ["kubeadm", "kubectl", "kubelet"]
    assert not (await ex.run(cp.address, K8sPackages("1.31.2", ("kubeadm",)))).changed
    with pytest.raises(StepFailed, match=r"E: Version '1\.31\.9-\*' for 'kubeadm' was not found"):
        await ex.run(cp.address, K8sPackages("1.31.9", ("kubeadm",)))

    # ---- kubeadm upgrade apply on the first control plane: new manifests, the old ones backed up
    with pytest.raises(StepFailed, match=r"kubeadm is v1\.31\.2, not v1\.31\.3: install it first"):
        await ex.run(cp.address, KubeadmUpgradeApply("k8s-m1", "1.31.3"))
    # the stand-in is as strict as kubeadm (it answers no prompt, knows its flags)
    for bad, why in (("upgrade apply v1.31.2", "Are you sure"), ("upgrade apply --yes=0 v1.31.2", "Are you sure"),
                     ("upgrade apply -y --force-upgrade v1.31.2", "unknown flag"),
                     ("upgrade apply -y v1.31.2 --certificate-renewal=maybe", "ParseBool"),
                     ("upgrade node v1.31.2", "unknown command"), ("upgrade plan --yes", "unknown flag"),
                     ("upgrade apply -y v1.31.3", "Upgrade kubeadm first")):
        res = await ssh.run(cp.target(), f"kubeadm {bad}")
        assert not res.ok and why in res.stderr, (bad, res.stderr)
    plan = await ssh.run(cp.target(), "kubeadm upgrade plan --certificate-renewal=false", check=True)
    assert plan.stdout.strip() == "cluster at v1.30.4, kubeadm v1.31.2"
    assert (await ex.run(cp.address, KubeadmUpgradeApply("k8s-m1", "1.31.2"))).changed
    api = await ssh.run(cp.target(), "cat /etc/kubernetes/manifests/kube-apiserver.yaml", check=True)
    assert "registry.k8s.io/kube-apiserver:v1.31.2" in api.stdout
    assert not (await ex.run(cp.address, KubeadmUpgradeApply("k8s-m1", "1.31.2"))).changed
    # then its kubelet and kubectl (a downgrade of an unrelated pin is refused by apt's rules below)
    assert (await ex.run(cp.address, K8sPackages("1.31.2", ("kubelet", "kubectl")))).changed
    assert (await installed(cp))[0] == {p: "1.31.2-1.1" for p in ("kubeadm", "kubelet", "kubectl")}

    # ---- a worker: kubeadm, `upgrade node` (the kubelet configuration), the kubelet
    await ssh.run(worker.target(), "printf 1.31.2 > /etc/vnfm-standin/cluster-version", check=True)
    with pytest.raises(StepFailed, match="kubeadm is v1.30.4, not v1.31.2: install it first"):
        await ex.run(worker.address, KubeadmUpgradeNode("k8s-w1", "1.31.2", control_plane=False))
    await ex.run(worker.address, K8sPackages("1.31.2", ("kubeadm",)))
    assert (await ex.run(worker.address, KubeadmUpgradeNode("k8s-w1", "1.31.2", control_plane=False))).changed
    assert not (await ex.run(worker.address, KubeadmUpgradeNode("k8s-w1", "1.31.2", control_plane=False))).changed
    conf = await ssh.run(worker.target(), "cat /var/lib/kubelet/config.yaml", check=True)
    assert "v1.31.2" in conf.stdout

    # ---- the undo on the control plane: the v1.30.4 manifests back, packages down again (held)
    assert (await ex.run(cp.address, KubeadmRevertControlPlane("k8s-m1", "1.30.4"))).changed
    api = await ssh.run(cp.target(), "cat /etc/kubernetes/manifests/kube-apiserver.yaml", check=True)
    assert "registry.k8s.io/kube-apiserver:v1.30.4" in api.stdout
    assert not (await ex.run(cp.address, KubeadmRevertControlPlane("k8s-m1", "1.30.4"))).changed
    assert (await ex.run(cp.address, K8sPackages("1.30.4"))).changed
    pkgs, held = await installed(cp)
    assert pkgs == {p: "1.30.4-1.1" for p in ("kubeadm", "kubelet", "kubectl")} and held == ["kubeadm", "kubectl",
                                                                                             "kubelet"]
    with pytest.raises(StepFailed, match="no backup of the v1.29.0 control-plane manifests"):
        await ex.run(cp.address, KubeadmRevertControlPlane("k8s-m1", "1.29.0"))
    log = (await ssh.run(cp.target(), "cat /var/log/vnfm-standin/argv.log", check=True)).stdout
    assert "kubeadm upgrade apply -y v1.31.2" in log and "systemctl restart kubelet" in log
