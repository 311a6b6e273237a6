"""The nodes of a Kubernetes VIM as its API server reports them: name, Ready condition, kubelet
version, roles (what the web console shows for a cluster VNF). One list call, bounded in time."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from vnfm.adapters.kube.client import call
from vnfm.domain.model import Vim

ROLE_LABEL = "node-role.kubernetes.io/"


def _row(node: dict[str, Any]) -> dict[str, Any]:
    meta, status = node.get("metadata") or {}, node.get("status") or {}
    ready: dict[str, Any] = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    labels = meta.get("labels") or {}
    return {
        "name": str(meta.get("name", "")),
        "ready": ready.get("status") == "True",
        "reason": str(ready.get("reason") or ready.get("message") or ""),
        "since": str(ready.get("lastTransitionTime") or ""),
        "version": str((status.get("nodeInfo") or {}).get("kubeletVersion") or ""),
        "roles": sorted(k[len(ROLE_LABEL):] for k in labels if k.startswith(ROLE_LABEL)),
    }


def node_health(vim: Vim, timeout: float = 5.0) -> list[dict[str, Any]]:
    """The VIM's nodes by name; OperationFailed (naming the VIM, never its token) when it cannot be read."""

    def read(api: client.ApiClient) -> list[dict[str, Any]]:
        nodes = client.CoreV1Api(api).list_node(_request_timeout=timeout)
        items = api.sanitize_for_serialization(nodes).get("items") or []
        return sorted((_row(n) for n in items), key=lambda r: r["name"])

    return call(vim, read)
