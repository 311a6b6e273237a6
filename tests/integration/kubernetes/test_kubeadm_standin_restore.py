"""The single-master restore's node steps in the driver's order over real SSH, with the RECORDING
STAND-IN kubeadm (standins.py: NOT Kubernetes) whose `init` starts a REAL etcd (TLS, kubeadm's PKI
paths): the first master's etcd is snapshotted, the new host gets the PKI (SFTP), the snapshot, the
restored one-member data directory, and `kubeadm_init.sh` with EXISTING_ETCD runs the stand-in with
`--ignore-preflight-errors=DirAvailable--var-lib-etcd` (without it, refused as kubeadm's preflight
refuses a non-empty /var/lib/etcd): the real etcd it starts serves the keys of the snapshot (not
those written after it), as the only member, named and addressed as the new control plane."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes import standins
from tests.integration.kubernetes.kubeapi import SimApi
from vnfm.adapters.mgmt.cluster.etcd import ETCD_ENDPOINTS, ETCD_TLS
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import EtcdMemberList, KubeadmInit, PrepareNode, StepFailed, WaitNodeReady
from vnfm.nodesteps.restore import EtcdRestoreMember, PkiFetch, PkiPut
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotPut, EtcdSnapshotSave

pytestmark = pytest.mark.integration
VERSION = "1.30.4"
# what the stand-in hosts lack of kubeadm's PKI (their ca.crt and etcd/ca.crt come from standins.Pki)
MISSING_PKI = r"""set -euo pipefail
pki=/etc/kubernetes/pki
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$pki/ca.key" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$pki/etcd/ca.key" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/front-proxy-ca.key" \
  -out "$pki/front-proxy-ca.crt" -subj /CN=front-proxy-ca -days 1 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
"""


def _etcdctl(args: str) -> str:
    return ("ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt "
            "--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt "
            f"--key=/etc/kubernetes/pki/etcd/healthcheck-client.key {args}")


async def test_kubeadm_standin_restore_on_a_new_host_real_etcd(make_hosts, ssh: SshExecutor, tmp_path: Path) -> None:
    require("etcd", "etcdctl", "openssl", "python3")
    old, new = make_hosts(2)
    pki = standins.Pki.create()
    api = SimApi(tmp_path / "kube-api", [])
    await standins.install(ssh, old, pki, etcd_hosts=[old], api=api)
    await standins.install(ssh, new, pki, etcd_hosts=[new], api=api)
    for h in (old, new):
        await standins.calico_mirror(ssh, h)
    ex = SshStepExecutor(SshExecutor(command_timeout=120), {h.address: h.target() for h in (old, new)}, timeout=120)

    def init(h: object, existing: bool) -> KubeadmInit:
        addr = h.address  # type: ignore[attr-defined]
        return KubeadmInit("k8s-m1", addr, f"{addr}:6443", "10.244.0.0/16", "10.96.0.0/12", VERSION, (addr,),
                           existing_etcd=existing)

    # ---- the cluster's first (and only) master, a key before and one after the snapshot
    await ex.run(old.address, PrepareNode("k8s-m1", VERSION))
    assert (await ex.run(old.address, init(old, False))).changed
    assert (await ssh.run(old.target(), MISSING_PKI)).ok
    assert (await ssh.run(old.target(), _etcdctl("put /registry/configmaps/default/before 1"))).ok
    path = f"{SNAPSHOT_DIR}/heal-op.db"
    saved = (await ex.run(old.address, EtcdSnapshotSave(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, path=path))).data
    raw = base64.b64decode((await ex.run(old.address, EtcdSnapshotFetch(path, saved["sha256"]))).data["content"])
    assert (await ssh.run(old.target(), _etcdctl("put /registry/configmaps/default/after 1"))).ok
    files = (await ex.run(old.address, PkiFetch())).data["files"]

    # ---- the new VM: prepared, PKI, snapshot, restored member, kubeadm init on it
    await ex.run(new.address, PrepareNode("k8s-m1", VERSION))
    assert (await ex.run(new.address, PkiPut(tuple(files.items())))).changed
    rpath = f"{SNAPSHOT_DIR}/restore/heal-op.db"
    await ex.run(new.address, EtcdSnapshotPut(rpath, saved["sha256"], base64.b64encode(raw).decode()))
    peer = f"https://{new.address}:2380"
    assert (await ex.run(new.address, EtcdRestoreMember(rpath, saved["sha256"], "k8s-m1", peer, "1.31.2"))).changed
    with pytest.raises(StepFailed, match="DirAvailable--var-lib-etcd"):
        await ex.run(new.address, init(new, False))  # kubeadm's preflight: /var/lib/etcd is not empty
    n0 = len(await standins.argv_log(ssh, new))
    assert (await ex.run(new.address, init(new, True))).changed
    calls = [c for c in (await standins.argv_log(ssh, new))[n0:] if c.startswith("kubeadm ")]
    assert len(calls) == 1 and calls[0].endswith("--upload-certs --ignore-preflight-errors=DirAvailable--var-lib-etcd")
    await ex.run(new.address, WaitNodeReady("k8s-m1", 30))
    got = await ssh.run(new.target(), _etcdctl("get --prefix --keys-only /registry/configmaps/default/"))
    assert got.stdout.split() == ["/registry/configmaps/default/before"], got.stderr
    members = (await ex.run(new.address, EtcdMemberList(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS))).data["members"]
    assert [(m["name"], m["peer_urls"]) for m in members] == [("k8s-m1", [peer])]
    assert not (await ex.run(new.address, init(new, True))).changed  # the control plane runs: a no-op
    assert "k8s-m1" in api.state()["nodes"]  # registered again by the stand-in's kubelet
