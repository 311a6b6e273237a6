"""PodDisruptionBudgets (policy/v1) created through the simulated API: the pods a budget covers,
how many of them are healthy and how many disruptions it allows (its status, as the disruption
controller computes it), and whether evicting a pod would violate one (what the eviction
subresource checks: a 429 naming the budget, as kube-apiserver answers).

Expected pods are the replicas of the covered pods' controllers (Deployment, StatefulSet), or the
pods themselves when they have none. A budget with neither minAvailable nor maxUnavailable asks
for nothing (every disruption allowed). Not modelled: `unhealthyPodEvictionPolicy` (always
IfHealthyBudget) and the budget's `observedGeneration` lag."""

from __future__ import annotations

import math
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.selectors import selector_matches
from vnfm.adapters.infra.simulator.k8sapi.state import objects
from vnfm.adapters.infra.simulator.k8sapi.store import pod_ready

PLURAL = "poddisruptionbudgets"


def _covers(pdb: dict[str, Any], rec: dict[str, Any]) -> bool:
    if rec.get("namespace") != pdb["metadata"].get("namespace"):
        return False
    sel = (pdb.get("spec") or {}).get("selector")
    if sel is None:
        return False
    if sel == {}:  # policy/v1: an empty selector covers every pod of the namespace
        return True
    return selector_matches(sel, dict(rec.get("labels") or {}))


def _scaled(value: Any, expected: int) -> int:
    """An IntOrString of a budget: an int, or a percentage of the expected pods (rounded up)."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * expected / 100)
    return int(value)


def _expected(st: dict[str, Any], pods: list[dict[str, Any]]) -> int:
    total, seen = 0, set()
    for p in pods:
        ctl = p.get("controller") or {}
        if not ctl.get("uid"):
            total += 1
            continue
        if ctl["uid"] in seen:
            continue
        seen.add(ctl["uid"])
        w = objects(st, str(ctl.get("plural"))).get(str(ctl.get("key"))) or {}
        total += int((w.get("spec") or {}).get("replicas", 1)) if ctl.get("plural") != "daemonsets" else \
            sum(1 for q in pods if (q.get("controller") or {}).get("uid") == ctl["uid"])
    return total


def budget_status(st: dict[str, Any], pdb: dict[str, Any]) -> dict[str, Any]:
    pods = [p for p in st["pods"].values() if _covers(pdb, p)]
    expected = _expected(st, pods)
    healthy = sum(1 for p in pods if pod_ready(st, p))
    spec = pdb.get("spec") or {}
    desired = 0
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected)
    return {"observedGeneration": int(pdb["metadata"].get("generation") or 1), "expectedPods": expected,
            "currentHealthy": healthy, "desiredHealthy": desired,
            "disruptionsAllowed": max(0, healthy - desired)}


def blocking_budget(st: dict[str, Any], rec: dict[str, Any]) -> tuple[str, str] | None:
    """(budget name, why) when evicting pod `rec` would violate a budget; None when it would not."""
    for _key, pdb in sorted(objects(st, PLURAL).items()):
        if not _covers(pdb, rec):
            continue
        s, name = budget_status(st, pdb), str(pdb["metadata"]["name"])
        if pod_ready(st, rec):
            if s["disruptionsAllowed"] < 1:
                return name, (f"The disruption budget {name} needs {s['desiredHealthy']} healthy pods and has "
                              f"{s['currentHealthy']} currently")
        elif s["currentHealthy"] < s["desiredHealthy"]:
            return name, (f"The disruption budget {name} does not have sufficient healthy pods "
                          f"({s['currentHealthy']} of {s['desiredHealthy']}) to evict an unhealthy one")
    return None


def refresh(st: dict[str, Any], bump: Any) -> bool:
    """Bring every budget's status up to date; True when one changed."""
    changed = False
    for pdb in objects(st, PLURAL).values():
        now = budget_status(st, pdb)
        if pdb.get("status") != now:
            pdb["status"] = now
            pdb["metadata"]["resourceVersion"] = bump(st)
            changed = True
    return changed
