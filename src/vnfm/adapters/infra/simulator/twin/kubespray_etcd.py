"""Control-plane and etcd changes of a Kubespray cluster on the twin, as strict as Kubespray's
docs/operations/nodes.md (the releases vnfm supports say the same):

- a control plane (or etcd host) is added by cluster.yml, never scale.yml ("You can NOT use
  scale.yml for that");
- an etcd host is added by `cluster.yml --limit=etcd,kube_control_plane -e ignore_assert_errors=yes`
  (an even count in between stops on "Stop if even number of etcd hosts" otherwise); the other
  members' etcd configuration then lists the old members until `upgrade-cluster.yml` with the same
  limit and variable ran: another etcd change before that is refused;
- remove-node.yml of an etcd member leaves the remaining nodes' configuration stale until a
  cluster.yml (or the etcd-limited upgrade-cluster.yml above) reached them: another etcd change
  before that is refused;
- the first host of kube_control_plane cannot be removed;
- each worker's localhost API proxy (nginx-proxy) lists the control planes of the inventory as it
  was when cluster.yml or scale.yml last reached that worker (`kubespray.api_proxy`, by worker).
State: `st["kubespray"]["etcd_stale"]` {"hosts": [...], "fix": playbook} and `api_proxy`.
"""

from __future__ import annotations

from typing import Any

from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.kubespray import GROUPS, KubesprayPlaybook

ETCD_LIMIT = frozenset({"etcd", "kube_control_plane"})


def limited(step: KubesprayPlaybook, inv: dict[str, Any]) -> set[str]:
    """The inventory hosts within --limit (groups expanded); every host without one."""
    if not step.limit:
        return set(inv["hosts"])
    out: set[str] = set()
    for x in step.limit:
        out.update(inv["groups"].get(x) or [] if x in GROUPS else [x])
    return out & set(inv["hosts"])


def ignores_asserts(step: KubesprayPlaybook) -> bool:
    return (step.var("ignore_assert_errors") or "").lower() in ("yes", "true")


def _etcd_limit(step: KubesprayPlaybook) -> bool:
    return set(step.limit) >= ETCD_LIMIT and ignores_asserts(step)


def check(host: str, step: KubesprayPlaybook, inv: dict[str, Any], st: dict[str, Any]) -> None:
    """What Kubespray's docs forbid for control-plane and etcd changes (see the module text)."""
    groups = inv["groups"]
    cps, etcd = list(groups.get("kube_control_plane") or []), list(groups.get("etcd") or [])
    members = set((st.get("etcd") or {}).get("members") or {})
    stale = (st.get("kubespray") or {}).get("etcd_stale") or {}
    if step.playbook == "scale.yml":
        bad = sorted(limited(step, inv) & (set(cps) | set(etcd)))
        if bad:
            raise StepFailed(host, step, f"scale.yml cannot add control plane or etcd host(s) {', '.join(bad)}: "
                                         "append them to the inventory and run cluster.yml (You can NOT use "
                                         "scale.yml for that)")
    if step.playbook == "remove-node.yml":
        node = step.var("node")
        if cps and node == cps[0]:
            raise StepFailed(host, step, f"TASK [remove_node/pre_remove] fatal: {node} is the first host of "
                                         "kube_control_plane: it cannot be removed (reorder the control planes "
                                         "and run upgrade-cluster.yml first)")
        if node in members and stale.get("hosts"):
            raise StepFailed(host, step, _stale_message(stale))
    adding = st.get("cluster", {}).get("initialized") and members and cps and cps[0] in members \
        and [h for h in etcd if h not in members and h in limited(step, inv)]
    if step.playbook == "cluster.yml" and adding:
        if not _etcd_limit(step):
            raise StepFailed(host, step, f"etcd host(s) {', '.join(adding)} are added by cluster.yml "
                                         "--limit=etcd,kube_control_plane -e ignore_assert_errors=yes "
                                         "(docs/operations/nodes.md, Adding an etcd node)")
        if stale.get("hosts"):
            raise StepFailed(host, step, _stale_message(stale))


def _stale_message(stale: dict[str, Any]) -> str:
    return (f"the etcd configuration of {', '.join(stale['hosts'])} still lists the members before the last "
            f"change: run {stale['fix']} first")


def apply(st: dict[str, Any], step: KubesprayPlaybook, inv: dict[str, Any], reached: set[str],
          members_before: set[str]) -> None:
    """After a run: which nodes' etcd configuration is stale, and the workers' API proxies."""
    ks = st.setdefault("kubespray", {})
    groups = inv["groups"]
    members = set((st.get("etcd") or {}).get("members") or {})
    stale = ks.get("etcd_stale") or {}
    if step.playbook == "cluster.yml" and members - members_before and members_before:
        stale = {"hosts": sorted(members_before), "fix": "upgrade-cluster.yml --limit=etcd,kube_control_plane "
                                                         "-e ignore_assert_errors=yes"}
    elif step.playbook == "remove-node.yml" and members_before - members:
        stale = {"hosts": sorted(members), "fix": "cluster.yml"}
    elif stale and set(stale.get("hosts") or []) <= reached and (
            (step.playbook == "upgrade-cluster.yml" and _etcd_limit(step))  # clears both kinds
            or (step.playbook == "cluster.yml" and stale.get("fix") == "cluster.yml")):
        stale = {}
    if stale:
        ks["etcd_stale"] = stale
    else:
        ks.pop("etcd_stale", None)
    if step.playbook in ("cluster.yml", "scale.yml"):
        proxy = ks.setdefault("api_proxy", {})
        for w in reached & set(groups.get("kube_node") or []):
            if w not in (groups.get("kube_control_plane") or []):
                proxy[w] = list(groups.get("kube_control_plane") or [])
        for gone in set(proxy) - set(inv["hosts"]):
            del proxy[gone]
