"""The nodes of a cluster, read through its Kubernetes VIM (one `list_node` call): Ready condition
and role, for the health watcher (vnfm.service.ports.ClusterNodes).

The watcher asks every cluster every few seconds, so the client of each VIM is kept (at most
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

from vnfm.adapters.kube.client import VimAccess, api_client
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import Vim
from vnfm.service.ports import NodeState

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
