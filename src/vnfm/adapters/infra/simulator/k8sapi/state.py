"""Where the simulated API keeps its objects: in the twin's state of the cluster's VNF instance.

Nodes, pods and PersistentVolumes are the twin's own records (`nodes`, `pods`, `pvs`: what the
cluster drivers' node steps change), shown as API objects; every other kind is stored whole under
`api.objects.<plural>` ("<namespace>/<name>" or "<name>"). `api.rv` is the cluster's
resourceVersion counter, bumped by every write through the API.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from typing import Any

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def api_state(st: dict[str, Any]) -> dict[str, Any]:
    a = st.setdefault("api", {})
    a.setdefault("rv", 1)
    a.setdefault("seq", 0)
    a.setdefault("objects", {})
    a.setdefault("node_ports", {})
    a.setdefault("cluster_ips", {})
    return a


def objects(st: dict[str, Any], plural: str) -> dict[str, dict[str, Any]]:
    return api_state(st)["objects"].setdefault(plural, {})


def key_of(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def bump(st: dict[str, Any]) -> str:
    a = api_state(st)
    a["rv"] = int(a["rv"]) + 1
    return str(a["rv"])


def rv(st: dict[str, Any]) -> str:
    return str(api_state(st)["rv"])


def next_seq(st: dict[str, Any]) -> int:
    a = api_state(st)
    a["seq"] = int(a["seq"]) + 1
    return int(a["seq"])


def now_ts() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_of(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def stable_uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(parts)))


_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the characters Kubernetes uses in generated suffixes


def suffix(seed: str, length: int = 5) -> str:
    """A deterministic generated-name suffix for `seed`."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:length])


def template_hash(template: Any) -> str:
    return suffix(json.dumps(template, sort_keys=True), 10)
