"""The scheduled backup's node steps over real SSH against a real etcd on a test host: snapshot
save (checked with etcdutl / etcdctl snapshot status), fetch, and the restore drill into a scratch
etcd on other ports (keys and revision compared; the cluster's etcd untouched, nothing left)."""

from __future__ import annotations

import base64
import hashlib
import uuid
from types import SimpleNamespace

import pytest

from tests.integration.conftest import require
from vnfm.adapters.mgmt.cluster.etcd import ETCD_ENDPOINTS, ETCD_TLS
from vnfm.adapters.mgmt.kubespray.upgrade import etcd_tls as kubespray_tls
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import EtcdHealth, EtcdMemberList, EtcdStart
from vnfm.nodesteps.backup import EtcdRestoreDrill
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotRestore, EtcdSnapshotSave

pytestmark = pytest.mark.integration


async def test_backup_and_restore_drill_on_real_etcd(make_hosts, ssh: SshExecutor) -> None:
    require("etcd", "etcdctl")
    host = make_hosts(1)[0]
    steps = SshStepExecutor(ssh, {host.address: host.target()})
    peer, client = f"http://{host.address}:2380", f"http://{host.address}:2379"
    await steps.run(host.address, EtcdStart("m1", peer, client, (("m1", peer),)))
    assert (await steps.run(host.address, EtcdHealth(endpoints=(client,), wait_s=20))).data["healthy"] is True
    for i in range(3):
        put = await ssh.run(host.target(), f"ETCDCTL_API=3 etcdctl --endpoints={client} put /registry/pods/p{i} v")
        assert put.ok, put.stderr

    path = f"{SNAPSHOT_DIR}/scheduled/backup-{uuid.uuid4().hex[:8]}.db"
    saved = (await steps.run(host.address, EtcdSnapshotSave(endpoints=(client,), path=path, keep=2))).data
    raw = base64.b64decode((await steps.run(host.address, EtcdSnapshotFetch(path, saved["sha256"]))).data["content"])
    assert hashlib.sha256(raw).hexdigest() == saved["sha256"] and len(raw) == saved["size"]

    drill = await steps.run(host.address, EtcdRestoreDrill(path, saved["sha256"], saved["keys"], saved["revision"]))
    assert drill.data["keys"] == saved["keys"] and drill.data["revision"] == saved["revision"]
    assert drill.data["live_keys"] == 3
    left = await ssh.run(host.target(), "ls -d /var/tmp/vnfm-etcd-drill.* 2>/dev/null | wc -l; "
                                        f"ETCDCTL_API=3 etcdctl --endpoints={client} get --print-value-only "
                                        "/registry/pods/p2")
    assert left.stdout.split() == ["0", "v"]  # no scratch directory left; the cluster's etcd as before
    with pytest.raises(StepFailed, match="the snapshot 999"):
        await steps.run(host.address, EtcdRestoreDrill(path, saved["sha256"], 999, saved["revision"]))
    await ssh.run(host.target(), f"rm -f -- {path}")


# A stock kubeadm master: etcd runs only inside its static pod (registry.k8s.io/etcd keeps etcd,
# etcdctl and etcdutl in /usr/local/bin), nothing etcd is on the host's PATH. Mimicked on a test
# host: the machine's etcd and etcdctl moved into an image-like root (with the C library they link)
# and etcd run chrooted there, so /proc/<pid>/root is that root as for a container.
IMAGE_ROOT = "/opt/etcd-image"
STOCK_MASTER = f"""set -e
root={IMAGE_ROOT}
mkdir -p "$root/usr/local/bin" "$root/var/lib/etcd"
for p in /usr/bin/etcd /usr/bin/etcdctl; do
  cp "$p" "$root/usr/local/bin/"
  for lib in $(ldd "$p" | grep -o '/[^ ]*'); do mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; done
  rm -f "$p"
done
! command -v etcd && ! command -v etcdctl && ! command -v etcdutl
"""


async def test_stock_master_etcd_only_in_its_pod(make_hosts, ssh: SshExecutor) -> None:
    """Snapshot save, fetch, member list, health and the restore drill on a host whose PATH has no etcd
    program: each script takes them from the running etcd (/proc/<pid>/exe, /proc/<pid>/root); with
    no etcd running, the drill fails saying what is missing."""
    require("etcd", "etcdctl")
    host = make_hosts(1)[0]
    t = host.target()
    prep = await ssh.run(t, STOCK_MASTER)
    assert prep.ok, prep.stderr
    client, peer = f"http://{host.address}:2379", f"http://{host.address}:2380"
    start = await ssh.run(t, f"setsid chroot {IMAGE_ROOT} /usr/local/bin/etcd --name m1 --data-dir /var/lib/etcd "
                             f"--listen-client-urls {client},http://127.0.0.1:2379 --advertise-client-urls {client} "
                             f"--listen-peer-urls {peer} --initial-advertise-peer-urls {peer} "
                             f"--initial-cluster m1={peer} </dev/null >/var/log/etcd.log 2>&1 & echo $!")
    assert start.ok, start.stderr
    pid = int(start.stdout.split()[-1])
    steps = SshStepExecutor(ssh, {host.address: t})
    assert (await steps.run(host.address, EtcdHealth(endpoints=(client,), wait_s=20))).data["healthy"] is True
    ctl = f"ETCDCTL_API=3 {IMAGE_ROOT}/usr/local/bin/etcdctl --endpoints={client}"
    for i in range(3):
        put = await ssh.run(t, f"{ctl} put /registry/pods/p{i} v")
        assert put.ok, put.stderr
    members = (await steps.run(host.address, EtcdMemberList(endpoints=(client,)))).data["members"]
    assert [m["name"] for m in members] == ["m1"]

    path = f"{SNAPSHOT_DIR}/scheduled/backup-{uuid.uuid4().hex[:8]}.db"
    saved = (await steps.run(host.address, EtcdSnapshotSave(endpoints=(client,), path=path, keep=2))).data
    assert saved["keys"] >= 3 and saved["revision"] >= 4
    raw = base64.b64decode((await steps.run(host.address, EtcdSnapshotFetch(path, saved["sha256"]))).data["content"])
    assert hashlib.sha256(raw).hexdigest() == saved["sha256"]
    drill = await steps.run(host.address, EtcdRestoreDrill(path, saved["sha256"], saved["keys"], saved["revision"]))
    assert drill.data["keys"] == saved["keys"] and drill.data["live_keys"] == 3
    # the scratch etcd was the running etcd's own program; it is gone, the cluster's etcd untouched
    left = await ssh.run(t, f"pgrep -c -x etcd; ls -d /var/tmp/vnfm-etcd-drill.* 2>/dev/null | wc -l; "
                            f"{ctl} get --print-value-only /registry/pods/p2")
    assert left.stdout.split() == ["1", "0", "v"], left.stdout + left.stderr

    # the restore copies its program out of /proc/<pid>/root first (the static pod goes away meanwhile);
    # here into a directory of its own (no manifest, no unit: the chrooted etcd keeps running)
    restored = await steps.run(host.address, EtcdSnapshotRestore(path, saved["sha256"], "m1", peer, (("m1", peer),),
                                                                 data_dir="/var/lib/etcd-restored"))
    assert restored.changed
    check = await ssh.run(t, "test -s /var/lib/etcd-restored/member/snap/db && "
                             "ls -d /var/tmp/vnfm-etcd-tools.* 2>/dev/null | wc -l")
    assert check.ok and check.stdout.split() == ["0"], check.stdout + check.stderr

    stop = await ssh.run(t, f"kill {pid}; for _ in $(seq 100); do kill -0 {pid} 2>/dev/null || exit 0; "
                            "sleep 0.1; done; exit 1")
    assert stop.ok, "etcd did not stop"
    with pytest.raises(StepFailed, match="no etcd on this host: not on PATH, and no running etcd"):
        await steps.run(host.address, EtcdRestoreDrill(path, saved["sha256"], saved["keys"], saved["revision"]))
    with pytest.raises(StepFailed, match="no etcdctl on this host"):
        await steps.run(host.address, EtcdSnapshotSave(endpoints=(client,), path=path + ".2.db", keep=2))


# A Kubespray control plane (etcd_deployment_type host): etcd a host service with client
# certificate auth, its certificates where roles/etcd puts them (/etc/ssl/etcd/ssl: ca.pem,
# member-<node>.pem, admin-<node>.pem and their -key.pem), made with the real openssl.
KUBESPRAY_ETCD = r"""set -euo pipefail
d=/etc/ssl/etcd/ssl; tmp=$(mktemp -d)
mkdir -p "$d"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/ca-key.pem" \
  -out "$d/ca.pem" -subj /CN=etcd-ca -days 2 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,IP:%s\n' "$IP" > "$tmp/san.cnf"
for leaf in "member-$NODE" "admin-$NODE"; do
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/$leaf-key.pem" \
    -subj "/CN=$leaf" -out "$tmp/$leaf.csr" 2>/dev/null
  openssl x509 -req -in "$tmp/$leaf.csr" -CA "$d/ca.pem" -CAkey "$d/ca-key.pem" -CAcreateserial -days 2 \
    -extfile "$tmp/san.cnf" -out "$d/$leaf.pem" 2>/dev/null
done
nohup setsid etcd --name etcd1 --data-dir /var/lib/etcd --listen-client-urls "https://$IP:2379,https://127.0.0.1:2379" \
  --advertise-client-urls "https://$IP:2379" --listen-peer-urls "http://$IP:2380" \
  --initial-advertise-peer-urls "http://$IP:2380" --initial-cluster "etcd1=http://$IP:2380" \
  --cert-file "$d/member-$NODE.pem" --key-file "$d/member-$NODE-key.pem" --trusted-ca-file "$d/ca.pem" \
  --client-cert-auth </dev/null >/var/log/etcd.log 2>&1 &
echo "$!"
"""


async def test_kubespray_layout_backup_with_its_admin_certificate(make_hosts, ssh: SshExecutor) -> None:
    """The steps the Kubespray driver's backup runs, with the certificate it gives (admin-<node>), against
    a real etcd that requires client certificates: saved, fetched, drilled; kubeadm's paths fail there."""
    require("etcd", "etcdctl", "openssl")
    host = make_hosts(1)[0]
    t = host.target()
    node = "master-1"
    started = await ssh.run(t, f"NODE={node} IP={host.address}\n" + KUBESPRAY_ETCD)
    assert started.ok, started.stderr
    steps = SshStepExecutor(ssh, {host.address: t})
    tls = kubespray_tls(SimpleNamespace(name=node))  # type: ignore[arg-type]
    health = await steps.run(host.address, EtcdHealth(endpoints=ETCD_ENDPOINTS, tls=tls, wait_s=20))
    assert health.data["healthy"] is True, health.data
    put = await ssh.run(t, f"ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert={tls.cacert} "
                           f"--cert={tls.cert} --key={tls.key} put /registry/pods/p0 v")
    assert put.ok, put.stderr
    path = f"{SNAPSHOT_DIR}/scheduled/backup-{uuid.uuid4().hex[:8]}.db"
    saved = (await steps.run(host.address, EtcdSnapshotSave(endpoints=ETCD_ENDPOINTS, tls=tls, path=path,
                                                            keep=2))).data
    raw = base64.b64decode((await steps.run(host.address, EtcdSnapshotFetch(path, saved["sha256"]))).data["content"])
    assert hashlib.sha256(raw).hexdigest() == saved["sha256"] and saved["keys"] >= 1
    drill = await steps.run(host.address, EtcdRestoreDrill(path, saved["sha256"], saved["keys"], saved["revision"]))
    assert drill.data["keys"] == saved["keys"] and drill.data["live_keys"] == 1
    with pytest.raises(StepFailed, match="no such file or directory"):  # kubeadm's certificate is not here
        await steps.run(host.address, EtcdSnapshotSave(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, path=path + ".k.db",
                                                       keep=2))
