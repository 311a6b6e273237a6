"""etcd membership on the twin (the members of the kubeadm stacked etcd, or of Kubespray's etcd
on the masters), asked with the client certificates of the host's layout."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on, sha
from vnfm.nodesteps.base import NodeStep, StepFailed, StepResult
from vnfm.nodesteps.certs import KUBEADM, KUBESPRAY
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberAdd, EtcdMemberList, EtcdMemberRemove

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


def etcd_list(tw: TwinHost, host: str, sid: str, step: EtcdMemberList) -> StepResult:
    def fn(st: dict[str, Any]) -> list[dict[str, Any]]:
        etcd_quorum(tw, host, sid, step, st)
        return [{"id": sha(m["name"])[:16], "name": m["name"], "peer_urls": [m["peer_url"]],
                 "client_urls": [m["peer_url"].replace(":2380", ":2379")], "learner": False}
                for m in sorted(st["etcd"]["members"].values(), key=lambda m: m["name"])]

    return StepResult(False, {"members": tw.tx(fn)})


def etcd_remove(tw: TwinHost, host: str, sid: str, step: EtcdMemberRemove) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, str]:
        etcd_quorum(tw, host, sid, step, st)
        members = st["etcd"]["members"]
        gone = [k for k, m in members.items()
                if m["name"] == step.name or (step.peer_url and m["peer_url"] == step.peer_url)]
        for k in gone:
            del members[k]
        return (bool(gone), ",".join(sha(k)[:16] for k in gone))

    changed, mid = tw.tx(fn)
    return StepResult(changed, {"id": mid})


def etcd_add(tw: TwinHost, host: str, sid: str, step: EtcdMemberAdd) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, list[tuple[str, str]]]:
        etcd_quorum(tw, host, sid, step, st)
        members = st["etcd"]["members"]
        changed = not any(m["peer_url"] == step.peer_url for m in members.values())
        if changed:
            members[step.name] = {"name": step.name, "peer_url": step.peer_url, "healthy": True}
        return changed, [(m["name"], m["peer_url"]) for m in members.values()]

    changed, pairs = tw.tx(fn)
    return StepResult(changed, {"initial_cluster": ",".join(f"{n}={u}" for n, u in pairs), "members": pairs})


def etcd_health(tw: TwinHost, host: str, sid: str, step: EtcdHealth) -> StepResult:
    def fn(st: dict[str, Any]) -> dict[str, bool]:
        etcd_quorum(tw, host, sid, step, st)
        return {m["peer_url"].replace(":2380", ":2379"): bool(m["healthy"])
                for m in st["etcd"]["members"].values()}

    per = tw.tx(fn)
    return StepResult(False, {"healthy": bool(per) and all(per.values()), "endpoints": per})


HANDLERS: dict[type, Any] = {
    EtcdMemberList: etcd_list,
    EtcdMemberRemove: etcd_remove,
    EtcdMemberAdd: etcd_add,
    EtcdHealth: etcd_health,
}
