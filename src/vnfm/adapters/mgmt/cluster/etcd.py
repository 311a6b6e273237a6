"""etcd of a cluster with stacked control planes: quorum rules, membership checks, removing a master."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.resources import Vnfc
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberList, EtcdMemberRemove, EtcdTls

ETCD_ENDPOINTS = ("https://127.0.0.1:2379",)
ETCD_TLS = EtcdTls("/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                   "/etc/kubernetes/pki/etcd/healthcheck-client.key")


def check_quorum(n_masters: int, healed: Sequence[Vnfc]) -> None:
    """Refuse (422: does not fit this cluster) a heal of masters that would leave etcd without quorum."""
    names = ", ".join(v.name or v.id for v in healed)
    if n_masters == 1:
        raise UnprocessableEntity(f"healing master {names} would lose etcd quorum: the cluster has a single "
                         "control plane (1 etcd member); heal the entire VNF instead (omit vnfcInstanceId)")
    survivors = n_masters - len(healed)
    if survivors < n_masters // 2 + 1:
        raise UnprocessableEntity(f"healing masters {names} at once would lose etcd quorum: {survivors} of "
                         f"{n_masters} members would remain (quorum is {n_masters // 2 + 1}); heal them "
                         "one at a time")


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


async def remove_member(c: Cluster, admin: Node, m: Node) -> None:
    """Remove master `m`'s member by name, and by the peer URL kubeadm gives it: a join of this VNFC
    that failed earlier may have left a member that never started (and so has no name)."""
    host = f"[{m.nic}]" if ":" in m.nic else m.nic
    await c.ex.run(admin.ssh, EtcdMemberRemove(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, name=m.name,
                                               peer_url=f"https://{host}:2380"))
