"""The resource types the simulated Kubernetes API serves, with what discovery says of them."""

from __future__ import annotations

from dataclasses import dataclass

VERBS = ["create", "delete", "get", "list", "patch", "update"]


@dataclass(frozen=True)
class Kind:
    plural: str
    kind: str
    group: str  # "" for the core group
    version: str
    namespaced: bool
    short: tuple[str, ...] = ()
    verbs: tuple[str, ...] = tuple(VERBS)
    singular: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version


KINDS: tuple[Kind, ...] = (
    Kind("namespaces", "Namespace", "", "v1", False, ("ns",)),
    Kind("nodes", "Node", "", "v1", False, ("no",)),  # created by the kubelet that registers it
    Kind("pods", "Pod", "", "v1", True, ("po",)),
    Kind("services", "Service", "", "v1", True, ("svc",)),
    Kind("configmaps", "ConfigMap", "", "v1", True, ("cm",)),
    Kind("secrets", "Secret", "", "v1", True),
    Kind("persistentvolumes", "PersistentVolume", "", "v1", False, ("pv",)),
    Kind("persistentvolumeclaims", "PersistentVolumeClaim", "", "v1", True, ("pvc",)),
    Kind("deployments", "Deployment", "apps", "v1", True, ("deploy",)),
    Kind("statefulsets", "StatefulSet", "apps", "v1", True, ("sts",)),
    Kind("daemonsets", "DaemonSet", "apps", "v1", True, ("ds",)),
    Kind("serviceaccounts", "ServiceAccount", "", "v1", True, ("sa",)),
    Kind("poddisruptionbudgets", "PodDisruptionBudget", "policy", "v1", True, ("pdb",)),
    Kind("clusterrolebindings", "ClusterRoleBinding", "rbac.authorization.k8s.io", "v1", False),
)
BY_PLURAL = {k.plural: k for k in KINDS}
BY_KIND = {k.kind: k for k in KINDS}
WORKLOADS = ("deployments", "statefulsets", "daemonsets")
# subresources served: pods/eviction (create), pods/status, <workload>/scale and /status
SUBRESOURCES: dict[str, dict[str, tuple[str, str, str, tuple[str, ...]]]] = {
    "pods": {"eviction": ("Eviction", "policy", "v1", ("create",)), "status": ("Pod", "", "v1", ("get",))},
    "deployments": {"scale": ("Scale", "autoscaling", "v1", ("get", "patch", "update")),
                    "status": ("Deployment", "", "", ("get",))},
    "statefulsets": {"scale": ("Scale", "autoscaling", "v1", ("get", "patch", "update")),
                     "status": ("StatefulSet", "", "", ("get",))},
    "daemonsets": {"status": ("DaemonSet", "", "", ("get",))},
    "poddisruptionbudgets": {"status": ("PodDisruptionBudget", "", "", ("get",))},
}
GROUPS: dict[str, list[str]] = {"apps": ["v1"], "policy": ["v1"], "autoscaling": ["v1"],
                                "rbac.authorization.k8s.io": ["v1"]}


def kind_of(group: str, version: str, plural: str) -> Kind | None:
    k = BY_PLURAL.get(plural)
    if k is None or k.group != group or k.version != version:
        return None
    return k


def resource_list(group: str, version: str) -> dict[str, object] | None:
    """The APIResourceList of one group version (discovery: /api/v1, /apis/apps/v1, ...)."""
    gv = f"{group}/{version}" if group else version
    if group not in ("", *GROUPS) or version not in (["v1"] if not group else GROUPS[group]):
        return None
    resources: list[dict[str, object]] = []
    for k in KINDS:
        if k.group != group or k.version != version:
            continue
        resources.append({"name": k.plural, "singularName": k.singular or k.kind.lower(), "namespaced": k.namespaced,
                          "kind": k.kind, "verbs": list(k.verbs), "shortNames": list(k.short)})
        for sub, (skind, sgroup, sversion, verbs) in SUBRESOURCES.get(k.plural, {}).items():
            entry: dict[str, object] = {"name": f"{k.plural}/{sub}", "singularName": "", "namespaced": k.namespaced,
                                        "kind": skind, "verbs": list(verbs)}
            if sgroup:
                entry.update(group=sgroup, version=sversion)
            resources.append(entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def group_list() -> dict[str, object]:
    groups = []
    for g, versions in GROUPS.items():
        vs = [{"groupVersion": f"{g}/{v}", "version": v} for v in versions]
        groups.append({"name": g, "versions": vs, "preferredVersion": vs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
