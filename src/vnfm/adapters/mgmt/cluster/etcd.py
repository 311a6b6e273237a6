"""etcd of a cluster with stacked control planes: quorum rules (domain/etcd_quorum.py), what the
members are and which answer `endpoint health` (observed, and recorded in the driver state for the
next request's checks), membership checks, adding (learner, promote) and removing a master."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.domain import etcd_quorum
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.resources import Vnfc
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberList, EtcdMemberPromote, EtcdMemberRemove, EtcdTls
from vnfm.nodesteps.kubernetes import node_name

ETCD_ENDPOINTS = ("https://127.0.0.1:2379",)
ETCD_TLS = EtcdTls("/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                   "/etc/kubernetes/pki/etcd/healthcheck-client.key")


STATE_KEY = "etcd"  # driver state: {"members": [names], "unhealthy": [names]} as last observed


def check_quorum(masters: Sequence[Vnfc], healed: Sequence[Vnfc], unhealthy: Collection[str] = ()) -> None:
    """Refuse (422: does not fit this cluster) a heal of masters that would leave etcd without quorum,
    counting the members last observed unhealthy as lost (domain/etcd_quorum.check_heal)."""
    names = ", ".join(v.name or v.id for v in healed)
    if len(masters) == 1:
        raise UnprocessableEntity(f"healing master {names} would lose etcd quorum: the cluster has a single "
                         "control plane (1 etcd member); heal the entire VNF instead (omit vnfcInstanceId)")
    etcd_quorum.check_heal([member_name(v) for v in masters], unhealthy, [member_name(v) for v in healed])


def member_name(v: Vnfc) -> str:
    """A master VNFC's etcd member name (kubeadm names the member after the node)."""
    return node_name(v.name or v.id)


def recorded(state: dict[str, Any]) -> tuple[list[str], set[str]]:
    """The members and the unhealthy ones as last observed (empty: never observed)."""
    rec = state.get(STATE_KEY) or {}
    return list(rec.get("members") or []), set(rec.get("unhealthy") or [])


@dataclass(frozen=True)
class Observed:
    members: list[str]  # by name ("" for a member added but never started)
    unhealthy: set[str]  # not answering `endpoint health`, or a learner (no vote)
    learners: set[str]


async def observe(c: Cluster, admin: Node) -> Observed:
    """Members and the health of each (`etcdctl endpoint health` of every member's client URL), recorded
    in the driver state for the checks of the next request."""
    members = (await c.ex.run(admin.ssh, EtcdMemberList(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS))).data["members"]
    urls = tuple(sorted({u for m in members for u in m["client_urls"]}))
    per: dict[str, bool] = {}
    if urls:
        per = (await c.ex.run(admin.ssh, EtcdHealth(endpoints=urls, tls=ETCD_TLS))).data.get("endpoints") or {}
    names = [m["name"] for m in members]
    learners = {m["name"] for m in members if m.get("learner")}
    unhealthy = {m["name"] for m in members
                 if m.get("learner") or not any(per.get(u) for u in m["client_urls"])}
    c.ctx.state[STATE_KEY] = {"members": sorted(names), "unhealthy": sorted(unhealthy)}
    return Observed(names, unhealthy, learners)


async def promote(c: Cluster, admin: Node, m: Node) -> None:
    """Promote `m`'s member if it is still a learner (kubeadm from 1.29 promotes it during the join)."""
    await c.ex.run(admin.ssh, EtcdMemberPromote(name=m.name, endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS))


async def check_members(c: Cluster, admin: Node, expected: Sequence[Node], *, tls: EtcdTls = ETCD_TLS,
                        by_name: bool = True) -> None:
    """etcd has exactly the members `expected` (by name, kubeadm's member names being the node
    names; `by_name` False: as many members, e.g. Kubespray's etcd1..N, whose names follow the
    inventory order at the time each joined) and every one is healthy; asked on `admin` with the
    client certificate `tls` (kubeadm's healthcheck client by default)."""
    members = (await c.ex.run(admin.ssh, EtcdMemberList(endpoints=ETCD_ENDPOINTS, tls=tls))).data["members"]
    names = sorted(m["name"] for m in members)
    want = sorted(n.name for n in expected)
    if (names != want) if by_name else (len(names) != len(want)):
        raise OperationFailed(f"etcd members are {names}, expected {want if by_name else len(want)}")
    health = (await c.ex.run(admin.ssh, EtcdHealth(endpoints=ETCD_ENDPOINTS, tls=tls, wait_s=30))).data
    if not health.get("healthy"):
        bad = sorted(e for e, ok in (health.get("endpoints") or {}).items() if not ok)
        raise OperationFailed(f"etcd is not healthy after the change (unhealthy: {', '.join(bad) or 'unknown'})")
    learners = sorted(m["name"] for m in members if m.get("learner"))
    if learners:
        raise OperationFailed(f"etcd member(s) {', '.join(learners)} are still learners (not promoted)")
    c.ctx.state[STATE_KEY] = {"members": names, "unhealthy": []}


async def remove_member(c: Cluster, admin: Node, m: Node) -> None:
    """Remove master `m`'s member by name, and by the peer URL kubeadm gives it: a join of this VNFC
    that failed earlier may have left a member that never started (and so has no name)."""
    host = f"[{m.nic}]" if ":" in m.nic else m.nic
    await c.ex.run(admin.ssh, EtcdMemberRemove(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, name=m.name,
                                               peer_url=f"https://{host}:2380"))
