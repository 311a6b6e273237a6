"""The nodes of a Kubernetes VIM as its API server reports them (one `list_node` call, bounded in
time): `node_health`, the rows the web console shows for a cluster VNF; `cluster_nodes`, Ready
condition and role for the health watcher (vnfm.service.ports.ClusterNodes).

The watcher asks every cluster every few seconds, so its client of each VIM is kept (at most
`MAX_CLIENTS`, least recently used dropped) and its TLS connection reused: a new client per call
cost a TLS handshake each time (bench/watch_fleet.py: 6.5 ms of CPU per cluster and round). A
client is rebuilt when the VIM's server, CA or token changes."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from vnfm.adapters.kube.client import VimAccess, api_client, call
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import Vim
from vnfm.service.ports import NodeState

ROLE_LABEL = "node-role.kubernetes.io/"
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
MAX_CLIENTS = 4096

_lock = threading.Lock()
_clients: OrderedDict[str, tuple[str, Any, client.ApiClient]] = OrderedDict()  # vim id -> (key, ctx, client)


def cluster_nodes(vim: Vim) -> dict[str, NodeState]:
    api = _client(vim)
    try:
        nodes = client.CoreV1Api(api).list_node(_request_timeout=10)
    except ApiException as e:
        raise OperationFailed(f"Kubernetes VIM {vim.id}: API error {e.status}: {e.reason}") from None
    except (OSError, urllib3.exceptions.HTTPError) as e:
        _drop(vim.id)
        raise OperationFailed(f"Kubernetes VIM {vim.id}: API server unreachable or not trusted: "
                              f"{str(e)[:300]}") from None
    return {str(getattr(n.metadata, "name", "")): _state(n) for n in nodes.items}


def _client(vim: Vim) -> client.ApiClient:
    acc = VimAccess.of(vim)
    key = hashlib.sha256(f"{acc.server}\0{acc.ca_pem}\0{acc.token}".encode()).hexdigest()
    with _lock:
        got = _clients.get(vim.id)
        if got is not None and got[0] == key:
            _clients.move_to_end(vim.id)
            return got[2]
    ctx = api_client(vim)
    api = ctx.__enter__()
    with _lock:
        old = _clients.pop(vim.id, None)
        _clients[vim.id] = (key, ctx, api)
        evicted = [_clients.popitem(last=False)[1] for _ in range(max(0, len(_clients) - MAX_CLIENTS))]
    for _, octx, _ in [*([old] if old else []), *evicted]:
        with contextlib.suppress(Exception):
            octx.__exit__(None, None, None)
    return api


def _drop(vim_id: str) -> None:
    with _lock:
        got = _clients.pop(vim_id, None)
    if got is not None:
        with contextlib.suppress(Exception):
            got[1].__exit__(None, None, None)


def _state(node: Any) -> NodeState:
    labels = getattr(node.metadata, "labels", None) or {}
    role = "master" if any(k in labels for k in CONTROL_PLANE_LABELS) else "worker"
    cond = next((c for c in (node.status.conditions or []) if c.type == "Ready"), None)
    if cond is None:
        return NodeState(False, role, "no Ready condition")
    ready = cond.status == "True"
    return NodeState(ready, role, "" if ready else f"Ready is {cond.status}: {cond.reason or ''} {cond.message or ''}"
                     .strip())


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
