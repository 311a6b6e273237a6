"""Upgrade steps on the twin: per-host Kubernetes packages, control-plane (static pod) versions,
kubelet versions (the node records'), and a simulated etcd whose content is the cluster's API
state (the objects the simulated Kubernetes API serves, pods, PDBs, PVs, service accounts): a
snapshot carries exactly that content and a restore puts it back.

As strict as the real programs where it matters: kubeadm must be at the target version before
`upgrade apply` / `upgrade node`; `upgrade apply` goes one minor at a time; `upgrade node` needs
the cluster's configuration (`upgrade apply`) at its version first; a kubelet may not become newer
than the API server; a restore needs the snapshot file on the host with its digest.
Fault: `faults.upgrade_fails` (node names) fails kubeadm's upgrade on those nodes.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import json
import time
from typing import Any

from vnfm.adapters.infra.simulator.twin import etcd_tls
from vnfm.adapters.infra.simulator.twin.base import TwinHost, empty, kubelet_trusts, node_on
from vnfm.domain.k8s_versions import K8sVersion, skew_problem
from vnfm.nodesteps.base import NodeStep, StepFailed, StepResult
from vnfm.nodesteps.upgrade import (
    PACKAGES,
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

# what the cluster's etcd holds, in the twin's state
ETCD_CONTENT = ("api", "pods", "pdbs", "pvs", "service_accounts")


def etcd_content(st: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(st[k]) for k in ETCD_CONTENT if st.get(k) is not None}


def etcd_keys(st: dict[str, Any]) -> dict[str, str]:
    """The simulated etcd's keys (`/registry/<kind>/<name>`) and a digest of each value."""
    out: dict[str, str] = {}
    content = etcd_content(st)
    for plural, objs in ((content.get("api") or {}).get("objects") or {}).items():
        for key, obj in objs.items():
            out[f"/registry/{plural}/{key}"] = _digest(obj)
    for kind in ("pods", "pdbs", "pvs", "service_accounts"):
        for key, obj in (content.get(kind) or {}).items():
            out[f"/registry/{kind}/{key}"] = _digest(obj)
    return out


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def _blob(content: dict[str, Any]) -> bytes:
    return json.dumps(content, sort_keys=True, default=str).encode()


def _host(st: dict[str, Any], sid: str) -> dict[str, Any]:
    h: dict[str, Any] = st["hosts"].setdefault(sid, {})
    return h


def _master(host: str, sid: str, step: NodeStep, st: dict[str, Any]) -> dict[str, Any]:
    n = node_on(st, sid, "master")
    if n is None:
        raise StepFailed(host, step, "this host is not a control plane of the cluster")
    return n


def _failing(host: str, step: NodeStep, st: dict[str, Any], node: str) -> None:
    if node in (st["faults"].get("upgrade_fails") or []):
        raise StepFailed(host, step, f"[fault] kubeadm upgrade failed on {node}")


def packages_of(st: dict[str, Any], sid: str) -> dict[str, str]:
    h = _host(st, sid)
    if "packages" not in h:
        version = (h.get("prepared") or {}).get("version")
        h["packages"] = {p: version for p in PACKAGES} if version else {}
    return dict(h["packages"])


# ------------------------------------------------------------------ etcd
def snapshot_save(tw: TwinHost, host: str, sid: str, step: EtcdSnapshotSave) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        etcd_tls.check(host, step, st, sid, _master(host, sid, step, st)["name"], step.tls)
        if not all(m["healthy"] for m in st["etcd"]["members"].values()):
            raise StepFailed(host, step, "etcd is not healthy")
        snaps = _host(st, sid).setdefault("snapshots", {})
        if step.path in snaps:
            s = snaps[step.path]
            return False, {"sha256": s["sha256"], "size": s["size"], "keys": len(etcd_keys(s["content"]))}
        content = etcd_content(st)
        blob = _blob(content)
        snaps[step.path] = {"sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob), "content": content,
                            "at": time.time()}
        here = step.path.rsplit("/", 1)[0]  # bounded per directory, as the script's `find "$dir"`
        for old in sorted((p for p in snaps if p.rsplit("/", 1)[0] == here), key=lambda p: snaps[p]["at"])[:-step.keep]:
            del snaps[old]
        s = snaps[step.path]
        return True, {"sha256": s["sha256"], "size": s["size"], "keys": len(etcd_keys(content))}

    changed, data = tw.tx(fn)
    return StepResult(changed, data)


def snapshot_fetch(tw: TwinHost, host: str, sid: str, step: EtcdSnapshotFetch) -> StepResult:
    def fn(st: dict[str, Any]) -> dict[str, Any]:
        s = (_host(st, sid).get("snapshots") or {}).get(step.path)
        if s is None:
            raise StepFailed(host, step, f"no snapshot at {step.path}")
        if s["sha256"] != step.sha256:
            raise StepFailed(host, step, f"the snapshot at {step.path} is not the one expected (digest differs)")
        if s["size"] > step.max_bytes:
            raise StepFailed(host, step, f"the snapshot is {s['size']} bytes, more than the {step.max_bytes} allowed")
        return dict(s["content"])

    content = tw.tx(fn)
    return StepResult(False, {"content": base64.b64encode(_blob(content)).decode(), "sha256": step.sha256})


def snapshot_put(tw: TwinHost, host: str, sid: str, step: EtcdSnapshotPut) -> StepResult:
    try:
        content = json.loads(base64.b64decode(step.content))
    except ValueError:  # a corrupt file: put as it is, refused by a restore (etcdutl's hash check)
        content = None

    def fn(st: dict[str, Any]) -> bool:
        snaps = _host(st, sid).setdefault("snapshots", {})
        if (snaps.get(step.path) or {}).get("sha256") == step.sha256:
            return False
        snaps[step.path] = {"sha256": step.sha256, "size": len(base64.b64decode(step.content)),
                            "content": content, "at": time.time()}
        return True

    return StepResult(tw.tx(fn))


def snapshot_restore(tw: TwinHost, host: str, sid: str, step: EtcdSnapshotRestore) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        _master(host, sid, step, st)
        h = _host(st, sid)
        s = (h.get("snapshots") or {}).get(step.path)
        if s is None or s["sha256"] != step.sha256:
            raise StepFailed(host, step, f"no snapshot with that digest at {step.path}")
        if s.get("content") is None:
            raise StepFailed(host, step, "Error: snapshot file integrity check failed (the snapshot is corrupt)")
        members = st["etcd"]["members"]
        if {(m["name"], m["peer_url"]) for m in members.values()} != set(step.initial_cluster):
            raise StepFailed(host, step, "initial_cluster is not the cluster's members")
        if h.get("etcd_restored") == step.marker:
            return False
        h["etcd_restored"] = step.marker
        for k in ETCD_CONTENT:  # the members restore the same snapshot: one content
            if k in s["content"]:
                st[k] = copy.deepcopy(s["content"][k])
            else:
                st.pop(k, None)
        for k, v in empty().items():
            st.setdefault(k, v)
        return True

    return StepResult(tw.tx(fn))


# ------------------------------------------------------------------ packages and kubeadm
def packages(tw: TwinHost, host: str, sid: str, step: K8sPackages) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        have = packages_of(st, sid)
        if not have:
            raise StepFailed(host, step, "node is not prepared (no Kubernetes packages)")
        if all(have.get(p) == step.version for p in step.packages):
            return False
        api = (st["cluster"] or {}).get("version")
        if "kubelet" in step.packages and api and (why := skew_problem(api, step.version)):
            raise StepFailed(host, step, f"refused: {why}")
        h = _host(st, sid)
        h["packages"] = {**have, **{p: step.version for p in step.packages}}
        node = next((n for n in st["nodes"].values() if n.get("server_id") == sid), None)
        if "kubelet" in step.packages and node is not None and node.get("version") != step.version:
            node["version"] = step.version  # kubelet restarted: Ready again after the usual delay
            node["ready"] = False
            node["ready_at"] = time.time() + tw.config.ready_delay
        return True

    return StepResult(tw.tx(fn))


def _kubeadm_at(host: str, sid: str, step: NodeStep, st: dict[str, Any], version: str) -> None:
    have = packages_of(st, sid).get("kubeadm")
    if have != version:
        raise StepFailed(host, step, f"kubeadm is {have}, not {version}: install it first")


async def _restart_window(tw: TwinHost, sid: str) -> None:
    """The control plane's static pods restart: its API server does not answer for a moment."""
    def mark(down: bool) -> None:
        def fn(st: dict[str, Any]) -> None:
            _host(st, sid)["apiserver_down"] = down

        tw.tx(fn)

    mark(True)
    try:
        await asyncio.sleep(tw.config.step_latency.get("apiserver-restart", tw.config.poll))
    finally:
        mark(False)


async def upgrade_apply(tw: TwinHost, host: str, sid: str, step: KubeadmUpgradeApply) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        _master(host, sid, step, st)
        h, c = _host(st, sid), st["cluster"]
        if h.get("control_plane", c.get("version")) == step.version and c.get("version") == step.version:
            return False
        _kubeadm_at(host, sid, step, st, step.version)
        _failing(host, step, st, step.node)
        cur, new = K8sVersion.parse(c["version"]), K8sVersion.parse(step.version)
        if new < cur or new.minors_after(cur) > 1:
            raise StepFailed(host, step, f"[upgrade/version] FATAL: the cluster runs {cur}: specified version to "
                                         f"upgrade to {new} is not supported (one minor version up at most)")
        h["control_plane_backup"] = h.get("control_plane", c["version"])
        return True

    if not tw.tx(fn):
        return StepResult(False)
    await _restart_window(tw, sid)

    def done(st: dict[str, Any]) -> None:
        _host(st, sid)["control_plane"] = step.version
        st["cluster"]["version"] = step.version

    tw.tx(done)
    return StepResult(True)


async def upgrade_node(tw: TwinHost, host: str, sid: str, step: KubeadmUpgradeNode) -> StepResult:
    key = "control_plane" if step.control_plane else "kubelet_config"

    def fn(st: dict[str, Any]) -> bool:
        if step.control_plane:
            _master(host, sid, step, st)
        h, c = _host(st, sid), st["cluster"]
        if h.get(key, c.get("version") if step.control_plane else None) == step.version:
            return False
        _kubeadm_at(host, sid, step, st, step.version)
        if c.get("version") != step.version:
            raise StepFailed(host, step, f"the cluster's configuration is for {c.get('version')}, not "
                                         f"{step.version}: run upgrade apply first")
        _failing(host, step, st, step.node)
        if step.control_plane:
            h["control_plane_backup"] = h.get("control_plane", h.get("control_plane_backup"))
        return True

    if not tw.tx(fn):
        return StepResult(False)
    if step.control_plane:
        await _restart_window(tw, sid)

    def done(st: dict[str, Any]) -> None:
        _host(st, sid)[key] = step.version

    tw.tx(done)
    return StepResult(True)


def revert_control_plane(tw: TwinHost, host: str, sid: str, step: KubeadmRevertControlPlane) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        _master(host, sid, step, st)
        h, c = _host(st, sid), st["cluster"]
        if h.get("control_plane", c.get("version")) == step.version:
            return False
        if h.get("control_plane_backup") != step.version:
            raise StepFailed(host, step, f"no backup of the {step.version} control-plane manifests on this host")
        h["control_plane"] = step.version
        c["version"] = step.version
        return True

    return StepResult(tw.tx(fn))


async def at_version(tw: TwinHost, host: str, sid: str, step: NodeAtVersion) -> StepResult:
    deadline = time.monotonic() + step.deadline_s
    while True:
        def fn(st: dict[str, Any]) -> tuple[bool, str]:
            n = st["nodes"].get(step.node)
            if n is None:
                return False, "it is not registered"
            if not n["ready"] and time.time() >= n["ready_at"] and kubelet_trusts(st, n) \
                    and step.node not in (st["faults"].get("never_ready") or []):
                n["ready"] = True
            seen = n.get("version") or st["cluster"].get("version")
            if n["ready"] and seen == step.version:
                return True, ""
            return False, f"it is {'Ready' if n['ready'] else 'NotReady'} at {seen}"

        ok, why = tw.tx(fn)
        if ok:
            return StepResult(False)
        if time.monotonic() >= deadline:
            raise StepFailed(host, step, f"node {step.node} is not Ready at {step.version} within "
                                         f"{step.deadline_s:g}s: {why}")
        await asyncio.sleep(tw.config.poll)


def api_reachable(st: dict[str, Any]) -> bool:
    """Whether some control plane's API server answers (what a client through the VIP / LB sees)."""
    for n in st["nodes"].values():
        if n["role"] == "master" and not (st["hosts"].get(n["server_id"]) or {}).get("apiserver_down"):
            return True
    return False


HANDLERS: dict[type, Any] = {
    EtcdSnapshotSave: snapshot_save,
    EtcdSnapshotFetch: snapshot_fetch,
    EtcdSnapshotPut: snapshot_put,
    EtcdSnapshotRestore: snapshot_restore,
    K8sPackages: packages,
    KubeadmUpgradeApply: upgrade_apply,
    KubeadmUpgradeNode: upgrade_node,
    KubeadmRevertControlPlane: revert_control_plane,
    NodeAtVersion: at_version,
}
