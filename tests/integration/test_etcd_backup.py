"""The scheduled backup's node steps over real SSH against a real etcd on a test host: snapshot
save (checked with etcdutl / etcdctl snapshot status), fetch, and the restore drill into a scratch
etcd on other ports (keys and revision compared; the cluster's etcd untouched, nothing left)."""

from __future__ import annotations

import base64
import hashlib
import uuid

import pytest

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import EtcdHealth, EtcdStart
from vnfm.nodesteps.backup import EtcdRestoreDrill
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotSave

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
