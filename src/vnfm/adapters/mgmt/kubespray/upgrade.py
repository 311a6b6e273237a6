"""change_vnfpkg of a Kubespray cluster: a Kubernetes upgrade (one minor version) through
Kubespray's `upgrade-cluster.yml`, and its undo.

Phases (the engine runs each as a stage, `ctx.phase`), the way Kubespray's upgrade guide does a
node-based upgrade (docs/operations/upgrades.md):
- snapshot: an etcd snapshot on the first master (Kubespray's etcd client certificate), read
  back, copied off to the VNFM's store (the kubeadm driver's steps).
- control_plane: facts.yml without --limit (the fact cache of every node), then
  `upgrade-cluster.yml -e kube_version=<new> --limit <the masters>` (kube_control_plane:etcd; its
  plays take one master at a time); each master checked Ready at the new version through the LB's
  kubectl (the LB fronts every API server: with several masters the API keeps answering).
- workers: one `upgrade-cluster.yml --limit <worker>` run per worker (Kubespray cordons, drains
  and uncordons it), each checked Ready at the new version before the next; then the Kubernetes
  VIM's `extra.kubernetes_version`.
Rollback (`ctx.rollback`; Kubespray has no downgrade play): when the control plane had moved,
`cluster.yml -e kube_version=<old> --limit <the nodes that changed>` puts the old version back
on them, then every etcd member is restored from the snapshot and each changed node is checked
Ready at the old version.
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.mgmt.cluster.topology import Node, pin
from vnfm.adapters.mgmt.kubeadm.upgrade import record_version, restore_etcd, take_snapshot
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.adapters.mgmt.kubespray.site import Site
from vnfm.domain import k8s_versions
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import VnfInstance
from vnfm.nodesteps.etcd import EtcdTls
from vnfm.nodesteps.upgrade import NodeAtVersion

# the keys of the cluster parameters a change_vnfpkg acts on (any other is refused)
CHANGE_KEYS = frozenset({"kubernetes_version", "node_ready_timeout"})
ETCD_SSL = "/etc/ssl/etcd/ssl"  # Kubespray's etcd_cert_dir


def etcd_tls(member: Node) -> EtcdTls:
    """Kubespray's admin client certificate of an etcd member, on that member (etcd_deployment_type
    host; roles/etcd's gen_certs: admin-<inventory_hostname>.pem, its -key.pem, ca.pem)."""
    return EtcdTls(f"{ETCD_SSL}/ca.pem", f"{ETCD_SSL}/admin-{member.name}.pem",
                   f"{ETCD_SSL}/admin-{member.name}-key.pem")


def etcd_member(i: int, _node: Node) -> str:
    """Kubespray's etcd_member_name: etcd1, etcd2, ... in the order of the etcd group."""
    return f"etcd{i + 1}"


def check_change(instance: VnfInstance, extra: dict[str, Any]) -> str:
    """The request's cluster keys of a change_vnfpkg: only those it acts on, a version one minor
    above the recorded one. Returns the target version."""
    path = K.ROOT
    given = extra.get(K.KEY)
    if not isinstance(given, dict) or "kubernetes_version" not in given:
        raise UnprocessableEntity(f"{path}.kubernetes_version: a change_vnfpkg of a Kubespray cluster upgrades "
                                  "Kubernetes: give the new version (one minor version up)")
    for key in given:
        if key not in CHANGE_KEYS:
            raise UnprocessableEntity(f"{path}.{key}: a change_vnfpkg does not act on it (it takes "
                                      f"{', '.join(sorted(CHANGE_KEYS))})")
    running = K.parse(instance.additional_params).kubernetes_version
    if running is None:
        raise UnprocessableEntity(f"{path}.kubernetes_version: the cluster was instantiated without it (the "
                                  "Kubespray release's default kube_version): vnfm does not know which version "
                                  "runs, so it cannot check the upgrade; nothing was changed")
    target = str(given["kubernetes_version"])
    k8s_versions.check_upgrade(f"{path}.kubernetes_version", running, target)
    return target


def _state(s: Site) -> dict[str, Any]:
    up: dict[str, Any] = s.ctx.state.setdefault("upgrade", {})
    if up.get("op_id") != s.ctx.op_id:
        up.clear()
        up.update(op_id=s.ctx.op_id, old=K.parse(s.ctx.instance.additional_params).kubernetes_version,
                  new=s.kp.kubernetes_version, done=[])
    if not up.get("old") or not up.get("new"):
        raise OperationFailed(f"{K.ROOT}.kubernetes_version: the old or the new version is unknown")
    return up


async def _at(s: Site, nodes: list[Node], version: str) -> None:
    for n in nodes:
        await s.c.ex.run(s.lb_node.ssh, NodeAtVersion(n.name, version, s.kp.node_ready_timeout))
        s.ctx.progress(f"{n.name} Ready at {version}")


async def upgrade(s: Site, phase: str) -> None:
    c, up = s.c, _state(s)
    await pin(c, [*c.nodes, s.lb_node])
    await c.ex.verify_host_keys([s.ansible])
    if phase == "snapshot":
        # the forward starts (again): the first attempt, or a retry after a rollback began, which may
        # have put nodes listed done back at the old version without recording it (killed before its
        # stage's end). No node counts as upgraded; `touched` stays for a later rollback.
        up["done"] = []
        await take_snapshot(c, up, etcd_tls(c.masters[0]))
        return
    if phase not in ("control_plane", "workers"):
        raise OperationFailed(f"unknown change_vnfpkg phase {phase!r}")
    extra = [("kube_version", str(up["new"]))]
    everyone = [n.name for n in c.nodes]
    async with s.authorized(c.nodes):  # the first control plane is reached by every limited run
        await s.playbook("facts.yml", hosts=everyone)
        if phase == "control_plane":
            masters = [m for m in c.masters if m.name not in up["done"]]
            if masters:
                s.ctx.progress(f"upgrading the control plane ({', '.join(m.name for m in masters)}) to {up['new']}")
                up["moved"] = True  # from here on a rollback puts the old version back
                await s.playbook("upgrade-cluster.yml", limit=[m.name for m in masters], extra=extra)
                await _at(s, masters, up["new"])
                up["done"].extend(m.name for m in masters)
            return
        for w in c.workers:  # one run per worker: Kubespray drains it, Ready at the version, then the next
            if w.name in up["done"]:
                continue
            up["moved"] = True
            up.setdefault("touched", [])
            if w.name not in up["touched"]:
                up["touched"].append(w.name)
            await s.playbook("upgrade-cluster.yml", limit=[w.name], extra=extra)
            await _at(s, [w], up["new"])
            up["done"].append(w.name)
    record_version(c, str(up["new"]))


async def roll_back(s: Site, phase: str) -> None:
    """Undo as far as `phase` (the furthest phase that started)."""
    c, up = s.c, _state(s)
    if phase not in ("control_plane", "workers") or not up.get("moved"):
        s.ctx.progress("rolling back: no node had changed")
        return
    old = str(up["old"])
    changed = [n for n in c.nodes if n.master or n.name in up.get("done", []) or n.name in up.get("touched", [])]
    s.ctx.progress(f"rolling back: {', '.join(n.name for n in changed)} back to Kubernetes {old} (cluster.yml), "
                   "etcd restored from the snapshot")
    await pin(c, [*c.nodes, s.lb_node])
    await c.ex.verify_host_keys([s.ansible])
    async with s.authorized(c.nodes):
        await s.playbook("facts.yml", hosts=[n.name for n in c.nodes])
        await s.playbook("cluster.yml", limit=[n.name for n in changed], extra=[("kube_version", old)])
    await restore_etcd(c, up, etcd_member)
    await _at(s, changed, old)
    up["done"], up["touched"], up["moved"] = [], [], False
    record_version(c, old)
    s.ctx.progress(f"rolled back: every node Ready at {old}, etcd as before the change")
