"""Kubernetes versions of a Kubespray cluster on the twin: the version cluster.yml installs
(the inventory's `kube_version`, else the release default below), and what `upgrade-cluster.yml`
and `cluster.yml -e kube_version=...` do to the nodes they reach.

As strict as Kubespray: `kube_version` is 1.x.y without a "v" (v2.28 and later stop on one:
"Stop if some versions have a 'v' left at the start"); upgrade-cluster.yml needs it; a control plane
goes one minor version up at most (kubeadm upgrade apply); a node's kubelet never becomes newer
than the API server (a worker before its control plane fails); `faults.upgrade_fails` (node names)
fails the run at that node.
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.kubespray_etcd import limited
from vnfm.domain.k8s_versions import K8sVersion, skew_problem
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.kubespray import KUBE_VERSION, KubesprayPlaybook

DEFAULT_KUBE_VERSION = "1.30.4"  # what the twin's Kubespray release installs without kube_version


def check_version_var(host: str, step: KubesprayPlaybook) -> None:
    """kube_version as Kubespray's preinstall checks it (the step's own check is bypassed in tests).
    upgrade-cluster.yml without it re-applies the inventory's version (or the release's default),
    as Kubespray's does (an etcd change runs it so)."""
    v = step.var("kube_version")
    if v is not None and not KUBE_VERSION.match(v):
        raise StepFailed(host, step, f"TASK [kubernetes/preinstall : Stop if some versions have a 'v' left at the "
                                     f"start] fatal: kube_version {v!r}")


def installed(inv: dict[str, Any]) -> str:
    return str((inv.get("vars") or {}).get("kube_version") or DEFAULT_KUBE_VERSION)


def set_versions(host: str, step: KubesprayPlaybook, st: dict[str, Any], inv: dict[str, Any],
                 servers: dict[str, dict[str, Any]]) -> None:
    """upgrade-cluster.yml, or cluster.yml with kube_version: the hosts within --limit move to
    that version, control planes first (one at a time, as Kubespray's serial plays)."""
    version = step.var("kube_version")
    if version is None or step.playbook not in ("upgrade-cluster.yml", "cluster.yml"):
        return
    within = limited(step, inv)
    limit = [n for n in servers if n in within]
    masters = set(inv["groups"].get("kube_control_plane") or [])
    c = st["cluster"]
    new = K8sVersion.parse(version)
    for name in sorted(limit, key=lambda n: n not in masters):
        if name in (st["faults"].get("upgrade_fails") or []):
            raise StepFailed(host, step, f"TASK [kubernetes/control-plane : kubeadm | Upgrade] fatal: [{name}]: "
                                         f"FAILED! [fault] upgrade to {version} failed")
        node = st["nodes"].get(name)
        if node is None:
            continue
        if name in masters:
            cur = K8sVersion.parse(str(c.get("version")))
            if step.playbook == "upgrade-cluster.yml" and (new < cur or new.minors_after(cur) > 1):
                raise StepFailed(host, step, f"fatal: [{name}]: kubeadm upgrade apply: the cluster runs {cur}: "
                                             f"{new} is not one minor version up at most")
            st["hosts"].setdefault(node["server_id"], {})["control_plane"] = version
            c["version"] = version
        elif why := skew_problem(str(c.get("version")), version):
            raise StepFailed(host, step, f"fatal: [{name}]: refused: {why} (upgrade the control plane first)")
        st["hosts"].setdefault(node["server_id"], {})["packages"] = {p: version for p in ("kubeadm", "kubelet",
                                                                                              "kubectl")}
        node.update(version=version, ready=True, cordoned=False)  # the run ends with it Ready, uncordoned


def name_members(st: dict[str, Any], inv: dict[str, Any]) -> None:
    """Kubespray's etcd member names: etcd1, etcd2, ... in the order of the etcd group."""
    for i, m in enumerate(inv["groups"].get("etcd") or []):
        member = st["etcd"]["members"].get(m)
        if member is not None:
            member["name"] = f"etcd{i + 1}"
