"""kubeadm steps over SSH: prepare a node, init, join information, join."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.kubeadm import (
    JoinInfo,
    KubeadmInit,
    KubeadmJoin,
    MoveControlPlaneEndpoint,
    PrepareNode,
)


async def prepare(ex: ScriptRunner, t: SshTarget, s: PrepareNode) -> StepResult:
    out = await ex.script(t, s, "prepare_node", {"NODE": s.node, "K8S_VERSION": s.version,
                                                 "NO_PROXY_LIST": s.no_proxy},
                          {"HTTP_PROXY_URL": s.http_proxy or "", "HTTPS_PROXY_URL": s.https_proxy or ""})
    return StepResult(changed(out))


async def init(ex: ScriptRunner, t: SshTarget, s: KubeadmInit) -> StepResult:
    out = await ex.script(t, s, "kubeadm_init", {
        "NODE": s.node, "ADVERTISE": s.advertise_address, "ENDPOINT": s.control_plane_endpoint,
        "POD_CIDR": s.pod_cidr, "SVC_CIDR": s.service_cidr, "K8S_VERSION": s.version,
        "CERT_SANS": ",".join(s.cert_sans), "EXISTING_ETCD": "1" if s.existing_etcd else "0"})
    return StepResult(changed(out))


async def join_info(ex: ScriptRunner, t: SshTarget, s: JoinInfo) -> StepResult:
    out = await ex.script(t, s, "join_info", {})
    return StepResult(False, {"token": out.get("token", ""), "ca_cert_hash": out.get("ca_cert_hash", ""),
                              "certificate_key": out.get("certificate_key", "")})


async def join(ex: ScriptRunner, t: SshTarget, s: KubeadmJoin) -> StepResult:
    out = await ex.script(t, s, "kubeadm_join", {
        "NODE": s.node, "ADVERTISE": s.advertise_address, "ENDPOINT": s.endpoint, "CA_HASH": s.ca_cert_hash,
        "CONTROL_PLANE": "1" if s.control_plane else "0"},
        {"TOKEN": s.token, "CERT_KEY": s.certificate_key or ""})
    return StepResult(changed(out))


async def move_endpoint(ex: ScriptRunner, t: SshTarget, s: MoveControlPlaneEndpoint) -> StepResult:
    out = await ex.script(t, s, "cp_endpoint_move", {"ENDPOINT": s.endpoint, "CERT_SANS": ",".join(s.cert_sans),
                                                     "DEADLINE_S": str(int(s.deadline_s))},
                          timeout=s.deadline_s + 60)
    return StepResult(changed(out))


HANDLERS: dict[type, Handler] = {
    PrepareNode: prepare,
    KubeadmInit: init,
    JoinInfo: join_info,
    KubeadmJoin: join,
    MoveControlPlaneEndpoint: move_endpoint,
}
