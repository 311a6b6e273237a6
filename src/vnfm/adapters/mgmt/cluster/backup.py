"""A scheduled etcd backup of a cluster, and its restore drill (service/backups.py runs them).

On the first master that answers: `EtcdSnapshotSave` (etcdctl snapshot save, read back with
`etcdutl snapshot status`, at most `keep` kept on the master), `EtcdSnapshotFetch`, the copy put
into the VNFM's store (at most `keep` per instance) after its digest is checked, then
`EtcdRestoreDrill` of that newest snapshot (a scratch etcd beside the master's, whichever node
access runs it): its keys compared with the snapshot's. Returns the record
the schedule stores (size, keys, digest, where, the drill's outcome). `tls_of`: a master's etcd
client certificate (kubeadm's healthcheck-client by default; Kubespray's admin-<node>).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from vnfm.adapters.mgmt.cluster.etcd import ETCD_ENDPOINTS, ETCD_TLS
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.backup import EtcdRestoreDrill
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.etcd import EtcdTls
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotSave

# apart from the upgrades' snapshots: the save's bound on kept files applies per directory
BACKUP_DIR = f"{SNAPSHOT_DIR}/scheduled"


def _kubeadm_tls(_m: Node) -> EtcdTls:
    return ETCD_TLS


async def backup(c: Cluster, keep: int, stamp: float | None = None,
                 tls_of: Callable[[Node], EtcdTls] = _kubeadm_tls) -> dict[str, Any]:
    if c.ctx.snapshots is None:
        raise OperationFailed("the VNFM has no snapshot store to copy the backup into")
    if not c.masters:
        raise OperationFailed("the cluster has no master to take an etcd snapshot on")
    stamp = time.time() if stamp is None else stamp
    name = f"backup-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(stamp))}-{uuid.uuid4().hex[:8]}.db"
    path = f"{BACKUP_DIR}/{name}"
    errors: list[str] = []
    for m in c.masters:  # the first master that answers takes it
        try:
            saved = (await c.ex.run(m.ssh, EtcdSnapshotSave(endpoints=ETCD_ENDPOINTS, tls=tls_of(m), path=path,
                                                            keep=keep))).data
        except StepFailed as e:
            errors.append(f"{m.name}: {e}")
            continue
        sha = str(saved["sha256"])
        raw = base64.b64decode((await c.ex.run(m.ssh, EtcdSnapshotFetch(path, sha))).data["content"])
        if hashlib.sha256(raw).hexdigest() != sha:
            raise OperationFailed(f"the etcd snapshot copied from {m.name} differs from the saved one (sha256)")
        where = await asyncio.to_thread(c.ctx.snapshots.put, c.ctx.instance.id, name, raw)  # a file or S3
        rec: dict[str, Any] = {"name": name, "host": m.name, "size": len(raw), "sha256": sha,
                               "keys": int(saved.get("keys") or 0), "revision": int(saved.get("revision") or 0),
                               "stored": where, "at": stamp}
        rec["drill"] = await drill(c, m.ssh, rec)
        return rec
    raise OperationFailed("no master took the etcd snapshot: " + "; ".join(errors))


async def drill(c: Cluster, ssh: str, rec: dict[str, Any]) -> dict[str, Any]:
    """The restore drill of the snapshot `rec` (on the master that keeps it): ok, keys, time."""
    step = EtcdRestoreDrill(f"{BACKUP_DIR}/{rec['name']}", rec["sha256"], rec["keys"], rec["revision"])
    at = time.time()
    try:
        data = (await c.ex.run(ssh, step)).data
    except StepFailed as e:
        return {"ok": False, "at": at, "reason": str(e)}
    return {"ok": True, "at": at, "keys": int(data.get("keys") or 0), "live_keys": int(data.get("live_keys") or 0)}
