"""Healing the only master of a kubeadm cluster: the cluster restored from an etcd snapshot on the
new VM, the workers kept (not rebuilt).

- Request time (`check_request`): the master alone (no worker in the same request); the VNFM holds
  the cluster's PKI (captured at instantiate, refreshed after scale, heal, renewal, upgrade) and at
  least one etcd snapshot of it (a scheduled backup or an upgrade's); else 422 saying what to do.
- heal_start (`before`), before the VM is replaced: a snapshot taken now when the master still
  answers (and its PKI read again), else the newest snapshot the VNFM holds; the plan is kept in
  the driver state and a progress line (and the log) names the snapshot and the data-loss window.
- heal_end (`after`), on the new VM: the PKI put back (SFTP, 0600), the snapshot put and restored
  as the only etcd member, `kubeadm init` on it (the CA files kept), the dead master's Node object
  deleted when the name changed, every worker's kubelet pointed at the new API server (in
  parallel) and checked Ready, etcd checked, the Kubernetes VIM and the PKI copy refreshed.
Every step checks before it acts, so a retry after a failure (FAILED_TEMP) resumes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from vnfm.adapters.mgmt.cluster import endpoint, etcd, nodes, registries, storage, vim
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather, pin
from vnfm.adapters.mgmt.kubeadm.install import cert_sans, prepare
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import VnfInstance
from vnfm.domain.resources import Vnfc
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.etcd import EtcdHealth
from vnfm.nodesteps.kubeadm import KubeadmInit
from vnfm.nodesteps.kubernetes import DeleteNode, WaitNodeReady
from vnfm.nodesteps.restore import EtcdRestoreMember, KubeletServer, PkiFetch, PkiPut, check_pki
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR, EtcdSnapshotFetch, EtcdSnapshotPut, EtcdSnapshotSave
from vnfm.service.ports import SnapshotStore

log = logging.getLogger("vnfm.restore")
RESTORE_DIR = f"{SNAPSHOT_DIR}/restore"
WHAT_TO_DO = ("enable scheduled etcd backups (additionalParams.etcd_backup at instantiate, or the setting "
              "VNFM_ETCD_BACKUP_INTERVAL), or heal the entire VNF (omit vnfcInstanceId)")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def window(at: float, now: float | None = None) -> str:
    """The data-loss window of a restore from a snapshot taken at `at`."""
    age = max(0.0, (time.time() if now is None else now) - at)
    ago = f"{int(age // 3600)} h {int(age % 3600 // 60)} min" if age >= 3600 else f"{int(age // 60)} min"
    return f"objects changed after {_iso(at)} ({ago} ago) are lost"


# ------------------------------------------------------------------ PKI copy (driver state, sealed at rest)
def held_pki(state: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """The VNFM's copy of the cluster's PKI (under a secret key: encrypted in the database)."""
    raw = (state.get("pki") or {}).get("secret")
    if not raw:
        return None
    files = tuple(sorted(json.loads(raw).items()))
    check_pki(files)
    return files


async def capture_pki(c: Cluster, m: Node, *, required: bool = True) -> None:
    """Read the cluster's PKI from master `m` into the driver state (never logged). Not `required`
    (the end of instantiate, scale, heal, renewal, upgrade): a failure is a warning line, the copy
    kept is the previous one."""
    try:
        files = (await c.ex.run(m.ssh, PkiFetch())).data["files"]
    except StepFailed as e:
        if required:
            raise
        c.ctx.progress(f"warning: the cluster's certificate authorities could not be read from {m.name} ({e}); "
                       "a heal of its single control plane needs them")
        return
    check_pki(tuple(files.items()))
    c.ctx.state["pki"] = {"secret": json.dumps(files, sort_keys=True), "at": time.time(), "host": m.name}


# ------------------------------------------------------------------ request time
def check_request(instance: VnfInstance, masters: Sequence[Vnfc], ids: Sequence[str], state: dict[str, Any],
                  store: SnapshotStore | None) -> None:
    """A heal naming the only master: 422 unless it can be restored (see the module's text)."""
    m = masters[0]
    label = m.name or m.id
    others = [i for i in ids if i != m.id]
    if others:
        raise UnprocessableEntity(f"vnfcInstanceId: healing the single control plane {label} restores the cluster "
                                  "from an etcd snapshot with its workers kept; heal the other VNFCs "
                                  f"({', '.join(others)}) in another request")
    if held_pki(state) is None:
        raise UnprocessableEntity(f"healing the single control plane {label}: the VNFM holds no copy of the "
                                  "cluster's certificate authorities (captured at instantiate, scale and heal), so "
                                  "the workers would not trust a new master; heal the entire VNF (omit "
                                  "vnfcInstanceId), or scale the workers once to capture them first")
    if store is None or not store.list(instance.id):
        raise UnprocessableEntity(f"healing the single control plane {label} restores the cluster from an etcd "
                                  f"snapshot, and the VNFM holds none of this cluster: {WHAT_TO_DO}")


# ------------------------------------------------------------------ heal_start: the plan
async def _take_now(c: Cluster, m: Node) -> dict[str, Any] | None:
    """A snapshot taken on the master now, copied into the VNFM's store; None when it or its etcd does
    not answer (etcd's health checked first, with a short deadline)."""
    name = f"heal-{c.ctx.op_id}.db"
    path = f"{SNAPSHOT_DIR}/{name}"
    try:
        await pin(c, [m])
        probe = EtcdHealth(endpoints=etcd.ETCD_ENDPOINTS, tls=etcd.ETCD_TLS, wait_s=10)
        if not (await c.ex.run(m.ssh, probe)).data.get("healthy"):  # a save would wait for its timeout
            raise StepFailed(m.ssh, probe, "its etcd is not healthy")
        saved = (await c.ex.run(m.ssh, EtcdSnapshotSave(endpoints=etcd.ETCD_ENDPOINTS, tls=etcd.ETCD_TLS,
                                                        path=path))).data
        sha = str(saved["sha256"])
        raw = base64.b64decode((await c.ex.run(m.ssh, EtcdSnapshotFetch(path, sha))).data["content"])
        await capture_pki(c, m)
    except StepFailed as e:
        c.ctx.progress(f"no etcd snapshot can be taken on the control plane {m.name} now ({e}): restoring from "
                       "the newest snapshot the VNFM holds")
        return None
    if hashlib.sha256(raw).hexdigest() != sha or c.ctx.snapshots is None:
        raise OperationFailed("the etcd snapshot taken now could not be copied into the VNFM's store")
    c.ctx.snapshots.put(c.ctx.instance.id, name, raw)
    return {"name": name, "sha256": sha, "at": time.time(), "source": f"taken now on {m.name}"}


def _newest_held(c: Cluster) -> dict[str, Any] | None:
    store = c.ctx.snapshots
    for o in reversed(store.list(c.ctx.instance.id) if store is not None else []):  # newest first
        raw = store.get(c.ctx.instance.id, o["name"]) if store is not None else None
        if raw:
            return {"name": o["name"], "sha256": hashlib.sha256(raw).hexdigest(), "at": float(o["at"]),
                    "source": "the newest the VNFM holds"}
    return None


async def before(c: Cluster) -> None:
    ctx = c.ctx
    m = c.masters[0]
    plan = ctx.state.get("restore") or {}
    if plan.get("op_id") != ctx.op_id:
        snap = await _take_now(c, m) or _newest_held(c)
        if snap is None:
            raise OperationFailed(f"no etcd snapshot of this cluster to restore {m.name} from: {WHAT_TO_DO}")
        if held_pki(ctx.state) is None:
            raise OperationFailed("the VNFM holds no copy of the cluster's certificate authorities: "
                                  "heal the entire VNF")
        plan = {"op_id": ctx.op_id, **snap, "old_name": m.name, "old_nic": m.nic}
        ctx.state["restore"] = plan
    line = (f"restoring the single control plane {m.name} from etcd snapshot {plan['name']} ({plan['source']}, "
            f"sha256 {plan['sha256'][:12]}): {window(plan['at'])}")
    ctx.progress(line)
    log.warning("VNF instance %s: %s", ctx.instance.id, line, extra={"vnf_instance_id": ctx.instance.id})


# ------------------------------------------------------------------ heal_end: the restore
async def after(c: Cluster) -> None:
    ctx = c.ctx
    plan = ctx.state.get("restore") or {}
    if plan.get("op_id") != ctx.op_id:
        raise OperationFailed("no restore plan for this heal (heal_start did not record one)")
    m = c.masters[0]
    raw = ctx.snapshots.get(ctx.instance.id, plan["name"]) if ctx.snapshots is not None else None
    if raw is None or hashlib.sha256(raw).hexdigest() != plan["sha256"]:
        raise OperationFailed(f"the VNFM's copy of etcd snapshot {plan['name']} is gone or changed")
    pki = held_pki(ctx.state)
    if pki is None:
        raise OperationFailed("the VNFM holds no copy of the cluster's certificate authorities")
    await pin(c, c.nodes, repin=[m])
    cp_endpoint, api_url = await endpoint.endpoint(c)
    await prepare(c, [m])
    await nodes.hosts(c, c.nodes)
    await registries.connect(c, [m])
    await storage.nfs_clients(c, [m])
    path = f"{RESTORE_DIR}/{plan['name']}"
    host = f"[{m.nic}]" if ":" in m.nic else m.nic
    await c.ex.run(m.ssh, PkiPut(pki))
    await c.ex.run(m.ssh, EtcdSnapshotPut(path, plan["sha256"], base64.b64encode(raw).decode()))
    await c.ex.run(m.ssh, EtcdRestoreMember(path, plan["sha256"], m.name, f"https://{host}:2380",
                                                c.p.kubernetes_version))
    await c.ex.run(m.ssh, KubeadmInit(m.name, m.nic, cp_endpoint, c.p.master.pod_cidr, c.p.master.cluster_cidr,
                                      c.p.kubernetes_version, cert_sans(c, cp_endpoint, api_url),
                                      existing_etcd=True))
    await c.ex.run(m.ssh, WaitNodeReady(m.name, c.p.node_ready_timeout))
    ctx.progress(f"control plane {m.name} restored from {plan['name']} and Ready")
    if plan["old_name"] != m.name:
        await c.ex.run(m.ssh, DeleteNode(plan["old_name"]))
    await repoint_workers(c, m, cp_endpoint)
    await etcd.check_members(c, m, [m])
    await vim.register(c, m, api_url)  # the PKI copy is read again by heal_end afterwards


async def repoint_workers(c: Cluster, m: Node, cp_endpoint: str) -> None:
    """Every worker's kubelet at the new API server (in parallel), then each Ready through it."""
    workers = c.workers
    await gather([c.ex.run(w.ssh, KubeletServer(cp_endpoint)) for w in workers])
    await gather([c.ex.run(m.ssh, WaitNodeReady(w.name, c.p.node_ready_timeout)) for w in workers])
    if workers:
        c.ctx.progress(f"{len(workers)} worker(s) kept and Ready against the restored API server: "
                       f"{', '.join(w.name for w in workers)}")
