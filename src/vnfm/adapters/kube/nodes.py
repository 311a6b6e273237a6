"""The nodes of a cluster, read through its Kubernetes VIM (one `list_node` call): Ready condition
and role, for the health watcher (vnfm.service.ports.ClusterNodes)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from vnfm.adapters.kube.client import call
from vnfm.domain.model import Vim
from vnfm.service.ports import NodeState

CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def cluster_nodes(vim: Vim) -> dict[str, NodeState]:
    def fn(api: client.ApiClient) -> dict[str, NodeState]:
        nodes = client.CoreV1Api(api).list_node(_request_timeout=10)
        return {str(getattr(n.metadata, "name", "")): _state(n) for n in nodes.items}

    return call(vim, fn)


def _state(node: Any) -> NodeState:
    labels = getattr(node.metadata, "labels", None) or {}
    role = "master" if any(k in labels for k in CONTROL_PLANE_LABELS) else "worker"
    cond = next((c for c in (node.status.conditions or []) if c.type == "Ready"), None)
    if cond is None:
        return NodeState(False, role, "no Ready condition")
    ready = cond.status == "True"
    return NodeState(ready, role, "" if ready else f"Ready is {cond.status}: {cond.reason or ''} {cond.message or ''}"
                     .strip())
