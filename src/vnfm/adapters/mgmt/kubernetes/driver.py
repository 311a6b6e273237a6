"""KubernetesClusterDriver: turns the VMs of a VNF instance into a kubeadm Kubernetes cluster and
keeps it whole through scale and heal (seeds 000, 004; cluster parts of 001/003).

Every hook is a sequence of idempotent typed steps (vnfm.nodesteps + .steps), so a retry re-runs
the hook and converges. The executor is the simulated cloud's twin when the instance runs on the
simulator VIM, SSH otherwise.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import posixpath
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from vnfm.adapters.mgmt.kubernetes import params as P
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
    RegistryAuthEntry,
    VimToken,
    WaitNodeReady,
    node_name,
)
from vnfm.adapters.mgmt.kubernetes.twin import TwinConfig, TwinExecutor
from vnfm.domain.errors import BadRequest, OperationFailed
from vnfm.domain.model import LcmOperation, Vim, VnfInstance
from vnfm.domain.resources import Vnfc
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.steps import (
    Backend,
    EtcdHealth,
    EtcdMemberList,
    EtcdMemberRemove,
    EtcdTls,
    HaproxySetBackends,
    NfsExport,
    SetHostsEntries,
    StepExecutor,
)
from vnfm.service.ports import LcmContext, MgmtDriver

log = logging.getLogger(__name__)

API_PORT = 6443
LB_PORT = 8383  # HAProxy on every master, in front of all API servers (HA)
ETCD_ENDPOINTS = ("https://127.0.0.1:2379",)
ETCD_TLS = EtcdTls("/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                   "/etc/kubernetes/pki/etcd/healthcheck-client.key")
VIM_CONN_ID = "kubernetes-cluster"


class HostKeyMismatch(OperationFailed):
    pass


@dataclass(frozen=True)
class Node:
    vnfc: Vnfc
    role: str  # "master" | "worker" | "storage" (the storage server: never a cluster node)
    name: str  # Kubernetes node name
    ssh: str  # address the VNFM reaches it at
    nic: str  # address the cluster uses

    @property
    def master(self) -> bool:
        return self.role == "master"


class Cluster:
    """The cluster's topology for one hook, and the executor to act on it."""

    def __init__(self, ctx: LcmContext, cp: P.ClusterParams, ex: StepExecutor, nodes: list[Node],
                 storage: Node | None = None) -> None:
        self.ctx = ctx
        self.p = cp
        self.ex = ex
        self.nodes = nodes  # cluster nodes only
        self.storage = storage  # the storage server (seed 001), when configured

    @property
    def masters(self) -> list[Node]:
        return [n for n in self.nodes if n.master]

    @property
    def workers(self) -> list[Node]:
        return [n for n in self.nodes if not n.master]

    def of(self, vnfcs: Sequence[Vnfc]) -> list[Node]:
        ids = {v.id for v in vnfcs}
        return [n for n in self.nodes if n.vnfc.id in ids]


# ============================================================================= topology helpers
def _role_vdus(flavour: Flavour, cp: P.ClusterParams) -> tuple[set[str], set[str]]:
    def vdus(node: P.NodeParams) -> set[str]:
        out: set[str] = set()
        for delta in flavour.aspect_deltas.get(node.aspect_id or "", {}).values():
            out |= set(delta)
        for cp_name in (node.ssh_cp_name, node.nic_cp_name):
            c = flavour.cps.get(cp_name)
            if c is not None:
                out.add(c.vdu_id)
        return out

    masters, workers = vdus(cp.master), vdus(cp.worker)
    both = masters & workers
    if both:
        raise OperationFailed(f"VDU(s) {', '.join(sorted(both))} are both master and worker by "
                              "k8s_cluster_installation_param (aspect_id / CP names)")
    if not masters:
        raise OperationFailed(f"no VDU of flavour '{flavour.id}' is a master: master_node.aspect_id "
                              f"'{cp.master.aspect_id}' has no deltas and CP '{cp.master.ssh_cp_name}' is unknown")
    return masters, workers


def _address(v: Vnfc, cp_name: str, *, floating: bool, what: str) -> str:
    addr = v.address(cp_name, floating_first=floating)
    if addr is None:
        addr = (v.metadata.get("floating_ip_resources") or {}).get(cp_name)
    if not addr:
        raise OperationFailed(f"VNFC {v.name or v.id} has no address for {what} '{cp_name}'")
    return str(addr)


def topology(ctx: LcmContext, cp: P.ClusterParams, vnfcs: Sequence[Vnfc]) -> list[Node]:
    masters, workers = _role_vdus(ctx.flavour, cp)
    out: list[Node] = []
    for v in sorted(vnfcs, key=lambda v: v.seq):
        if v.vdu_id in masters:
            np_: P.NodeParams = cp.master
            role = "master"
        elif v.vdu_id in workers:
            np_, role = cp.worker, "worker"
        else:
            continue  # e.g. a storage server: not a cluster node
        ssh = _address(v, np_.ssh_cp_name, floating=True, what="ssh_cp_name")
        nic = _address(v, np_.nic_cp_name, floating=False, what="nic_cp_name")
        out.append(Node(v, role, node_name(v.name or v.id), ssh, nic))
    return out


def storage_node(ctx: LcmContext, cp: P.ClusterParams, vnfcs: Sequence[Vnfc]) -> Node | None:
    """The storage server VNFC (seed 001): the VNFC of the VDU that has `storage_server.ssh_cp_name`."""
    ss = cp.storage_server
    if ss is None:
        return None
    key = f"{P.ROOT}.storage_server.ssh_cp_name"
    c = ctx.flavour.cps.get(ss.ssh_cp_name)
    if c is None:
        raise OperationFailed(f"{key}: CP '{ss.ssh_cp_name}' is not in flavour '{ctx.flavour.id}' (use a flavour "
                              "with a storage server VDU, e.g. simple_pv)")
    masters, workers = _role_vdus(ctx.flavour, cp)
    if c.vdu_id in masters | workers:
        raise OperationFailed(f"{key}: CP '{ss.ssh_cp_name}' belongs to VDU '{c.vdu_id}', a Kubernetes node, "
                              "not a storage server")
    v = next((v for v in sorted(vnfcs, key=lambda v: v.seq) if v.vdu_id == c.vdu_id), None)
    if v is None:
        return None
    ssh = _address(v, ss.ssh_cp_name, floating=True, what="storage_server.ssh_cp_name")
    nic = _address(v, ss.ssh_cp_name, floating=False, what="storage_server.ssh_cp_name")
    return Node(v, "storage", node_name(v.name or v.id), ssh, nic)


async def _gather(aws: Sequence[Awaitable[Any]]) -> list[Any]:
    """Run in parallel; raise the first failure after all finished."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)


# ============================================================================= the driver
class KubernetesClusterDriver(MgmtDriver):
    name = "kubernetes"

    def __init__(self, twin_config: TwinConfig | None = None,
                 ssh_factory: Callable[[LcmContext, P.ClusterParams, list[Node]], StepExecutor] | None = None) -> None:
        self.twin_config = twin_config or TwinConfig()
        self.ssh_factory = ssh_factory

    # ------------------------------------------------------------------ request-time validation
    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance) -> None:
        op = str(operation)
        extra = request.get("additionalParams") or {}
        if op == LcmOperation.INSTANTIATE:
            P.parse(extra)
            return
        if op not in (LcmOperation.SCALE, LcmOperation.HEAL):
            return
        cp = P.parse(P.override(instance.additional_params, extra))
        if op == LcmOperation.SCALE:
            if cp.master.aspect_id is not None and request.get("aspectId") == cp.master.aspect_id:
                raise BadRequest(f"aspectId '{cp.master.aspect_id}' is the master_node aspect: scaling control "
                                 "planes is not supported (it would change etcd membership); scale the worker "
                                 "aspect, or heal a master to replace it")
            return
        ids = request.get("vnfcInstanceId")
        if not ids:
            return  # entire cluster
        ids = [ids] if isinstance(ids, str) else list(ids)
        state = instance.driver_state.get(self.name) or {}
        master_vdus = set(state.get("master_vdus") or [])
        if not master_vdus:
            return  # unknown yet: decided in heal_start
        masters = [v for v in instance.resources.vnfcs if v.vdu_id in master_vdus]
        healed = [v for v in masters if v.id in ids]
        if healed:
            self._check_quorum(len(masters), healed)

    @staticmethod
    def _check_quorum(n_masters: int, healed: Sequence[Vnfc]) -> None:
        names = ", ".join(v.name or v.id for v in healed)
        if n_masters == 1:
            raise BadRequest(f"healing master {names} would lose etcd quorum: the cluster has a single "
                             "control plane (1 etcd member); heal the entire VNF instead (omit vnfcInstanceId)")
        survivors = n_masters - len(healed)
        if survivors < n_masters // 2 + 1:
            raise BadRequest(f"healing masters {names} at once would lose etcd quorum: {survivors} of "
                             f"{n_masters} members would remain (quorum is {n_masters // 2 + 1}); heal them "
                             "one at a time")

    # ------------------------------------------------------------------ plumbing
    def _params(self, ctx: LcmContext) -> P.ClusterParams:
        if ctx.operation == LcmOperation.INSTANTIATE:
            raw = ctx.additional_params
        else:
            raw = P.override(ctx.instance.additional_params, (ctx.request or {}).get("additionalParams") or {})
        try:
            cp = P.parse(raw)
        except BadRequest as e:
            raise OperationFailed(e.detail) from None
        for w in cp.warnings:
            ctx.progress(w)
        return cp

    def _executor(self, ctx: LcmContext, cp: P.ClusterParams, nodes: list[Node]) -> StepExecutor:
        vim_type = ctx.infra_ctx.vim.vim_type if ctx.infra_ctx is not None else ""
        if vim_type == "simulator":
            sim = ctx.services.get("sim")
            if sim is None:
                raise OperationFailed("the simulated cloud is not available to the Kubernetes driver")
            return TwinExecutor(sim, ctx.instance.id, self.twin_config)
        if self.ssh_factory is not None:
            return self.ssh_factory(ctx, cp, nodes)
        from vnfm.adapters.mgmt.kubernetes.ssh import ssh_executor

        return ssh_executor(ctx, cp, nodes)

    def _cluster(self, ctx: LcmContext, vnfcs: Sequence[Vnfc] | None = None) -> Cluster:
        cp = self._params(ctx)
        nodes = topology(ctx, cp, ctx.resources.vnfcs if vnfcs is None else vnfcs)
        storage = storage_node(ctx, cp, ctx.resources.vnfcs)
        masters, workers = _role_vdus(ctx.flavour, cp)
        ctx.state["master_vdus"] = sorted(masters)
        ctx.state["worker_vdus"] = sorted(workers)
        if storage is not None:
            ctx.state["storage_vdu"] = storage.vnfc.vdu_id
        return Cluster(ctx, cp, self._executor(ctx, cp, [*nodes, *([storage] if storage else [])]), nodes, storage)

    async def _close(self, c: Cluster) -> None:
        close = getattr(c.ex, "close", None)
        if close is not None:
            await close()

    # ------------------------------------------------------------------ host keys
    async def _pin(self, c: Cluster, nodes: Sequence[Node], repin: Sequence[Node] = ()) -> None:
        """Pin each VNFC's host key at first contact; verify it afterwards; re-pin only `repin`."""
        pins: dict[str, str] = c.ctx.state.setdefault("host_keys", {})
        for n in repin:
            pins.pop(n.vnfc.id, None)
        getter = getattr(c.ex, "host_key", None)
        if getter is None:
            # the SSH executor pins and verifies during the key exchange itself: contact every
            # node now, so a changed key fails the hook before anything was changed anywhere
            verify = getattr(c.ex, "verify_host_keys", None)
            if verify is not None:
                await verify([n.ssh for n in nodes])
            return

        for n in nodes:
            key = getter(n.ssh)
            if n.vnfc.id not in pins:
                pins[n.vnfc.id] = key
            elif pins[n.vnfc.id] != key:
                raise HostKeyMismatch(f"host key of {n.vnfc.name} ({n.ssh}) changed since it was pinned; refusing "
                                      "to use it (heal the VNFC if it was legitimately rebuilt)")

    # ------------------------------------------------------------------ building blocks
    def _endpoint(self, c: Cluster) -> tuple[str, str]:
        """(control-plane endpoint address:port, API URL for the VIM)."""
        masters = c.masters
        if not masters:
            raise OperationFailed("the cluster has no master node")
        if len(masters) == 1 and c.ctx.state.get("ha") is not True:
            m = masters[0]
            api = self._cluster_address(c, m) or m.ssh
            return f"{m.nic}:{API_PORT}", f"https://{api}:{API_PORT}"
        vip = self._vip(c)
        return f"{vip}:{LB_PORT}", f"https://{vip}:{LB_PORT}"

    def _cluster_address(self, c: Cluster, m: Node) -> str | None:
        name = c.p.master.cluster_cp_name
        try:
            return _address(m.vnfc, name, floating=True, what="cluster_cp_name")
        except OperationFailed:
            return None

    def _vip(self, c: Cluster) -> str:
        st = c.ctx.state
        if st.get("vip"):
            return str(st["vip"])
        vip = c.p.master.cluster_vip
        if vip is None:
            name = c.p.master.cluster_cp_name
            own = {n.nic for n in c.masters} | {n.ssh for n in c.masters}
            for v in c.ctx.resources.vnfcs:  # a dedicated VIP resource (e.g. "vip_CP" floating IP name)
                addr = (v.metadata.get("floating_ip_resources") or {}).get(name)
                if addr and addr not in own:
                    vip = addr
        if vip is None:
            vip = self._reserve_vip(c)
        st["vip"] = vip
        return vip

    def _reserve_vip(self, c: Cluster) -> str:
        """cluster_cp_name is the masters' own CP: on the simulated cloud pick a free address at the top
        of that CP's subnet (the cloud allocates from the bottom); elsewhere the VIP must be given."""
        sim = c.ctx.services.get("sim")
        m = c.masters[0]
        cpr = m.vnfc.cp(c.p.master.nic_cp_name)
        if sim is None or cpr is None or not isinstance(c.ex, TwinExecutor):
            raise OperationFailed("an HA cluster needs a VIP: set additionalParams.k8s_cluster_installation_param."
                                  "master_node.cluster_vip (cluster_cp_name names the masters' own CP)")
        state = sim.state()
        net = state["networks"].get(cpr.network_id or "")
        if net is None:
            raise OperationFailed(f"network of CP {cpr.cpd_id} is unknown: cannot choose a VIP")
        used = {f["ip_address"] for p in state["ports"].values() for f in p["fixed_ips"]}
        hosts = list(ipaddress.ip_network(net["cidr"]).hosts())
        for h in reversed(hosts):
            if str(h) not in used:
                return str(h)
        raise OperationFailed(f"no free address for the VIP in {net['cidr']}")

    def _backends(self, masters: Sequence[Node]) -> tuple[Backend, ...]:
        return tuple(Backend(m.name, m.nic, API_PORT) for m in masters)

    async def _set_lb(self, c: Cluster, on: Sequence[Node], backends_of: Sequence[Node]) -> None:
        step = HaproxySetBackends(self._backends(backends_of), frontend_port=LB_PORT)
        await _gather([c.ex.run(m.ssh, step) for m in on])

    async def _keepalived(self, c: Cluster, masters: Sequence[Node]) -> None:
        vip = self._vip(c)
        order = {m.vnfc.id: i for i, m in enumerate(c.masters)}
        await _gather([c.ex.run(m.ssh, KeepalivedVip(vip, m.nic, max(1, 150 - 10 * order.get(m.vnfc.id, 0)),
                                                     tuple(o.nic for o in c.masters if o is not m)))
                       for m in masters])

    async def _prepare(self, c: Cluster, nodes: Sequence[Node]) -> None:
        px = c.p.proxy
        no_proxy = ",".join([*px.no_proxy, *([px.k8s_node_cidr] if px.k8s_node_cidr else []),
                             c.p.master.pod_cidr, c.p.master.cluster_cidr, "127.0.0.1", "localhost"])
        await _gather([c.ex.run(n.ssh, PrepareNode(n.name, c.p.kubernetes_version, px.http_proxy,
                                                   px.https_proxy, no_proxy)) for n in nodes])

    async def _hosts(self, c: Cluster, on: Sequence[Node]) -> None:
        entries = tuple((n.nic, (n.name,)) for n in c.nodes)
        await _gather([c.ex.run(n.ssh, SetHostsEntries(entries, block="vnfm-k8s")) for n in on])

    async def _join(self, c: Cluster, admin: Node, n: Node, endpoint: str) -> None:
        info = (await c.ex.run(admin.ssh, JoinInfo())).data
        await c.ex.run(n.ssh, KubeadmJoin(n.name, n.nic, endpoint, n.master, info["token"],
                                          info["ca_cert_hash"], info.get("certificate_key") if n.master else None))
        await c.ex.run(admin.ssh, WaitNodeReady(n.name, c.p.node_ready_timeout))
        if not n.master:
            await c.ex.run(admin.ssh, LabelNode(n.name, (("node-role.kubernetes.io/worker", ""),)))

    async def _remove_worker(self, c: Cluster, admin: Node, n: Node) -> None:
        await c.ex.run(admin.ssh, DrainNode(n.name, c.p.drain_timeout))
        await c.ex.run(admin.ssh, DeleteNode(n.name))

    async def _etcd_check(self, c: Cluster, admin: Node, expected: Sequence[Node]) -> None:
        members = (await c.ex.run(admin.ssh, EtcdMemberList(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS))).data["members"]
        names = sorted(m["name"] for m in members)
        want = sorted(n.name for n in expected)
        if names != want:
            raise OperationFailed(f"etcd members are {names}, expected {want}")
        health = (await c.ex.run(admin.ssh, EtcdHealth(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, wait_s=30))).data
        if not health.get("healthy"):
            bad = sorted(e for e, ok in (health.get("endpoints") or {}).items() if not ok)
            raise OperationFailed(f"etcd is not healthy after the change (unhealthy: {', '.join(bad) or 'unknown'})")

    # ------------------------------------------------------------------ install / VIM
    async def _install(self, c: Cluster) -> None:
        masters, workers = c.masters, c.workers
        ha = len(masters) > 1
        c.ctx.state["ha"] = ha
        await self._pin(c, c.nodes)
        endpoint, api_url = self._endpoint(c)
        c.ctx.progress(f"installing Kubernetes {c.p.kubernetes_version}: {len(masters)} master(s), "
                       f"{len(workers)} worker(s), control-plane endpoint {endpoint}")
        await self._prepare(c, c.nodes)
        await self._hosts(c, c.nodes)
        await self._registries(c, c.nodes)
        if ha:
            await self._set_lb(c, masters, masters)
            await self._keepalived(c, masters)
        first = masters[0]
        sans = sorted({n.nic for n in masters} | {n.ssh for n in masters} | {endpoint.rsplit(":", 1)[0]}
                      | {api_url.split("//", 1)[1].rsplit(":", 1)[0]})
        await c.ex.run(first.ssh, KubeadmInit(first.name, first.nic, endpoint, c.p.master.pod_cidr,
                                              c.p.master.cluster_cidr, c.p.kubernetes_version, tuple(sans)))
        await c.ex.run(first.ssh, WaitNodeReady(first.name, c.p.node_ready_timeout))
        for m in masters[1:]:  # one at a time: each etcd member joins a healthy cluster
            await self._join(c, first, m, endpoint)
        await _gather([self._join(c, first, w, endpoint) for w in workers])
        if ha:
            await self._etcd_check(c, first, masters)
        c.ctx.progress(f"{len(c.nodes)} node(s) Ready")
        await self._storage_setup(c, first)
        await self._register_vim(c, first, api_url)

    async def _register_vim(self, c: Cluster, admin: Node, api_url: str) -> None:
        ctx = c.ctx
        if ctx.vims is None:
            raise OperationFailed("no VIM registry available to register the cluster")
        data = (await c.ex.run(admin.ssh, VimToken())).data
        access = {"authUrl": api_url, "bearer_token": data["token"], "ssl_ca_cert": data["ca_pem"]}
        vim_id = ctx.state.get("vim_id")
        existing = ctx.vims.get(vim_id) if vim_id else None
        vim_name = c.p.vim_name or f"kubernetes-{ctx.instance.id}"
        if existing is not None:
            existing.access_info = access
            existing.interface_info = {"endpoint": api_url}
            existing.name = vim_name
            vim = ctx.vims.update(existing)
            ctx.progress(f"Kubernetes VIM {vim.id} ('{vim.name}') updated in place: {api_url}")
        else:
            vim = Vim(vim_type="kubernetes", name=vim_name, access_info=access,
                      interface_info={"endpoint": api_url}, extra={"vnf_instance_id": ctx.instance.id})
            if vim_id:
                vim.id = vim_id
            vim = ctx.vims.register(vim)
            ctx.progress(f"Kubernetes VIM {vim.id} ('{vim.name}') registered: {api_url}")
        ctx.state["vim_id"] = vim.id
        entry = {"id": VIM_CONN_ID, "vimId": vim.id, "vimType": "ETSINFV.KUBERNETES.V_1",
                 "interfaceInfo": {"endpoint": api_url}, "accessInfo": {}, "extra": {}}
        conns = [e for e in ctx.instance.vim_connection_info if e.get("id") != VIM_CONN_ID]
        ctx.instance.vim_connection_info = [*conns, entry]
        if isinstance(c.ex, TwinExecutor):
            c.ex.record_vim({"id": vim.id, "name": vim.name, "endpoint": api_url,
                             "ca_sha256": hashlib.sha256(str(data["ca_pem"]).encode()).hexdigest()})

    def _deregister_vim(self, ctx: LcmContext) -> None:
        vim_id = ctx.state.get("vim_id")
        if vim_id and ctx.vims is not None and ctx.vims.get(vim_id) is not None:
            ctx.vims.delete(vim_id)
            ctx.progress(f"Kubernetes VIM {vim_id} deregistered")
        ctx.state.pop("vim_id", None)
        ctx.instance.vim_connection_info = [e for e in ctx.instance.vim_connection_info
                                            if e.get("id") != VIM_CONN_ID]

    # ------------------------------------------------------------------ hooks
    async def instantiate_end(self, ctx: LcmContext) -> None:
        c = self._cluster(ctx)
        try:
            await self._install(c)
        finally:
            await self._close(c)

    async def terminate_end(self, ctx: LcmContext) -> None:
        self._deregister_vim(ctx)

    async def scale_start(self, ctx: LcmContext) -> None:
        if not ctx.removed:
            return
        c = self._cluster(ctx)
        try:
            removed = c.of(ctx.removed)
            if any(n.master for n in removed):
                raise OperationFailed("scale-in would remove master node(s) "
                                      f"{', '.join(n.name for n in removed if n.master)}: not supported")
            admin = self._admin(c, exclude=removed)
            verb = "rolling back: removing the joined" if ctx.rollback else "draining and removing"
            ctx.progress(f"{verb} node(s) {', '.join(n.name for n in removed)}")
            await _gather([self._remove_worker(c, admin, n) for n in removed])
        finally:
            await self._close(c)

    async def scale_end(self, ctx: LcmContext) -> None:
        c = self._cluster(ctx)
        try:
            added = [] if ctx.rollback else c.of(ctx.added)
            if any(n.master for n in added):
                raise OperationFailed("scale-out added master node(s): not supported")
            admin = self._admin(c, exclude=added)
            endpoint, _ = self._endpoint(c)
            await self._pin(c, [admin, *added])
            if added:
                await self._prepare(c, added)
                await self._registries(c, added)
                await self._nfs_clients(c, added)
                await _gather([self._join(c, admin, n, endpoint) for n in added])
                ctx.progress(f"node(s) {', '.join(n.name for n in added)} joined and Ready")
            await self._hosts(c, c.nodes)
        finally:
            await self._close(c)

    # ------------------------------------------------------------------ private registries (seed 003)
    def _registry_steps(self, c: Cluster) -> tuple[ContainerdRegistries, list[NodeRegistryConfig]]:
        ctx = c.ctx
        configs: list[NodeRegistryConfig] = []
        auth: list[RegistryAuthEntry] = []
        for r in c.p.registries:
            ca = None
            if r.certificate_path is not None:
                key = f"{r.path}.certificate_path"
                if ctx.package is None or not ctx.package.exists(r.certificate_path):
                    raise OperationFailed(f"{key}: '{r.certificate_path}' is not a file of the VNF package")
                try:
                    ca = ctx.package.read(r.certificate_path).decode("utf-8")
                except UnicodeDecodeError:
                    raise OperationFailed(f"{key}: '{r.certificate_path}' is not a PEM certificate") from None
                if "-----BEGIN CERTIFICATE-----" not in ca:
                    raise OperationFailed(f"{key}: '{r.certificate_path}' is not a PEM certificate")
            try:
                configs.append(NodeRegistryConfig(r.server, ca_pem=ca, hosts_entry=r.hosts_entry,
                                                  plain_http=not r.https))
            except ValueError as e:
                raise OperationFailed(f"{r.path}: {e}") from None
            if r.username and r.password:
                auth.append(RegistryAuthEntry(r.server, r.username, r.password))
        return ContainerdRegistries(tuple(auth)), configs

    async def _registries(self, c: Cluster, nodes: Sequence[Node]) -> None:
        """Connections to the private registries on `nodes`: containerd reads hosts.toml (config_path)
        and the credentials, then per registry hosts.toml, CA and /etc/hosts entry."""
        if not c.p.registries or not nodes:
            return
        containerd, configs = self._registry_steps(c)

        async def one(n: Node) -> None:
            await c.ex.run(n.ssh, containerd)
            for step in configs:
                await c.ex.run(n.ssh, step)

        await _gather([one(n) for n in nodes])
        c.ctx.progress(f"private registr{'y' if len(configs) == 1 else 'ies'} "
                       f"{', '.join(s.registry for s in configs)} configured on {', '.join(n.name for n in nodes)}")

    # ------------------------------------------------------------------ storage server (seed 001)
    def _storage_healed(self, c: Cluster) -> bool:
        return c.storage is not None and not c.ctx.heal_entire and \
            any(v.id == c.storage.vnfc.id for v in c.ctx.healed)

    async def _nfs_clients(self, c: Cluster, nodes: Sequence[Node]) -> None:
        if c.p.storage_server is None or not nodes:
            return
        await _gather([c.ex.run(n.ssh, InstallNfsClient()) for n in nodes])

    def _volume_steps(self, c: Cluster) -> list[PrepareVolume]:
        ss, st = c.p.storage_server, c.storage
        assert ss is not None and st is not None
        out = []
        base = f"{P.ROOT}.storage_server.cinder_volume_setup_params"
        for i, v in enumerate(ss.volumes):
            found = next((s for s in st.vnfc.storages if s.virtual_storage_desc_id == v.volume_resource_id), None)
            if found is None:
                have = ", ".join(sorted(s.virtual_storage_desc_id for s in st.vnfc.storages)) or "none"
                raise OperationFailed(f"{base}[{i}].volume_resource_id: storage server {st.vnfc.name} has no volume "
                                      f"'{v.volume_resource_id}' (its virtual storages: {have})")
            out.append(PrepareVolume(found.volume_id, v.mount_to, v.device))
        return out

    def _exports(self, c: Cluster) -> NfsExports:
        ss = c.p.storage_server
        assert ss is not None
        return NfsExports(tuple(NfsExport(e.export_dir, (e.export_to,), export_id=i + 1)
                                for i, e in enumerate(ss.exports)))

    def _pv_steps(self, c: Cluster) -> list[ApplyPersistentVolume]:
        ctx, ss = c.ctx, c.p.storage_server
        assert ss is not None
        out: list[ApplyPersistentVolume] = []
        for reg in c.p.pv_registrations:
            key = f"{reg.path}.pv_manifest_file_path"
            if ctx.package is None or not ctx.package.exists(reg.pv_manifest_file_path):
                raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is not a file of the VNF package")
            server = None
            for v in [*([c.storage.vnfc] if c.storage else []), *ctx.resources.vnfcs]:
                server = v.address(reg.nfs_server_cp, floating_first=False)
                if server:
                    break
            if not server:
                raise OperationFailed(f"{reg.path}.nfs_server_cp: no VNFC has an address on CP '{reg.nfs_server_cp}'")
            try:
                docs = [d for d in yaml.safe_load_all(ctx.package.read(reg.pv_manifest_file_path)) if d]
            except (yaml.YAMLError, UnicodeDecodeError) as e:
                raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is not YAML: {e}") from None
            if not docs:
                raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is empty")
            for doc in docs:
                nfs = (doc.get("spec") or {}).get("nfs") if isinstance(doc, dict) else None
                if not isinstance(doc, dict) or doc.get("kind") != "PersistentVolume" or not isinstance(nfs, dict):
                    raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' must hold NFS PersistentVolumes "
                                          "(kind PersistentVolume with spec.nfs)")
                name = str((doc.get("metadata") or {}).get("name") or "")
                path = posixpath.normpath(str(nfs.get("path") or "/"))
                if not any(path == e.export_dir or path.startswith(e.export_dir + "/") for e in ss.exports):
                    raise OperationFailed(f"{key}: PersistentVolume '{name}' uses NFS path {path}, which no "
                                          "storage_server.nfs_server_setup_params[].export_dir exports")
                nfs["server"] = server  # the seed: replaced with the address of nfs_server_cp
                try:
                    out.append(ApplyPersistentVolume(name, yaml.safe_dump(doc, sort_keys=False), server, path))
                except ValueError as e:
                    raise OperationFailed(f"{key}: {e}") from None
        return out

    async def _storage_setup(self, c: Cluster, admin: Node, *, nodes_too: bool = True) -> None:
        """Volume(s) formatted when blank and mounted, NFS exports, NFS clients on the cluster's nodes,
        then the PersistentVolumes registered through `admin` (seed 001)."""
        if c.p.storage_server is None:
            return
        st = c.storage
        if st is None:
            raise OperationFailed(f"{P.ROOT}.storage_server: the instance has no storage server VNFC "
                                  f"(VDU of CP '{c.p.storage_server.ssh_cp_name}')")
        pvs = self._pv_steps(c)  # validated before anything changes
        volumes = self._volume_steps(c)
        await self._pin(c, [st])
        for step in volumes:
            res = await c.ex.run(st.ssh, step)
            c.ctx.progress(f"storage server {st.name}: volume {step.volume_id} "
                           f"{'formatted and ' if res.data.get('formatted') else ''}mounted at {step.mount_to}")
        exports = self._exports(c)
        await c.ex.run(st.ssh, exports)
        c.ctx.progress(f"storage server {st.name} exports {', '.join(e.path for e in exports.exports)} over NFS")
        if nodes_too:
            await self._nfs_clients(c, c.nodes)
        for pv in pvs:
            await c.ex.run(admin.ssh, pv)
        c.ctx.state["pvs"] = [pv.name for pv in pvs]
        if pvs:
            c.ctx.progress(f"PersistentVolume(s) {', '.join(pv.name for pv in pvs)} registered "
                           f"(NFS server {pvs[0].nfs_server})")

    async def _storage_heal_start(self, c: Cluster, admin: Node) -> None:
        """Before the storage server is replaced: its PVs must not be in use; they are deleted (and
        registered again in heal_end). The volume itself is kept by the heal."""
        names = list(c.ctx.state.get("pvs_affected") or c.ctx.state.get("pvs") or [])
        if not names and c.p.pv_registrations:
            names = [pv.name for pv in self._pv_steps(c)]
        c.ctx.state["pvs_affected"] = names
        if names:
            c.ctx.progress(f"storage server is healed: PersistentVolume(s) {', '.join(names)} are affected; "
                           "checking they are not in use and removing them until it is back")
            await c.ex.run(admin.ssh, DeletePersistentVolumes(tuple(names)))

    def _admin(self, c: Cluster, exclude: Sequence[Node] = ()) -> Node:
        ex = {n.vnfc.id for n in exclude}
        for m in c.masters:
            if m.vnfc.id not in ex:
                return m
        raise OperationFailed("no surviving master node to run cluster operations on")

    async def heal_start(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            ctx.state["heal_entire_vim_id"] = ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            ctx.state.pop("vip", None)
            ctx.progress("healing the entire cluster: its VIM registration is kept and updated afterwards")
            return
        c = self._cluster(ctx)
        try:
            healed = c.of(ctx.healed)
            hm = [n for n in healed if n.master]
            if hm:
                self._check_quorum(len(c.masters), [n.vnfc for n in hm])
            survivors = [m for m in c.masters if m not in hm]
            admin = self._admin(c, exclude=healed)
            await self._pin(c, survivors)
            for w in (n for n in healed if not n.master):
                ctx.progress(f"draining and removing worker {w.name} before its VM is replaced")
                await self._remove_worker(c, admin, w)
            for m in hm:
                ctx.progress(f"removing master {m.name} from etcd, HAProxy and the cluster")
                # by name, and by the peer URL kubeadm gives the member: a join of this VNFC that
                # failed earlier may have left a member that never started (and so has no name)
                host = f"[{m.nic}]" if ":" in m.nic else m.nic
                await c.ex.run(admin.ssh, EtcdMemberRemove(endpoints=ETCD_ENDPOINTS, tls=ETCD_TLS, name=m.name,
                                                           peer_url=f"https://{host}:2380"))
                await self._etcd_check(c, admin, survivors)
                await self._set_lb(c, survivors, survivors)
                await c.ex.run(admin.ssh, DeleteNode(m.name))
            if self._storage_healed(c):
                await self._storage_heal_start(c, admin)
        finally:
            await self._close(c)

    async def heal_end(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            vim_id = ctx.state.get("heal_entire_vim_id") or ctx.state.get("vim_id")
            ctx.state.pop("host_keys", None)
            ctx.state.pop("vip", None)
            if vim_id:
                ctx.state["vim_id"] = vim_id
            await self.instantiate_end(ctx)
            ctx.state.pop("heal_entire_vim_id", None)
            return
        c = self._cluster(ctx)
        try:
            healed = c.of(ctx.healed)
            admin = self._admin(c, exclude=healed)
            await self._pin(c, [admin, *healed], repin=healed)
            endpoint, _ = self._endpoint(c)
            await self._prepare(c, healed)
            await self._hosts(c, healed)
            await self._registries(c, healed)
            await self._nfs_clients(c, healed)
            for n in healed:
                if n.master:
                    await self._set_lb(c, [n], c.masters)
                    await self._keepalived(c, [n])
                await self._join(c, admin, n, endpoint)
                ctx.progress(f"{n.role} {n.name} re-joined and Ready")
            if any(n.master for n in healed):
                await self._set_lb(c, c.masters, c.masters)
                await self._etcd_check(c, admin, c.masters)
            if self._storage_healed(c):
                assert c.storage is not None
                await self._pin(c, [c.storage], repin=[c.storage])
                ctx.progress(f"storage server {c.storage.name} replaced: mounting its volume(s) and exporting "
                             "them again, then registering the PersistentVolumes")
                await self._storage_setup(c, admin, nodes_too=False)
                ctx.state.pop("pvs_affected", None)
        finally:
            await self._close(c)
