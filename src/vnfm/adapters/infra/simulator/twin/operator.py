"""Operator hosts on the simulated cloud: machines outside every VNF that drivers reach by address
(a NodeHost with no VNFC), e.g. the operator's Ansible server with a Kubespray tree.

The simulated cloud keeps them in its extras under OPERATOR_EXTRAS (shared by every VNF instance:
two clusters may use the same Ansible server), keyed by address: a host key (public data only,
created on first contact, so pins hold), the Kubespray trees present, and the inventories kept
there (owner, groups, variables, known_hosts, facts) — no secret ever.

Kubespray trees: by default a simulated operator host has one of the newest release layout
wherever a request says it is (`kubespray_roots` None: the operator installed it);
`set_operator_host(..., kubespray_roots=[...])` makes the check strict, and a dict
{root: RELEASE_FILES[release] or any list of paths} gives each root the files of a release (or a
broken tree), whose layout the twin finds as the Ansible-server script does (kubespray_tree).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from vnfm.adapters.infra.simulator.hostkeys import new_host_key

OPERATOR_EXTRAS = "operator-hosts"
_NEW_ROOT = ("cluster.yml", "scale.yml", "remove-node.yml", "upgrade-cluster.yml")
_NEW = ("playbooks/cluster.yml", "playbooks/scale.yml", "playbooks/remove_node.yml", "playbooks/facts.yml",
        "playbooks/upgrade_cluster.yml", "inventory/sample")
# the entry points of real release trees (the files the layouts look at; checked against the real trees)
RELEASE_FILES: dict[str, tuple[str, ...]] = {
    "v2.16": ("cluster.yml", "scale.yml", "remove-node.yml", "facts.yml", "upgrade-cluster.yml", "inventory/sample"),
    "v2.23": (*_NEW_ROOT, *_NEW),
    "v2.27": (*_NEW_ROOT, *_NEW),
    "v2.31": (*_NEW_ROOT, "remove_node.yml", "upgrade_cluster.yml", *_NEW),
}
NEWEST = "v2.31"
SID_PREFIX = "operator:"
T = TypeVar("T")


def operator_tx(sim: Any, fn: Callable[[dict[str, Any]], T]) -> T:
    """Run `fn(hosts)` (address -> record) in one simulated-cloud transaction."""
    return sim.update_extras(OPERATOR_EXTRAS, lambda ex: fn(ex.setdefault("hosts", {})))


def ensure(hosts: dict[str, Any], address: str) -> dict[str, Any]:
    h = hosts.get(address)
    if h is None:
        h = hosts[address] = {"address": address, "host_key": new_host_key()["public_key"],
                              "kubespray_roots": None, "inventories": {}, "reachable": True}
    return h  # the live record (mutated inside the transaction)


def host_key(sim: Any, address: str) -> str:
    return str(operator_tx(sim, lambda hosts: ensure(hosts, address)["host_key"]))


def reachable(sim: Any, address: str) -> bool:
    return bool(operator_tx(sim, lambda hosts: ensure(hosts, address).get("reachable", True)))


def tree_files(h: dict[str, Any], root: str) -> frozenset[str]:
    """The files of the Kubespray tree at `root` of operator host record `h` (none: no tree)."""
    roots = h.get("kubespray_roots")
    if roots is None or (isinstance(roots, list) and root in roots):
        return frozenset(RELEASE_FILES[NEWEST])
    if isinstance(roots, dict) and root in roots:
        return frozenset(roots[root])
    return frozenset()


def set_operator_host(sim: Any, address: str, *, kubespray_roots: list[str] | dict[str, list[str]] | None = None,
                      reachable: bool | None = None, failing_tasks: dict[str, str] | None = None) -> dict[str, Any]:
    """Test and demo helper: declare the Kubespray trees an operator host has (roots of the newest
    layout, or {root: the tree's files}, e.g. RELEASE_FILES["v2.16"]), make it
    (un)reachable, or make playbooks fail (`failing_tasks`: playbook -> the task that fails)."""
    def fn(hosts: dict[str, Any]) -> dict[str, Any]:
        h = ensure(hosts, address)
        if kubespray_roots is not None:
            h["kubespray_roots"] = ({r: list(f) for r, f in kubespray_roots.items()}
                                    if isinstance(kubespray_roots, dict) else list(kubespray_roots))
        if failing_tasks is not None:
            h["failing_tasks"] = dict(failing_tasks)
        if reachable is not None:
            h["reachable"] = reachable
        return dict(h)

    return operator_tx(sim, fn)


def operator_view(sim: Any) -> dict[str, Any]:
    """Every operator host and the inventories it keeps (owners, groups), for observers."""
    hosts = (sim.extras(OPERATOR_EXTRAS).get("hosts") or {})
    return {addr: {"inventories": {path: {"owner": inv.get("owner"), "groups": inv.get("groups")}
                                   for path, inv in sorted((h.get("inventories") or {}).items())}}
            for addr, h in sorted(hosts.items())}
