"""A single-master kubeadm cluster becoming HA on the twin: the control-plane endpoint moves to the
VIP (certificate SANs, kubeadm-config, kubeconfigs, kube-proxy, cluster-info); the kubelets are
pointed at it by the restore's `KubeletServer` (twin/restore.py). As strict as the real script: the
move waits for the API through the new endpoint, so it fails unless a master's keepalived holds the
VIP and that master's HAProxy forwards the port to a control plane."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on
from vnfm.adapters.infra.simulator.twin.certs import require_admin
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.kubeadm import MoveControlPlaneEndpoint


def vip_answers(st: dict[str, Any], endpoint: str) -> list[str]:
    """The control planes the API reaches through `endpoint` (VIP:port): a host whose keepalived holds
    the VIP (the highest priority among those configured for it) forwards to its HAProxy backends
    that are control planes of the cluster (joined: their API server runs as a static pod whether
    or not their kubelet is Ready at the moment). Empty: nothing answers."""
    vip, _, port = endpoint.rpartition(":")
    holders = sorted(((h["keepalived"]["priority"], sid) for sid, h in st["hosts"].items()
                      if (h.get("keepalived") or {}).get("vip") == vip and node_on(st, sid, "master")),
                     reverse=True)
    if not holders:
        return []
    lb = st["hosts"][holders[0][1]].get("haproxy") or {}
    if str(lb.get("frontend_port")) != port:
        return []
    joined = {n["name"] for n in st["nodes"].values() if n["role"] == "master"}
    return [b[0] for b in lb.get("backends") or [] if b[0] in joined]


def move_endpoint(tw: TwinHost, host: str, sid: str, step: MoveControlPlaneEndpoint) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        if node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "this host is not a control plane")
        require_admin(tw, st, host, sid, step)
        c = st["cluster"]
        if c.get("endpoint") == step.endpoint and set(step.cert_sans) <= set(c.get("cert_sans") or []):
            return False
        if not vip_answers(st, step.endpoint):
            raise StepFailed(host, step, f"the API did not answer at https://{step.endpoint} within "
                                         f"{step.deadline_s:g}s (no keepalived VIP / HAProxy backend serves it)")
        c["endpoint"] = step.endpoint
        c["cert_sans"] = sorted(set(c.get("cert_sans") or []) | set(step.cert_sans))
        c["kube_proxy_server"] = c["cluster_info_server"] = f"https://{step.endpoint}"
        st["hosts"].setdefault(sid, {})["kubeconfig_server"] = f"https://{step.endpoint}"
        return True

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {MoveControlPlaneEndpoint: move_endpoint}
