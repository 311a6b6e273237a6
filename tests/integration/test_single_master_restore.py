"""The single-master restore's node steps over real SSH on two test hosts (issue 27 item 3): the old
master's kubeadm PKI (made with the real openssl) read by `PkiFetch` and put on the new host by
`PkiPut` (an archive uploaded by SFTP: keys 0600, nothing left in the login's home, refused where
another CA is installed); a snapshot of the old master's real etcd put on the new host and restored
by `EtcdRestoreMember` as the only member (a real etcd started on it serves the keys, one member;
a corrupt snapshot refused); a worker's kubelet kubeconfig repointed by `KubeletServer` (a
recording systemctl: no kubelet here). kubeadm itself is not run (no real kubeadm here)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import EtcdHealth, EtcdStart
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.restore import PKI_DIR, PKI_FILES, EtcdRestoreMember, KubeletServer, PkiFetch, PkiPut
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotPut, EtcdSnapshotSave

pytestmark = pytest.mark.integration

MKPKI = r"""set -euo pipefail
pki=/etc/kubernetes/pki
mkdir -p "$pki/etcd"
for n in ca front-proxy-ca etcd/ca; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/$n.key" \
    -out "$pki/$n.crt" -subj "/CN=${n//\//-}" -days 1 2>/dev/null
done
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
"""
SYSTEMCTL = "#!/bin/sh\necho \"$@\" >> /var/log/systemctl-standin.log\n"


async def test_restore_steps_over_ssh_real_etcd_openssl_pki(make_hosts, ssh: SshExecutor) -> None:
    require("etcd", "etcdctl", "openssl")
    old, new = make_hosts(2)
    steps = SshStepExecutor(ssh, {h.address: h.target() for h in (old, new)})
    peer, client = f"http://{old.address}:2380", f"http://{old.address}:2379"
    await steps.run(old.address, EtcdStart("m-old", peer, client, (("m-old", peer),)))
    assert (await steps.run(old.address, EtcdHealth(endpoints=(client,), wait_s=20))).data["healthy"] is True
    put = await ssh.run(old.target(), f"ETCDCTL_API=3 etcdctl --endpoints={client} put /registry/configmaps/d/a 1")
    assert put.ok, put.stderr
    path = f"{SNAPSHOT_DIR}/heal-x.db"
    saved = (await steps.run(old.address, EtcdSnapshotSave(endpoints=(client,), path=path))).data
    raw = base64.b64decode((await steps.run(old.address, EtcdSnapshotFetch(path, saved["sha256"]))).data["content"])

    # the PKI: read from the old master, put on the new host over SFTP
    assert (await ssh.run(old.target(), MKPKI)).ok
    files = (await steps.run(old.address, PkiFetch())).data["files"]
    assert sorted(files) == sorted(PKI_FILES)
    assert (await steps.run(new.address, PkiPut(tuple(files.items())))).changed
    modes = await ssh.run(new.target(), f"cd {PKI_DIR} && stat -c '%n %a' {' '.join(PKI_FILES)}; "
                                        "ls -A ~ | grep -c vnfm-pki || true")
    got = dict(line.split() for line in modes.stdout.splitlines()[:-1])
    assert got == {f: "600" if f.endswith(".key") else "644" for f in PKI_FILES}
    assert modes.stdout.splitlines()[-1] == "0"  # the uploaded archive is gone
    same = await ssh.run(new.target(), f"sha256sum {PKI_DIR}/ca.key | cut -d' ' -f1")
    assert same.stdout.strip() == hashlib.sha256(base64.b64decode(files["ca.key"])).hexdigest()
    assert not (await steps.run(new.address, PkiPut(tuple(files.items())))).changed
    other = dict(files, **{"ca.crt": base64.b64encode(b"another CA").decode()})
    with pytest.raises(StepFailed, match="another certificate authority"):
        await steps.run(new.address, PkiPut(tuple(other.items())))

    # etcd: the snapshot put and restored on the new host as its only member, then served
    rpath = f"{SNAPSHOT_DIR}/restore/heal-x.db"
    npeer, nclient = f"http://{new.address}:2380", f"http://{new.address}:2379"
    await steps.run(new.address, EtcdSnapshotPut(rpath, saved["sha256"], base64.b64encode(raw).decode()))
    restore = EtcdRestoreMember(rpath, saved["sha256"], "m-new", npeer, "1.31.2", data_dir="/var/lib/etcd/m-new")
    assert (await steps.run(new.address, restore)).changed
    assert not (await steps.run(new.address, restore)).changed
    await steps.run(new.address, EtcdStart("m-new", npeer, nclient, (("m-new", npeer),)))
    assert (await steps.run(new.address, EtcdHealth(endpoints=(nclient,), wait_s=20))).data["healthy"] is True
    check = await ssh.run(new.target(), f"ETCDCTL_API=3 etcdctl --endpoints={nclient} get --print-value-only "
                                        f"/registry/configmaps/d/a; ETCDCTL_API=3 etcdctl --endpoints={nclient} "
                                        "member list | wc -l")
    assert check.stdout.split() == ["1", "1"], check.stderr
    bad = raw[:-64] + b"\0" * 64
    bad_sha = hashlib.sha256(bad).hexdigest()
    bpath = f"{SNAPSHOT_DIR}/restore/bad.db"
    await steps.run(new.address, EtcdSnapshotPut(bpath, bad_sha, base64.b64encode(bad).decode()))
    with pytest.raises(StepFailed):
        await steps.run(new.address, EtcdRestoreMember(bpath, bad_sha, "m-bad", npeer, "1.31.2",
                                                       data_dir="/var/lib/etcd-bad"))

    # a worker's kubelet pointed at the new API server (systemctl: a recording stand-in)
    setup = await ssh.run(old.target(), "mkdir -p /usr/local/bin /etc/kubernetes && "
                                        f"printf '%s' '{SYSTEMCTL}' > /usr/local/bin/systemctl && "
                                        "chmod 755 /usr/local/bin/systemctl && printf 'clusters:\\n- cluster:\\n"
                                        "    server: https://10.1.1.1:6443\\n' > /etc/kubernetes/kubelet.conf")
    assert setup.ok, setup.stderr
    assert (await steps.run(old.address, KubeletServer(f"{new.address}:6443"))).changed
    assert not (await steps.run(old.address, KubeletServer(f"{new.address}:6443"))).changed
    seen = await ssh.run(old.target(), "cat /etc/kubernetes/kubelet.conf /var/log/systemctl-standin.log")
    assert f"server: https://{new.address}:6443" in seen.stdout and seen.stdout.count("restart kubelet") == 1
