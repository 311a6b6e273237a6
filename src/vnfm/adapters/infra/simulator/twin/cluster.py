"""Kubernetes on the twin: prepare, init, join, readiness, drain (PDBs respected), delete, label, VIM token."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.budgets import blocking_budget
from vnfm.adapters.infra.simulator.twin import etcd
from vnfm.adapters.infra.simulator.twin.base import TwinHost, fake_ca, kubelet_trusts, node_on, sha
from vnfm.adapters.infra.simulator.twin.certs import issue, require_admin
from vnfm.adapters.infra.simulator.twin.etcd import add_member, new_member
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.certs import KUBEADM
from vnfm.nodesteps.etcd import EtcdMemberPromote
from vnfm.nodesteps.kubeadm import JoinInfo, KubeadmInit, KubeadmJoin, PrepareNode, joins_etcd_as_learner
from vnfm.nodesteps.kubernetes import DeleteNode, DrainNode, LabelNode, UncordonNode, VimToken, WaitNodeReady
from vnfm.nodesteps.upgrade import PACKAGES

PROMOTE_DEADLINE_S = 120.0  # kubeadm retries the learner's promotion for about two minutes


def prepare(tw: TwinHost, host: str, sid: str, step: PrepareNode) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        want = {"version": step.version, "hostname": step.node, "proxy": bool(step.http_proxy or step.https_proxy)}
        if h.get("prepared") == want:
            return False
        h["prepared"] = want
        h["packages"] = {p: step.version for p in PACKAGES}
        return True

    return StepResult(tw.tx(fn))


def init(tw: TwinHost, host: str, sid: str, step: KubeadmInit) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        if not st["hosts"].get(sid, {}).get("prepared"):
            raise StepFailed(host, step, "node is not prepared (containerd/kubeadm missing)")
        c = st["cluster"]
        node = st["nodes"].get(step.node)
        if c.get("initialized") and node is not None and node.get("server_id") == sid:
            return False
        if c.get("initialized") and st["nodes"]:
            raise StepFailed(host, step, "a cluster already exists; join it instead")
        ca, ca_hash = fake_ca()
        st["cluster"] = {"initialized": True, "endpoint": step.control_plane_endpoint, "ca_pem": ca,
                         "ca_cert_hash": ca_hash, "pod_cidr": step.pod_cidr,
                         "service_cidr": step.service_cidr, "version": step.version,
                         "cert_sans": list(step.cert_sans), "token_sha256": [], "cert_key_sha256": []}
        st["nodes"] = {}
        st["etcd"] = {"members": {}}
        register(tw, st, sid, step.node, "master", step.advertise_address, ready_now=True, first=True)
        return True

    return StepResult(tw.tx(fn))


def register(tw: TwinHost, st: dict[str, Any], sid: str, name: str, role: str, addr: str, *, ready_now: bool,
             first: bool = False, layout: str = KUBEADM, etcd_member: bool = True) -> None:
    """`first`: the kubeadm init host; `layout`: where the control plane's certificates are;
    `etcd_member`: add the master's etcd member as a voter here (a join adds it itself)."""
    now = time.time()
    host = st["hosts"].setdefault(sid, {})
    kubelet = (host.get("packages") or {}).get("kubelet") or (host.get("prepared") or {}).get("version")
    st["nodes"][name] = {"version": kubelet, "name": name, "role": role, "server_id": sid, "addresses": [addr],
                         "labels": {"kubernetes.io/hostname": name,
                                    **({"node-role.kubernetes.io/control-plane": ""} if role == "master" else {})},
                         "cordoned": False, "ready": False,
                         "ready_at": now + (0.0 if ready_now else tw.config.ready_delay)}
    if role == "master":
        host["control_plane"] = st["cluster"].get("version")
        if etcd_member:
            st["etcd"]["members"][name] = new_member(name, f"https://{addr}:2380", learner=False)
        issue(tw, st, sid, name, layout, first=first)
    host["kubelet"] = name
    host["trusts_ca"] = st["cluster"].get("ca_cert_hash")  # the CA its kubelet was given (join / init)


def join_info(tw: TwinHost, host: str, sid: str, step: JoinInfo) -> StepResult:
    token = f"{secrets.token_hex(3)}.{secrets.token_hex(8)}"
    cert_key = secrets.token_hex(32)

    def fn(st: dict[str, Any]) -> dict[str, Any]:
        c = st["cluster"]
        if not c.get("initialized") or node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "this host is not a control plane of an initialised cluster")
        require_admin(tw, st, host, sid, step)
        # like kubeadm, every token created stays valid (until its TTL): parallel joins may use any
        c["token_sha256"] = [*(c.get("token_sha256") or [])[-31:], sha(token)]
        c["cert_key_sha256"] = [*(c.get("cert_key_sha256") or [])[-31:], sha(cert_key)]
        return {"endpoint": c["endpoint"], "ca_cert_hash": c["ca_cert_hash"]}

    data = tw.tx(fn)
    return StepResult(False, {**data, "token": token, "certificate_key": cert_key})


async def join(tw: TwinHost, host: str, sid: str, step: KubeadmJoin) -> StepResult:
    """kubeadm join; a control plane's etcd member joins as a learner from 1.29 (EtcdLearnerMode)
    and kubeadm promotes it once in sync (retrying, as kubeadm does, up to its deadline)."""
    learner = False

    def fn(st: dict[str, Any]) -> bool:
        nonlocal learner
        if not st["hosts"].get(sid, {}).get("prepared"):
            raise StepFailed(host, step, "node is not prepared (containerd/kubeadm missing)")
        c = st["cluster"]
        existing = st["nodes"].get(step.node)
        if existing is not None and existing.get("server_id") == sid:
            return False
        if not c.get("initialized") or c.get("endpoint") != step.endpoint:
            raise StepFailed(host, step, f"no API server answers at {step.endpoint}")
        if sha(step.token) not in (c.get("token_sha256") or []) or c.get("ca_cert_hash") != step.ca_cert_hash:
            raise StepFailed(host, step, "the bootstrap token or CA hash was rejected")
        if step.control_plane:
            if sha(step.certificate_key or "") not in (c.get("cert_key_sha256") or []):
                raise StepFailed(host, step, "the certificate key was rejected")
            masters = [m for m in st["etcd"]["members"].values()]
            if masters and not all(m["healthy"] for m in masters):
                raise StepFailed(host, step, "etcd is not healthy: cannot add a member")
            # a stale member of the same name (healed VM) blocks kubeadm's etcd join
            if step.node in st["etcd"]["members"]:
                raise StepFailed(host, step, f"etcd already has a member named {step.node}")
        if existing is not None:
            raise StepFailed(host, step, f"a node named {step.node} already exists; delete it first")
        if step.control_plane:
            learner = joins_etcd_as_learner(str(c.get("version") or ""))
            add_member(tw, host, step, st, step.node, f"https://{step.advertise_address}:2380", learner)
        register(tw, st, sid, step.node, "master" if step.control_plane else "worker",
                 step.advertise_address, ready_now=False, etcd_member=False)
        st["hosts"][sid]["kubelet_server"] = step.endpoint  # /etc/kubernetes/kubelet.conf's server
        return True

    changed = tw.tx(fn)
    if learner:
        await etcd.etcd_promote(tw, host, sid, EtcdMemberPromote(name=step.node, deadline_s=PROMOTE_DEADLINE_S))
    return StepResult(changed)


async def wait_ready(tw: TwinHost, host: str, sid: str, step: WaitNodeReady) -> StepResult:
    deadline = time.monotonic() + step.deadline_s
    while True:
        def fn(st: dict[str, Any]) -> tuple[bool, bool]:
            require_admin(tw, st, host, sid, step)
            n = st["nodes"].get(step.node)
            if n is None:
                return False, False
            if n["ready"]:
                return True, False
            never = step.node in (st["faults"].get("never_ready") or []) or not kubelet_trusts(st, n)
            if not never and time.time() >= n["ready_at"]:
                n["ready"] = True
                return True, True
            return False, False

        ready, changed = tw.tx(fn)
        if ready:
            return StepResult(changed)
        if time.monotonic() >= deadline:
            node = tw.state()["nodes"].get(step.node)
            why = "it is not registered" if node is None else "its kubelet reports NotReady"
            raise StepFailed(host, step, f"node {step.node} did not become Ready within "
                                         f"{step.deadline_s:g}s: {why}")
        await asyncio.sleep(tw.config.poll)


async def drain(tw: TwinHost, host: str, sid: str, step: DrainNode) -> StepResult:
    deadline = time.monotonic() + step.deadline_s
    changed = False
    while True:
        def fn(st: dict[str, Any]) -> tuple[bool, list[str]]:
            require_admin(tw, st, host, sid, step)
            n = st["nodes"].get(step.node)
            if n is None:
                return False, []
            moved = False
            if not n["cordoned"]:
                n["cordoned"] = True
                moved = True
            blocking: list[str] = []
            for key, pod in sorted(st["pods"].items()):
                if pod["node"] != step.node or pod["daemonset"] or pod["mirror"]:
                    continue
                pdb = blocking_pdb(st, pod)
                if pdb is not None:
                    blocking.append(f"{key} (PodDisruptionBudget {pdb})")
                    continue
                targets = sorted(x["name"] for x in st["nodes"].values()
                                 if x["name"] != step.node and x["ready"] and not x["cordoned"]
                                 and x["role"] == "worker")
                pod["node"] = targets[hash(key) % len(targets)] if targets else None
                moved = True
            return moved, blocking

        moved, blocking = tw.tx(fn)
        changed = changed or moved
        if not blocking:
            return StepResult(changed)
        if time.monotonic() >= deadline:
            raise StepFailed(host, step, f"drain of {step.node} did not finish within {step.deadline_s:g}s; "
                                         f"blocking pods: {', '.join(blocking)}")
        await asyncio.sleep(tw.config.poll)


def blocking_pdb(st: dict[str, Any], pod: dict[str, Any]) -> str | None:
    for name, pdb in sorted(st["pdbs"].items()):
        sel = pdb["selector"]
        if sel and all(pod["labels"].get(k) == v for k, v in sel.items()):
            matching = [p for p in st["pods"].values()
                        if all(p["labels"].get(k) == v for k, v in sel.items())]
            unavailable = sum(1 for p in matching if p["node"] is None)
            if unavailable + 1 > int(pdb.get("max_unavailable", 0)):
                return str(name)
    api = blocking_budget(st, pod) if pod.get("namespace") else None  # budgets created through the API
    return api[0] if api else None


def uncordon(tw: TwinHost, host: str, sid: str, step: UncordonNode) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        require_admin(tw, st, host, sid, step)
        n = st["nodes"].get(step.node)
        if n is None:
            raise StepFailed(host, step, f"node {step.node} is not in the cluster (already removed)")
        if not n["cordoned"]:
            return False
        n["cordoned"] = False
        return True

    return StepResult(tw.tx(fn))


def delete(tw: TwinHost, host: str, sid: str, step: DeleteNode) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        require_admin(tw, st, host, sid, step)
        if st["nodes"].pop(step.node, None) is None:
            return False
        for pod in st["pods"].values():
            if pod["node"] == step.node:
                pod["node"] = None
        return True

    return StepResult(tw.tx(fn))


def label(tw: TwinHost, host: str, sid: str, step: LabelNode) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        require_admin(tw, st, host, sid, step)
        n = st["nodes"].get(step.node)
        if n is None:
            raise StepFailed(host, step, f"node {step.node} not found")
        want = dict(step.labels)
        if all(n["labels"].get(k) == v for k, v in want.items()):
            return False
        n["labels"].update(want)
        return True

    return StepResult(tw.tx(fn))


def vim_token(tw: TwinHost, host: str, sid: str, step: VimToken) -> StepResult:
    token = secrets.token_urlsafe(32)

    def fn(st: dict[str, Any]) -> str:
        if node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "this host is not a control plane")
        require_admin(tw, st, host, sid, step)
        st["service_accounts"][f"{step.namespace}/{step.service_account}"] = {"token_sha256": sha(token)}
        return str(st["cluster"]["ca_pem"])

    ca = tw.tx(fn)
    if tw.config.kube_api is None:  # no API listener (a bare executor): the twin's own endpoint and CA
        return StepResult(True, {"token": token, "ca_pem": ca})
    # The VNFM reaches this cluster's API at the simulator's listener, verified against its CA
    # (the cluster driver registers whatever URL and CA the node session reports).
    api = tw.config.kube_api.endpoint(tw.sim, tw.instance_id)
    return StepResult(True, {"token": token, "ca_pem": api.ca_pem, "api_url": api.url})


HANDLERS: dict[type, Any] = {
    PrepareNode: prepare,
    KubeadmInit: init,
    JoinInfo: join_info,
    KubeadmJoin: join,
    WaitNodeReady: wait_ready,
    DrainNode: drain,
    DeleteNode: delete,
    UncordonNode: uncordon,
    LabelNode: label,
    VimToken: vim_token,
}
