"""What the simulated cloud's node-step twin keeps and shares: its state layout (per VNF instance,
in the SimCloud extras under "k8s"), its latencies, and the contract its step handlers use."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

KEY = "k8s"


@dataclass
class TwinConfig:
    """Latencies (seconds) of the twin. `step_latency` is keyed by step kind."""

    join_time: float = 0.0  # kubeadm join of one node
    # What the twin observed while running (e.g. how many joins ran at once): makes parallelism
    # checkable without timing assertions.
    observed: dict[str, int] = field(default_factory=dict)
    ready_delay: float = 0.0  # from join until the node reports Ready
    step_latency: dict[str, float] = field(default_factory=dict)
    default_latency: float = 0.0  # of the step kinds `step_latency` does not name
    poll: float = 0.01
    # The simulated clusters' Kubernetes API (k8sapi.server.KubeApiServer); None: the process's
    # shared listener. The VIM a cluster driver registers points at it.
    kube_api: Any = None
    # Certificates a control plane gets (init, join, renewal) last this long (kubeadm: one year);
    # the twin's clock (`clock`, Unix time) decides when they have expired. Tests shorten the one
    # or move the other (twin/certs.py).
    cert_validity_s: float = 365 * 86400.0
    clock: Callable[[], float] = time.time
    # an etcd learner (kubeadm's EtcdLearnerMode join, or `member add --learner`) is in sync with
    # the leader this long after it was added: promotion is refused before (twin/etcd.py)
    learner_sync_time: float = 0.0
    restart_time: float = 0.0  # a control plane's static pods restarting after a certificate renewal


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def fake_ca() -> tuple[str, str]:
    body = base64.b64encode(secrets.token_bytes(96)).decode()
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
        + "\n-----END CERTIFICATE-----\n"
    return pem, "sha256:" + sha(pem)


def empty() -> dict[str, Any]:
    return {"cluster": {}, "nodes": {}, "pods": {}, "pdbs": {}, "etcd": {"members": {}},
            "hosts": {}, "service_accounts": {}, "vim": None, "faults": {}, "volumes": {}, "pvs": {}}


class TwinHost(Protocol):
    """What a twin step handler may use: the simulated cloud, the instance, latencies, state."""

    sim: Any
    instance_id: str
    config: TwinConfig

    def tx(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """Run `fn` on the instance's twin state inside one simulated-cloud transaction."""
        ...

    def state(self) -> dict[str, Any]: ...

    def peek(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """`fn` of the twin state, read without a copy: `fn` changes nothing and copies what it keeps."""
        ...


def node_on(st: dict[str, Any], sid: str, role: str | None = None) -> dict[str, Any] | None:
    for n in st["nodes"].values():
        if n.get("server_id") == sid and (role is None or n["role"] == role):
            return dict(n)
    return None


def kubelet_trusts(st: dict[str, Any], n: dict[str, Any]) -> bool:
    """Whether node `n`'s kubelet trusts the cluster's API server: the CA it was given when it joined
    and the API server address in its kubelet.conf are the cluster's (a master restored with another
    CA, or at another address the kubelet was not pointed at, leaves it NotReady)."""
    h = st["hosts"].get(n.get("server_id")) or {}
    c = st["cluster"]
    return h.get("trusts_ca") in (None, c.get("ca_cert_hash")) and h.get("kubelet_server") in (None, c.get("endpoint"))
