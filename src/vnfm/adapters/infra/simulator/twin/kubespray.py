"""Kubespray on the twin: the inventory on an operator's Ansible server and the playbook runs there.

A run does what Kubespray would to the twin's cluster (cluster.yml builds it, scale.yml --limit adds
kube_node hosts, remove-node.yml removes a node), and checks what real Ansible and Kubespray would
trip over: a tree of a known release layout (its playbooks found where that release keeps them),
the groups and variables Kubespray needs, every host the playbook's plays connect to (`_targets`:
remove-node.yml gathers the facts of every host unless the removal is ungraceful) reachable, its
host key in the inventory's known_hosts equal to the server's, the run's key authorised on it
(else UNREACHABLE, as ansible-playbook's exit 4), facts of every host gathered before a --limit
run of scale.yml, remove-node.yml answered non-interactively (the confirmation variables of the
tree's releases). Nodes join the cluster's twin state the way
the kubeadm twin registers them (twin/cluster.py `register`), so observers see one cluster model.
Each instance's state keeps its inventory's groups and the runs (`kubespray` in the "k8s" extras).
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from cryptography.hazmat.primitives import serialization

from vnfm.adapters.infra.simulator.twin import kubespray_etcd
from vnfm.adapters.infra.simulator.twin.base import TwinHost, fake_ca, sha
from vnfm.adapters.infra.simulator.twin.cluster import register
from vnfm.adapters.infra.simulator.twin.kubespray_versions import (
    check_version_var,
    installed,
    name_members,
    set_versions,
)
from vnfm.adapters.infra.simulator.twin.operator import ensure, operator_tx, tree_files
from vnfm.nodesteps.base import NodeStep, StepFailed, StepResult
from vnfm.nodesteps.certs import KUBESPRAY
from vnfm.nodesteps.kubespray import (
    GROUPS,
    KubesprayCheckInventory,
    KubesprayInventory,
    KubesprayPlaybook,
    KubesprayRemoveHost,
    KubesprayRemoveInventory,
)
from vnfm.nodesteps.kubespray_tree import LAYOUTS, TreeLayout, find_layout, known_layouts

MAX_RUNS = 100


def tree_layout(h: dict[str, Any], host: str, step: NodeStep, root: str) -> TreeLayout:
    """The release layout of the tree at `root`, as the Ansible-server script finds it; StepFailed
    (naming the known layouts) when the tree fits none."""
    files = tree_files(h, root)
    layout = find_layout(lambda p: p in files)
    if layout is None:
        raise StepFailed(host, step, f"no Kubespray tree at {root}: it fits none of the known release layouts "
                                     f"({known_layouts()})")
    return layout


def sample_group_vars(h: dict[str, Any], root: str) -> list[str]:
    """The group_vars directories of the tree's inventory/sample (copied with it)."""
    prefix = "inventory/sample/group_vars/"
    return sorted(f[len(prefix):].split("/")[0] for f in tree_files(h, root) if f.startswith(prefix))


def _own_inventory(h: dict[str, Any], host: str, step: KubesprayInventory | KubesprayCheckInventory) -> Any:
    """The inventory at step.inventory_path (None if none); StepFailed without a Kubespray tree of a
    known layout or when another cluster owns it."""
    tree_layout(h, host, step, step.kubespray_root)
    inv = h["inventories"].get(step.inventory_path)
    if inv is not None and inv.get("owner") != step.owner:
        raise StepFailed(host, step, f"{step.inventory_path} holds the inventory of another cluster "
                                     f"({inv.get('owner')}); give another transferring_inventory_path")
    return inv


def inventory(tw: TwinHost, host: str, sid: str, step: KubesprayInventory) -> StepResult:
    record = {"owner": step.owner, "root": step.kubespray_root, "groups": step.groups(),
              "hosts": {h.name: {"ansible_host": h.ansible_host, "ip": h.ip, "user": h.user, "role": h.role}
                        for h in step.hosts},
              "vars": step.variables(), "known_hosts": dict(step.known_hosts)}

    def fn(hosts: dict[str, Any]) -> tuple[bool, bool]:
        h = ensure(hosts, host)
        inv = _own_inventory(h, host, step)
        created = inv is None
        new = {**(inv or {"facts": [], "group_vars": sample_group_vars(h, step.kubespray_root)}), **record}
        if not created and {k: inv.get(k) for k in record} == record:
            return False, False
        if not created and new["hosts"] != inv.get("hosts"):
            new["facts"] = [n for n in inv.get("facts") or [] if inv["hosts"].get(n) == new["hosts"].get(n)]
        h["inventories"][step.inventory_path] = new
        return True, created

    changed, created = operator_tx(tw.sim, fn)
    if changed:
        tw.tx(lambda st: st.setdefault("kubespray", {}).update(inventory=step.groups(), ansible=host,
                                                              path=step.inventory_path))
    return StepResult(changed, {"created": created})


def check_inventory(tw: TwinHost, host: str, sid: str, step: KubesprayCheckInventory) -> StepResult:
    def fn(hosts: dict[str, Any]) -> bool:
        h = ensure(hosts, host)
        inv = _own_inventory(h, host, step)
        if inv is None and step.claim:  # the sample copied, marked; no hosts yet
            h["inventories"][step.inventory_path] = {"owner": step.owner, "root": step.kubespray_root,
                                                     "groups": {}, "hosts": {}, "vars": {}, "known_hosts": {},
                                                     "facts": [],
                                                     "group_vars": sample_group_vars(h, step.kubespray_root)}
            return True
        return False

    created = operator_tx(tw.sim, fn)
    layout = operator_tx(tw.sim, lambda hosts: tree_layout(ensure(hosts, host), host, step, step.kubespray_root))
    return StepResult(created, {"created": created, "layout": layout.label})


def remove_host(tw: TwinHost, host: str, sid: str, step: KubesprayRemoveHost) -> StepResult:
    def fn(hosts: dict[str, Any]) -> dict[str, Any] | None:
        inv = ensure(hosts, host)["inventories"].get(step.inventory_path)
        if inv is None or inv.get("owner") != step.owner:
            raise StepFailed(host, step, f"{step.inventory_path} is not this cluster's inventory")
        if step.node not in inv["hosts"]:
            return None
        del inv["hosts"][step.node]
        for members in inv["groups"].values():
            if step.node in members:
                members.remove(step.node)
        inv["known_hosts"].pop(step.address, None)
        inv["facts"] = [n for n in inv.get("facts") or [] if n != step.node]
        return dict(inv["groups"])

    groups = operator_tx(tw.sim, fn)
    if groups is not None:
        tw.tx(lambda st: st.setdefault("kubespray", {}).update(inventory=groups))
    return StepResult(groups is not None)


def remove_inventory(tw: TwinHost, host: str, sid: str, step: KubesprayRemoveInventory) -> StepResult:
    """Only the operator host's record changes (the instance's state may be gone already)."""
    def fn(hosts: dict[str, Any]) -> bool:
        invs = ensure(hosts, host)["inventories"]
        inv = invs.get(step.inventory_path)
        if inv is None:
            return False
        if inv.get("owner") != step.owner:
            raise StepFailed(host, step, f"{step.inventory_path} holds another cluster's inventory: left alone")
        del invs[step.inventory_path]
        return True

    return StepResult(operator_tx(tw.sim, fn))


# ============================================================================= playbooks
def inventory_problems(inv: dict[str, Any], ignore_asserts: bool = False) -> list[str]:
    """What real Kubespray would refuse in this inventory (groups, hosts, variables); with
    `ignore_asserts` (-e ignore_assert_errors=yes) an even etcd count passes, as Kubespray's assert
    is skipped then."""
    out: list[str] = []
    groups = inv.get("groups") or {}
    missing = [g for g in GROUPS if g not in groups]
    if missing:
        out.append(f"missing group(s) {', '.join(missing)}")
    if not groups.get("kube_control_plane"):
        out.append("group kube_control_plane is empty")
    etcd = groups.get("etcd") or []
    if not etcd or (len(etcd) % 2 == 0 and not ignore_asserts):
        out.append(f"etcd needs an odd number of members, has {len(etcd)}")
    for name, h in (inv.get("hosts") or {}).items():
        if not h.get("ansible_host") or not h.get("ip"):
            out.append(f"host {name} has no ansible_host/ip")
    v = inv.get("vars") or {}
    try:
        pods = ipaddress.ip_network(str(v.get("kube_pods_subnet")))
        svc = ipaddress.ip_network(str(v.get("kube_service_addresses")))
        if pods.overlaps(svc):
            out.append("kube_pods_subnet overlaps kube_service_addresses")
    except ValueError:
        out.append("kube_pods_subnet / kube_service_addresses are not CIDRs")
    if not isinstance(v.get("supplementary_addresses_in_ssl_keys"), list):
        out.append("supplementary_addresses_in_ssl_keys is not a list")
    return out


def _public_key(private: str) -> str:
    key = serialization.load_ssh_private_key(private.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


def _targets(step: KubesprayPlaybook, inv: dict[str, Any]) -> list[str]:
    """The inventory hosts a run connects to, from the real playbooks' plays (`hosts:` lines of
    v2.16 to v2.31, notes/kubespray-releases.md), tasks delegated to the first control plane
    counted: cluster.yml and facts.yml every host (k8s_cluster:etcd:calico_rr) within --limit;
    scale.yml the hosts within --limit and the first control plane; remove-node.yml the first
    control plane, and unless the removal is ungraceful (reset_nodes=false) the node and, for its
    facts (imported facts.yml since v2.18), every host."""
    hosts = sorted(inv["hosts"])
    first = (inv["groups"].get("kube_control_plane") or [""])[0]
    if step.playbook == "remove-node.yml":
        node = step.var("node")
        if not node:
            return []
        if step.var("reset_nodes") == "false":
            return [h for h in hosts if h == first]
        return hosts
    within = kubespray_etcd.limited(step, inv)
    picked = [h for h in hosts if h in within]
    if step.playbook in ("scale.yml", "upgrade-cluster.yml"):  # tasks delegated to the first control plane
        return sorted({*picked, first} & set(hosts))
    return picked


def _reach(tw: TwinHost, host: str, step: KubesprayPlaybook, inv: dict[str, Any], name: str) -> dict[str, Any]:
    """The server of inventory host `name`, as Ansible would reach it (else the run fails)."""
    h = inv["hosts"][name]
    server = tw.sim.server_by_address(h["ansible_host"])
    if server is None or server.get("status") != "ACTIVE" or not server.get("ssh_reachable", True):
        raise StepFailed(host, step, f"TASK [Gathering Facts] fatal: [{name}]: UNREACHABLE! ssh: connect to host "
                                     f"{h['ansible_host']} port 22: No route to host")
    if inv["known_hosts"].get(h["ansible_host"]) != server["host_key"]["public_key"]:
        raise StepFailed(host, step, f"TASK [Gathering Facts] fatal: [{name}]: UNREACHABLE! Host key verification "
                                     f"failed ({h['ansible_host']} is not in known_hosts with its key)")
    want = _public_key(step.private_key) if step.private_key else None
    keys = ((tw.state()["hosts"].get(server["id"]) or {}).get("authorized_keys") or {}).values()
    if want is None or want not in keys:
        raise StepFailed(host, step, f"TASK [Gathering Facts] fatal: [{name}]: UNREACHABLE! {h['user']}@"
                                     f"{h['ansible_host']}: Permission denied (publickey)")
    return dict(server)


def _check_run(tw: TwinHost, host: str, step: KubesprayPlaybook, inv: dict[str, Any], layout: TreeLayout) -> None:
    problems = inventory_problems(inv, kubespray_etcd.ignores_asserts(step))
    if problems:
        raise StepFailed(host, step, f"TASK [kubespray-defaults : Check inventory] fatal: [localhost]: FAILED! "
                                     f"{'; '.join(problems)}")
    if step.playbook == "remove-node.yml":
        if not step.var("node"):
            raise StepFailed(host, step, "TASK [Assert that nodes are specified for removal] fatal: No nodes "
                                         "specified for removal. The `node` variable must be set explicitly.")
        if step.var("skip_confirmation") != "yes":
            raise StepFailed(host, step, "TASK [Confirm Execution] the run waits for 'yes' on a terminal: "
                                         "give -e skip_confirmation=yes")
        if layout is LAYOUTS[-1] and step.var("delete_nodes_confirmation") != "yes":  # v2.16, v2.17: vars_prompt
            raise StepFailed(host, step, "[Confirm node removal] Delete nodes confirmation failed: the prompt "
                                         "got no 'yes' (give -e delete_nodes_confirmation=yes)")
    check_version_var(host, step)
    kubespray_etcd.check(host, step, inv, tw.state())
    if step.playbook in ("scale.yml", "upgrade-cluster.yml") and step.limit:
        stale = sorted(set(inv["hosts"]) - set(inv.get("facts") or []))
        if stale:
            raise StepFailed(host, step, f"TASK [kubernetes/preinstall : Stop if facts are missing] fatal: no facts "
                                         f"for {', '.join(stale)}: run facts.yml without --limit first")


def playbook(tw: TwinHost, host: str, sid: str, step: KubesprayPlaybook) -> StepResult:
    t0 = time.monotonic()
    inv, failing, layout, files = operator_tx(tw.sim, lambda hosts: (
        ensure(hosts, host)["inventories"].get(step.inventory_path), (ensure(hosts, host).get("failing_tasks") or {}),
        tree_layout(ensure(hosts, host), host, step, step.kubespray_root),
        tree_files(ensure(hosts, host), step.kubespray_root)))
    if inv is None or inv.get("owner") != step.owner:
        raise StepFailed(host, step, f"no inventory of this cluster at {step.inventory_path}")
    if "k8s-cluster" in (inv.get("group_vars") or []):  # a sample of Kubespray before v2.16
        raise StepFailed(host, step, f"the inventory at {step.inventory_path} has the layout of Kubespray before "
                                     "v2.16 (group_vars/k8s-cluster): the cluster's group is k8s_cluster, so those "
                                     "variables would not apply; give an inventory/sample of a v2.16 or later tree")
    if layout.paths[step.playbook] not in files:
        raise StepFailed(host, step, f"ERROR! the playbook: {layout.paths[step.playbook]} could not be found in "
                                     f"{step.kubespray_root}")
    _check_run(tw, host, step, inv, layout)
    if step.playbook in failing:  # what the SSH handler reports of a failed run: task, end of output
        env = dict(step.env)
        raise StepFailed(host, step, f"TASK [{failing[step.playbook]}] failed; end of output:\n"
                                     f"fatal: [{sorted(inv['hosts'])[0]}]: FAILED! => msg: download through "
                                     f"{env.get('VNFM_HTTPS_PROXY', 'no proxy')} timed out")
    servers = {name: _reach(tw, host, step, inv, name) for name in _targets(step, inv)}
    if step.playbook == "remove-node.yml" and step.var("node") not in inv["hosts"]:
        raise StepFailed(host, step, f"node {step.var('node')} is not in the inventory")
    if step.playbook in ("facts.yml", "cluster.yml"):  # both gather the facts of the hosts they reach
        operator_tx(tw.sim, lambda hosts: ensure(hosts, host)["inventories"][step.inventory_path]
                    .update(facts=sorted(set(inv.get("facts") or []) | set(servers))))
    tw.tx(lambda st: _apply(tw, st, host, step, inv, servers, layout.paths[step.playbook]))
    return StepResult(True, {"seconds": time.monotonic() - t0, "path": layout.paths[step.playbook],
                             "recap": {n: {"ok": 1, "changed": 1, "unreachable": 0, "failed": 0} for n in servers}})


def _apply(tw: TwinHost, st: dict[str, Any], host: str, step: KubesprayPlaybook, inv: dict[str, Any],
           servers: dict[str, dict[str, Any]], path: str) -> None:
    ks = st.setdefault("kubespray", {})
    runs = ks.setdefault("runs", [])
    runs.append({"playbook": step.playbook, "path": path, "limit": list(step.limit) or None,
                 "extra_vars": dict(step.extra_vars)})
    del runs[:-MAX_RUNS]
    ks.update(inventory=inv["groups"], ansible=host, path=step.inventory_path)
    members_before = set(st["etcd"]["members"])
    _run(tw, st, host, step, inv, servers)
    kubespray_etcd.apply(st, step, inv, set(servers), members_before)


def _run(tw: TwinHost, st: dict[str, Any], host: str, step: KubesprayPlaybook, inv: dict[str, Any],
         servers: dict[str, dict[str, Any]]) -> None:
    if step.playbook == "cluster.yml":
        _cluster(tw, st, inv, servers)
        set_versions(host, step, st, inv, servers)
    elif step.playbook == "upgrade-cluster.yml":
        set_versions(host, step, st, inv, servers)
    elif step.playbook == "scale.yml":
        for name, server in servers.items():
            n = st["nodes"].get(name)
            if n is None or n.get("server_id") != server["id"]:
                st["nodes"].pop(name, None)
                register(tw, st, server["id"], name, "worker", inv["hosts"][name]["ip"], ready_now=True)
                st["nodes"][name].update(ready=True, version=installed(inv))  # the run ends once it is Ready
    elif step.playbook == "remove-node.yml":
        name = str(step.var("node"))
        if st["nodes"].pop(name, None) is not None:
            for pod in st["pods"].values():
                if pod["node"] == name:
                    pod["node"] = None
        st["etcd"]["members"].pop(name, None)


def _cluster(tw: TwinHost, st: dict[str, Any], inv: dict[str, Any], servers: dict[str, dict[str, Any]]) -> None:
    """cluster.yml: the cluster of the inventory (a new one when its first control plane is a new VM)."""
    masters = inv["groups"]["kube_control_plane"]
    first = inv["hosts"][masters[0]]
    c = st["cluster"]
    first_server = servers.get(masters[0], {}).get("id")
    current = st["nodes"].get(masters[0])
    rebuilt = masters[0] in servers and (current is None or current.get("server_id") != first_server)
    if not c.get("initialized") or rebuilt:  # a run --limit'ed to other hosts keeps the cluster
        ca, ca_hash = fake_ca()
        v = inv["vars"]
        st["cluster"] = {"initialized": True, "endpoint": f"{first['ip']}:6443", "ca_pem": ca, "ca_cert_hash": ca_hash,
                         "pod_cidr": v["kube_pods_subnet"], "service_cidr": v["kube_service_addresses"],
                         "version": installed(inv), "token_sha256": [], "cert_key_sha256": [],
                         "cert_sans": sorted({*v["supplementary_addresses_in_ssl_keys"],
                                              *(h["ip"] for h in inv["hosts"].values() if h["role"] == "master")}),
                         "installer": "kubespray", "ca_sha256": sha(ca)}
        st["nodes"], st["etcd"] = {}, {"members": {}}
        st.setdefault("kubespray", {}).pop("etcd_stale", None)  # a new etcd: nothing of the old one is stale
    for name, server in servers.items():
        h = inv["hosts"][name]
        n = st["nodes"].get(name)
        if n is not None and n.get("server_id") == server["id"]:
            continue
        register(tw, st, server["id"], name, h["role"], h["ip"], ready_now=True, layout=KUBESPRAY)
        st["nodes"][name].update(ready=True, version=installed(inv))
    name_members(st, inv)


HANDLERS: dict[type, Any] = {
    KubesprayCheckInventory: check_inventory,
    KubesprayInventory: inventory,
    KubesprayRemoveHost: remove_host,
    KubesprayRemoveInventory: remove_inventory,
    KubesprayPlaybook: playbook,
}
