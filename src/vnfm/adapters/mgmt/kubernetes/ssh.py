"""The SSH side: the Kubernetes steps run as idempotent scripts (./scripts) on the VNFC hosts, the
etcd/HAProxy/hosts steps through vnfm.nodesteps' SSH executor. One connection per host, reused;
bounded concurrency (SshExecutor). Host keys: the pin recorded per VNFC in the driver state is
the target's known key; a first contact records it there."""

from __future__ import annotations

import asyncio
import base64
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from vnfm.adapters.mgmt.kubernetes.steps import (
    DeleteNode,
    DrainNode,
    JoinInfo,
    KeepalivedVip,
    KubeadmInit,
    KubeadmJoin,
    LabelNode,
    PrepareNode,
    VimToken,
    WaitNodeReady,
)
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.ssh_executor import SshStepExecutor, parse_output
from vnfm.nodesteps.steps import NodeStep, StepFailed, StepResult

if TYPE_CHECKING:
    from vnfm.adapters.mgmt.kubernetes.driver import Node
    from vnfm.adapters.mgmt.kubernetes.params import ClusterParams
    from vnfm.service.ports import LcmContext


@cache
def k8s_script(name: str) -> str:
    return resources.files("vnfm.adapters.mgmt.kubernetes").joinpath("scripts", f"{name}.sh").read_text()


class K8sSshExecutor(SshStepExecutor):
    def __init__(self, ssh: SshExecutor, resolve: Any, timeout: float = 900.0) -> None:
        super().__init__(ssh, resolve, timeout)
        self._handlers.update({
            PrepareNode: self._prepare,
            KubeadmInit: self._init,
            JoinInfo: self._join_info,
            KubeadmJoin: self._join,
            WaitNodeReady: self._wait_ready,
            DrainNode: self._drain,
            DeleteNode: self._delete,
            LabelNode: self._label,
            KeepalivedVip: self._keepalived,
            VimToken: self._vim_token,
        })

    async def close(self) -> None:
        await self.ssh.close()

    async def verify_host_keys(self, hosts: list[str]) -> None:
        """Connect to every host: a first contact pins its key, a later one must present the pinned
        key (HostKeyChanged otherwise, before any credential is sent)."""
        results = await asyncio.gather(*(self.ssh.connect(self.target(h)) for h in dict.fromkeys(hosts)),
                                       return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    async def _k8s(self, t: SshTarget, step: NodeStep, name: str, inputs: dict[str, str],
                   secrets: dict[str, str] | None = None, timeout: float | None = None) -> dict[str, str]:
        res = await self.ssh.run_script(t, k8s_script(name), env_secrets=secrets, stdin_vars=inputs,
                                        timeout=timeout or self.timeout, name=name)
        if not res.ok:
            tail = "\n".join(res.stderr.strip().splitlines()[-15:]) or f"exit status {res.exit_status}"
            raise StepFailed(t.host, step, tail)
        return parse_output(res.stdout)

    async def _prepare(self, t: SshTarget, s: PrepareNode) -> StepResult:
        out = await self._k8s(t, s, "prepare_node", {"NODE": s.node, "K8S_VERSION": s.version,
                                                     "NO_PROXY_LIST": s.no_proxy},
                              {"HTTP_PROXY_URL": s.http_proxy or "", "HTTPS_PROXY_URL": s.https_proxy or ""})
        return StepResult(self._changed(out))

    async def _init(self, t: SshTarget, s: KubeadmInit) -> StepResult:
        out = await self._k8s(t, s, "kubeadm_init", {
            "NODE": s.node, "ADVERTISE": s.advertise_address, "ENDPOINT": s.control_plane_endpoint,
            "POD_CIDR": s.pod_cidr, "SVC_CIDR": s.service_cidr, "K8S_VERSION": s.version,
            "CERT_SANS": ",".join(s.cert_sans)})
        return StepResult(self._changed(out))

    async def _join_info(self, t: SshTarget, s: JoinInfo) -> StepResult:
        out = await self._k8s(t, s, "join_info", {})
        return StepResult(False, {"token": out.get("token", ""), "ca_cert_hash": out.get("ca_cert_hash", ""),
                                  "certificate_key": out.get("certificate_key", "")})

    async def _join(self, t: SshTarget, s: KubeadmJoin) -> StepResult:
        out = await self._k8s(t, s, "kubeadm_join", {
            "NODE": s.node, "ADVERTISE": s.advertise_address, "ENDPOINT": s.endpoint, "CA_HASH": s.ca_cert_hash,
            "CONTROL_PLANE": "1" if s.control_plane else "0"},
            {"TOKEN": s.token, "CERT_KEY": s.certificate_key or ""})
        return StepResult(self._changed(out))

    async def _wait_ready(self, t: SshTarget, s: WaitNodeReady) -> StepResult:
        await self._k8s(t, s, "wait_node_ready", {"NODE": s.node, "DEADLINE_S": f"{s.deadline_s:g}"},
                        timeout=s.deadline_s + 30)
        return StepResult(False)

    async def _drain(self, t: SshTarget, s: DrainNode) -> StepResult:
        out = await self._k8s(t, s, "drain_node", {"NODE": s.node, "DEADLINE_S": f"{max(1, int(s.deadline_s))}"},
                              timeout=s.deadline_s + 60)
        return StepResult(self._changed(out))

    async def _delete(self, t: SshTarget, s: DeleteNode) -> StepResult:
        return StepResult(self._changed(await self._k8s(t, s, "delete_node", {"NODE": s.node})))

    async def _label(self, t: SshTarget, s: LabelNode) -> StepResult:
        labels = "\n".join(f"{k}={v}" for k, v in s.labels)
        return StepResult(self._changed(await self._k8s(t, s, "label_node", {"NODE": s.node, "LABELS": labels})))

    async def _keepalived(self, t: SshTarget, s: KeepalivedVip) -> StepResult:
        out = await self._k8s(t, s, "keepalived", {"VIP": s.vip, "LOCAL_ADDR": s.local_address,
                                                   "PRIORITY": str(s.priority), "PEERS": ",".join(s.peers),
                                                   "ROUTER_ID": str(s.router_id)})
        return StepResult(self._changed(out))

    async def _vim_token(self, t: SshTarget, s: VimToken) -> StepResult:
        out = await self._k8s(t, s, "vim_token", {"SA": s.service_account, "NS": s.namespace})
        ca = base64.b64decode(out.get("ca_pem_b64", "")).decode()
        return StepResult(self._changed(out), {"token": out.get("token", ""), "ca_pem": ca})


def ssh_executor(ctx: LcmContext, cp: ClusterParams, nodes: list[Node]) -> K8sSshExecutor:
    by_addr = {n.ssh: n for n in nodes}
    pins: dict[str, str] = ctx.state.setdefault("host_keys", {})

    def resolve(host: str) -> SshTarget:
        n = by_addr.get(host)
        if n is None:
            raise OperationFailed(f"{host} is not a node of this cluster")
        p = cp.master if n.master else cp.worker
        return SshTarget(host, username=p.username, password=p.password, private_key=p.ssh_private_key,
                         known_host_key=pins.get(n.vnfc.id))

    def on_key(target: SshTarget, key: str) -> None:
        n = by_addr.get(target.host)
        if n is not None:
            pins[n.vnfc.id] = key

    return K8sSshExecutor(SshExecutor(on_host_key=on_key), resolve)
