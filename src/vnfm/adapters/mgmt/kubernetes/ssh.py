"""The SSH side: the Kubernetes steps run as idempotent scripts (./scripts) on the VNFC hosts, the
etcd/HAProxy/hosts steps through vnfm.nodesteps' SSH executor. One connection per host, reused;
bounded concurrency (SshExecutor). Host keys: the pin recorded per VNFC in the driver state is
the target's known key; a first contact records it there."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from vnfm.adapters.mgmt.kubernetes.steps import (
    ApplyPersistentVolume,
    ContainerdRegistries,
    DeleteNode,
    DeletePersistentVolumes,
    DrainNode,
    InstallNfsClient,
    JoinInfo,
    KeepalivedVip,
    KubeadmInit,
    KubeadmJoin,
    LabelNode,
    NfsExports,
    NodeRegistryConfig,
    PrepareNode,
    PrepareVolume,
    VimToken,
    WaitNodeReady,
)
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps import render
from vnfm.nodesteps.ssh_executor import SshStepExecutor
from vnfm.nodesteps.steps import NodeStep, StepResult

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
            NodeRegistryConfig: self._registry_client,  # nodesteps' registry_client script
            ContainerdRegistries: self._containerd_registries,
            PrepareVolume: self._prepare_volume,
            NfsExports: self._nfs_exports,
            InstallNfsClient: self._nfs_client,
            ApplyPersistentVolume: self._apply_pv,
            DeletePersistentVolumes: self._delete_pvs,
        })

    async def close(self) -> None:
        await self.ssh.close()

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        """Connect to every host: a first contact pins its key, a later one must present the pinned
        key (HostKeyChanged otherwise, before any credential is sent)."""
        await self.ssh.fan_out([self.target(h) for h in dict.fromkeys(hosts)], self.ssh.connect)

    async def _k8s(self, t: SshTarget, step: NodeStep, name: str, inputs: dict[str, str],
                   secrets: dict[str, str] | None = None, timeout: float | None = None) -> dict[str, str]:
        return await self._script(t, step, name, inputs, secrets, timeout, text=k8s_script(name))

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

    # ------------------------------------------------------------------ registries (seed 003)
    async def _containerd_registries(self, t: SshTarget, s: ContainerdRegistries) -> StepResult:
        out = await self._k8s(t, s, "containerd_registries",
                              {"CONFIG_PATH": s.config_path, "CONFIG_FILE": s.config_file, "DEADLINE_S": "60"},
                              {"AUTH_V2": s.auth_block("io.containerd.grpc.v1.cri"),
                               "AUTH_V3": s.auth_block("io.containerd.cri.v1.images")})
        return StepResult(self._changed(out))

    # ------------------------------------------------------------------ storage (seed 001)
    async def _prepare_volume(self, t: SshTarget, s: PrepareVolume) -> StepResult:
        out = await self._k8s(t, s, "prepare_volume", {
            "VOLUME_ID": s.volume_id, "DEVICE": s.device or "", "FS_TYPE": s.fs_type, "MOUNT_TO": s.mount_to,
            "FSTAB": s.fstab, "DEADLINE_S": "120"}, timeout=300)
        return StepResult(self._changed(out), {"device": out.get("device", ""),
                                               "formatted": out.get("formatted") == "true"})

    async def _nfs_exports(self, t: SshTarget, s: NfsExports) -> StepResult:
        first = s.exports[0]
        out = await self._script(t, s, "nfs_export", {
            "GANESHA_CONF": ganesha_conf(s),
            "CONF_PATH": first.config_path,
            "PIDFILE": first.pidfile,
            "EXPORT_PATHS": "\n".join(e.path for e in s.exports),
            "PORT": str(first.port),
            "CHECK_ADDR": first.bind_addr or "127.0.0.1",
            "DEADLINE_S": str(int(first.deadline_s)),
        }, timeout=first.deadline_s + 30)
        return StepResult(self._changed(out), {"pseudo": [e.pseudo_path for e in s.exports]})

    async def _nfs_client(self, t: SshTarget, s: InstallNfsClient) -> StepResult:
        return StepResult(self._changed(await self._k8s(t, s, "nfs_client", {}, timeout=600)))

    async def _apply_pv(self, t: SshTarget, s: ApplyPersistentVolume) -> StepResult:
        out = await self._k8s(t, s, "apply_pv", {"PV_NAME": s.name, "MANIFEST": s.manifest,
                                                 "NFS_SERVER": s.nfs_server, "NFS_PATH": s.nfs_path})
        return StepResult(self._changed(out))

    async def _delete_pvs(self, t: SshTarget, s: DeletePersistentVolumes) -> StepResult:
        if not s.names:
            return StepResult(False)
        out = await self._k8s(t, s, "delete_pvs", {"PV_NAMES": "\n".join(s.names)})
        return StepResult(self._changed(out))


def ganesha_conf(step: NfsExports) -> str:
    """One nfs-ganesha configuration with every export of `step`: the EXPORT blocks nodesteps renders
    for each NfsExport, under the shared core/log sections it renders for the first."""
    texts = [render.render_ganesha_conf(e) for e in step.exports]
    head, sep, _ = texts[0].partition("EXPORT {\n")
    tail = texts[0][texts[0].index("LOG {\n"):]
    blocks = []
    for text in texts:
        start, end = text.index("EXPORT {\n"), text.index("LOG {\n")
        blocks.append(text[start:end])
    assert sep and tail
    return head + "".join(blocks) + tail


def ssh_executor(ctx: LcmContext, cp: ClusterParams, nodes: list[Node]) -> K8sSshExecutor:
    by_addr = {n.ssh: n for n in nodes}
    pins: dict[str, str] = ctx.state.setdefault("host_keys", {})

    def resolve(host: str) -> SshTarget:
        n = by_addr.get(host)
        if n is None:
            raise OperationFailed(f"{host} is not a node of this cluster")
        p: Any = cp.master if n.master else cp.worker
        if n.role == "storage" and cp.storage_server is not None:
            p = cp.storage_server
        return SshTarget(host, username=p.username, password=p.password, private_key=p.ssh_private_key,
                         known_host_key=pins.get(n.vnfc.id))

    def on_key(target: SshTarget, key: str) -> None:
        n = by_addr.get(target.host)
        if n is not None:
            pins[n.vnfc.id] = key

    return K8sSshExecutor(SshExecutor(on_host_key=on_key), resolve)
