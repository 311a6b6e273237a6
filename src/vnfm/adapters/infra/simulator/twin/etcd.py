"""etcd membership on the twin (the members of the kubeadm stacked etcd, or of Kubespray's etcd
on the masters), asked with the client certificates of the host's layout, and as strict as etcd's
own reconfiguration rules: a learner has no vote and answers no health check; one learner at a
time ("too many learner members in cluster"); a learner is promoted only once in sync with the
leader ("can only promote a learner member which is in sync with leader"); adding a voter or
removing one is refused when the healthy voters left would not be a quorum ("unhealthy cluster").
The quorum arithmetic is the domain's (domain/etcd_quorum.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on, sha
from vnfm.domain.etcd_quorum import quorum
from vnfm.nodesteps.base import NodeStep, StepFailed, StepResult
from vnfm.nodesteps.certs import KUBEADM, KUBESPRAY
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberAdd, EtcdMemberList, EtcdMemberPromote, EtcdMemberRemove

NOT_IN_SYNC = "etcdserver: can only promote a learner member which is in sync with leader"

# Where each layout keeps the etcd client certificates (nodesteps/certs.py): kubeadm's stacked etcd
# PKI; Kubespray's own (etcd_deployment_type host: /etc/ssl/etcd/ssl, its /etc/kubernetes/pki is a
# link to /etc/kubernetes/ssl, which has no etcd directory).
ETCD_TLS_DIRS = {KUBEADM: "/etc/kubernetes/pki/", KUBESPRAY: "/etc/ssl/etcd/ssl/"}


def etcd_quorum(tw: TwinHost, host: str, sid: str, step: NodeStep, st: dict[str, Any]) -> None:
    if node_on(st, sid, "master") is None:
        raise StepFailed(host, step, "no etcd member runs on this host")
    layout = (((st["hosts"].get(sid) or {}).get("certs")) or {}).get("layout")
    tls = getattr(step, "tls", None)
    if tls is not None and layout in ETCD_TLS_DIRS:  # as etcdctl would: the files must exist here
        for path in (tls.cacert, tls.cert, tls.key):
            if not path.startswith(ETCD_TLS_DIRS[layout]):
                raise StepFailed(host, step, f"open {path}: no such file or directory (a {layout} control plane)")


def voters(members: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in members.values() if not m.get("learner")]


def healthy_voters(members: dict[str, Any]) -> int:
    return sum(1 for m in voters(members) if m["healthy"])


def record(st: dict[str, Any], change: str) -> None:
    """The membership after each change (voters, healthy voters, learners): lets a test check the
    quorum at every step, not only at the end."""
    members = st["etcd"]["members"]
    st["etcd"].setdefault("history", []).append(
        {"change": change, "voters": len(voters(members)), "healthy": healthy_voters(members),
         "learners": sum(1 for m in members.values() if m.get("learner"))})


def new_member(name: str, peer_url: str, *, learner: bool, synced_at: float = 0.0) -> dict[str, Any]:
    """A member record: a learner is in sync with the leader from `synced_at` (twin clock)."""
    return {"name": name, "peer_url": peer_url, "healthy": True, "learner": learner, "synced_at": synced_at}


def add_member(tw: TwinHost, host: str, step: NodeStep, st: dict[str, Any], name: str, peer_url: str,
               learner: bool) -> None:
    members = st["etcd"]["members"]
    if learner and any(m.get("learner") for m in members.values()):
        raise StepFailed(host, step, "etcdserver: too many learner members in cluster")
    need = quorum(len(voters(members)) + (0 if learner else 1))
    if healthy_voters(members) < need:
        raise StepFailed(host, step, "etcdserver: unhealthy cluster (adding the member would leave "
                                     f"{healthy_voters(members)} healthy voters, quorum {need})")
    members[name] = new_member(name, peer_url, learner=learner,
                               synced_at=tw.config.clock() + tw.config.learner_sync_time if learner else 0.0)
    record(st, f"add {'learner' if learner else 'voter'} {name}")


def promote_member(tw: TwinHost, host: str, step: NodeStep, st: dict[str, Any], name: str) -> bool:
    """Promote learner `name`; False when it already votes. StepFailed(NOT_IN_SYNC) before it caught up."""
    m = st["etcd"]["members"].get(name)
    if m is None:
        raise StepFailed(host, step, f"etcdserver: member {name} not found")
    if not m.get("learner"):
        return False
    if not m["healthy"] or tw.config.clock() < float(m.get("synced_at") or 0.0):
        raise StepFailed(host, step, NOT_IN_SYNC)
    m["learner"] = False
    record(st, f"promote {name}")
    return True


def etcd_list(tw: TwinHost, host: str, sid: str, step: EtcdMemberList) -> StepResult:
    def fn(st: dict[str, Any]) -> list[dict[str, Any]]:
        etcd_quorum(tw, host, sid, step, st)
        return [{"id": sha(m["name"])[:16], "name": m["name"], "peer_urls": [m["peer_url"]],
                 "client_urls": [m["peer_url"].replace(":2380", ":2379")], "learner": bool(m.get("learner"))}
                for m in sorted(st["etcd"]["members"].values(), key=lambda m: m["name"])]

    return StepResult(False, {"members": tw.tx(fn)})


def etcd_remove(tw: TwinHost, host: str, sid: str, step: EtcdMemberRemove) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, str]:
        etcd_quorum(tw, host, sid, step, st)
        members = st["etcd"]["members"]
        gone = [k for k, m in members.items()
                if m["name"] == step.name or (step.peer_url and m["peer_url"] == step.peer_url)]
        left = {k: m for k, m in members.items() if k not in gone}
        if any(not members[k].get("learner") for k in gone) and healthy_voters(left) < quorum(len(voters(left))):
            raise StepFailed(host, step, f"member remove {step.name} still refused after {step.deadline_s:g}s: "
                                         "etcdserver: unhealthy cluster")
        for k in gone:
            del members[k]
            record(st, f"remove {k}")
        return (bool(gone), ",".join(sha(k)[:16] for k in gone))

    changed, mid = tw.tx(fn)
    return StepResult(changed, {"id": mid})


def etcd_add(tw: TwinHost, host: str, sid: str, step: EtcdMemberAdd) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, list[tuple[str, str]]]:
        etcd_quorum(tw, host, sid, step, st)
        members = st["etcd"]["members"]
        changed = not any(m["peer_url"] == step.peer_url for m in members.values())
        if changed:
            add_member(tw, host, step, st, step.name, step.peer_url, step.learner)
        return changed, [(m["name"], m["peer_url"]) for m in members.values()]

    changed, pairs = tw.tx(fn)
    return StepResult(changed, {"initial_cluster": ",".join(f"{n}={u}" for n, u in pairs), "members": pairs})


async def etcd_promote(tw: TwinHost, host: str, sid: str, step: EtcdMemberPromote) -> StepResult:
    deadline = time.monotonic() + step.deadline_s
    while True:
        def fn(st: dict[str, Any]) -> bool:
            etcd_quorum(tw, host, sid, step, st)
            return promote_member(tw, host, step, st, step.name)

        try:
            changed = tw.tx(fn)
            return StepResult(changed, {"id": sha(step.name)[:16]})
        except StepFailed as e:
            if NOT_IN_SYNC not in str(e):
                raise
            if time.monotonic() >= deadline:
                raise StepFailed(host, step, f"member promote {step.name}: {NOT_IN_SYNC} "
                                             f"(still after {step.deadline_s:g}s)") from None
        await asyncio.sleep(tw.config.poll)


def etcd_health(tw: TwinHost, host: str, sid: str, step: EtcdHealth) -> StepResult:
    def fn(st: dict[str, Any]) -> dict[str, bool]:
        etcd_quorum(tw, host, sid, step, st)
        return {m["peer_url"].replace(":2380", ":2379"): bool(m["healthy"]) and not m.get("learner")
                for m in st["etcd"]["members"].values()}

    per = tw.tx(fn)
    return StepResult(False, {"healthy": bool(per) and all(per.values()), "endpoints": per})


HANDLERS: dict[type, Any] = {
    EtcdMemberList: etcd_list,
    EtcdMemberRemove: etcd_remove,
    EtcdMemberAdd: etcd_add,
    EtcdMemberPromote: etcd_promote,
    EtcdHealth: etcd_health,
}
