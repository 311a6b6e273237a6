"""After instantiate and after heal entire, every NodePort of the CNF's Services (read back from
the Kubernetes API, as allocated) gets a frontend on the external load balancer: one `LbFrontends`
step owning exactly this CNF's part (owner `cnf-<instance id>`), so a heal that changed a random
NodePort replaces the old one and a re-run adds nothing twice. On terminate only this CNF's part is
removed. Scale and heal of a pod change no Service: nothing to do.

Where a frontend forwards: when the cluster's VIM names a NodePort pool on this LB (`extra.
nodeport_pool`, the Kubespray driver's), to that pool, which the cluster driver keeps equal to the
cluster's nodes through scale and heal; else to the nodes the cluster reports now.

The load balancer is a host of the cluster VNF: its session is opened under the id of the VNF that
registered the Kubernetes VIM (`extra.vnf_instance_id`), so the host's state is that VNF's; its
node steps need root, so a non-root login runs them through `sudo -n`, as on every VNFC."""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes import client

from vnfm.adapters.kube import client as kube
from vnfm.adapters.mgmt.cnf_nodeport import params as lbparams
from vnfm.adapters.mgmt.cnf_nodeport import part
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import Vim, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.lb import Backend, Frontend, LbFrontends, PoolRef
from vnfm.packaging import k8s_manifests
from vnfm.service.ports import LcmContext, MgmtDriver, NodeHost, NodeLogin, PackageFiles

OWNER_PREFIX = part.OWNER_PREFIX
owner_of = part.owner_of
POOL_KEY = "nodeport_pool"  # in a cluster VIM's extra: {"addresses", "owner", "name"} (see kubespray.lb)


def _frontend_name(ns: str, svc: str, node_port: int) -> str:
    return f"{ns[:20]}.{svc[:30]}.{node_port}"


def node_ports(vim: Vim, services: list[k8s_manifests.Manifest],
               pool: PoolRef | None = None) -> tuple[list[Frontend], list[str]]:
    """Frontends of the NodePorts of `services` as the API reports them, routed to `pool` or (None)
    over the cluster's nodes; and notes of what was found (an API error is an OperationFailed
    naming the VIM)."""
    return kube.call(vim, lambda api: _node_ports(api, services, pool))


def _nodes(core: client.CoreV1Api) -> list[tuple[str, str]]:
    nodes = []
    for n in core.list_node().items:
        addr = next((a.address for a in (n.status.addresses or []) if a.type == "InternalIP"), None) \
            if n.status else None
        if addr and n.metadata and n.metadata.name:
            nodes.append((n.metadata.name, addr))
    return sorted(nodes)


def _node_ports(api: client.ApiClient, services: list[k8s_manifests.Manifest],
                pool: PoolRef | None) -> tuple[list[Frontend], list[str]]:
    core = client.CoreV1Api(api)
    nodes = [] if pool is not None else _nodes(core)
    out: list[Frontend] = []
    notes: list[str] = []
    for m in services:
        svc = api.sanitize_for_serialization(core.read_namespaced_service(m.name, m.namespace or "default"))
        if k8s_manifests.owner_of(svc) != k8s_manifests.owner_of(m.obj):  # never publish another CNF's ports
            raise OperationFailed(f"{m.label} is not this VNF instance's (owner: "
                                  f"{k8s_manifests.owner_of(svc) or 'none'}): its NodePorts are not published")
        spec = svc.get("spec") or {}
        if spec.get("type") not in ("NodePort", "LoadBalancer"):
            continue
        ns = str((svc.get("metadata") or {}).get("namespace") or m.namespace or "default")
        for p in spec.get("ports") or []:
            np = p.get("nodePort")
            if not np or str(p.get("protocol") or "TCP") != "TCP":
                continue
            out.append(Frontend(_frontend_name(ns, m.name, int(np)), int(np),
                                tuple(Backend(name[:63], addr, int(np)) for name, addr in nodes), pool=pool))
            notes.append(f"{ns}/{m.name} {p.get('port')}:{np}")
    if out and pool is None and not nodes:
        raise OperationFailed("the cluster reports no node address to forward NodePorts to")
    return out, notes


class CnfNodePortDriver(MgmtDriver):
    name = "cnf-nodeport"
    declared = lbparams.DECLARED

    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        if operation == "INSTANTIATE":
            lb = lbparams.parse(dict(request.get("additionalParams") or {}))
            if lb and lb.script_path and package is not None and not package.exists(lb.script_path):
                raise UnprocessableEntity(f"additionalParams.{lbparams.KEY}.script_path: '{lb.script_path}' is "
                                          "not a file of the VNF package")

    # ------------------------------------------------------------------ helpers
    def _vim(self, ctx: LcmContext) -> Vim:
        vim = ctx.vims.get(str(ctx.instance.vim_id or "")) if ctx.vims is not None else None
        if vim is None or vim.vim_type != "kubernetes":
            raise UnprocessableEntity("mgmt-drivers-cnf-nodeport runs on a Kubernetes VIM only")
        return vim

    async def _apply(self, ctx: LcmContext, frontends: tuple[Frontend, ...]) -> None:
        lb = ctx.params.lb if isinstance(ctx.params, lbparams.CnfNodePortRoot) else None
        if lb is None:
            ctx.progress(f"no {lbparams.KEY}: no load balancer to configure")
            return
        if ctx.nodes is None:
            raise OperationFailed("no node access for the load balancer")
        vim = self._vim(ctx)
        session_id = str(vim.extra.get("vnf_instance_id") or ctx.instance.id)
        host = NodeHost(lb.ssh_ip, NodeLogin(lb.username, lb.password, lb.private_key), pin=f"lb:{lb.ssh_ip}",
                        become=True)  # /etc/haproxy and HAProxy's reload need root
        pins = ctx.state.setdefault("host_keys", {})
        ex = ctx.nodes.session(session_id, [host], pins)
        try:
            result = await ex.run(lb.ssh_ip, LbFrontends(owner_of(ctx.instance.id), frontends))
        finally:
            await ex.close()
        part.record(ctx.state, lb.ssh_ip, frontends)
        via = "the cluster's NodePort pool" if any(f.pool for f in frontends) else "the cluster's nodes of now"
        ctx.progress(f"load balancer {lb.ssh_ip}: {len(frontends)} NodePort frontend(s) for this CNF"
                     + (f", routed to {via}" if frontends else "") + (" (unchanged)" if not result.changed else ""))

    def _pool(self, ctx: LcmContext, vim: Vim) -> PoolRef | None:
        """The cluster's NodePort pool when it is on the LB of this CNF's request."""
        lb = lbparams.parse(ctx.instance.additional_params or ctx.additional_params)
        pool = vim.extra.get(POOL_KEY)
        if lb is None or not isinstance(pool, dict) or lb.ssh_ip not in (pool.get("addresses") or []):
            return None
        return PoolRef(str(pool["owner"]), str(pool["name"]))

    async def _publish(self, ctx: LcmContext) -> None:
        ms = k8s_manifests.for_instance(ctx.package, ctx.instance.additional_params, ctx.instance.id)
        services = [m for m in ms if m.kind == "Service"]
        vim = self._vim(ctx)
        frontends, notes = await asyncio.to_thread(node_ports, vim, services, self._pool(ctx, vim))
        if notes:
            ctx.progress("NodePorts: " + ", ".join(notes))
        await self._apply(ctx, tuple(frontends))

    # ------------------------------------------------------------------ hooks
    async def instantiate_end(self, ctx: LcmContext) -> None:
        await self._publish(ctx)

    async def heal_end(self, ctx: LcmContext) -> None:
        if ctx.heal_entire:
            await self._publish(ctx)

    async def terminate_end(self, ctx: LcmContext) -> None:
        vim_id = str(ctx.instance.vim_id or "")
        if ctx.vims is not None and vim_id and ctx.vims.get(vim_id) is None:
            ctx.progress(f"load balancer: the cluster of VIM {vim_id} was terminated with its load balancer: "
                         "this CNF's NodePort frontends are already gone")
        else:
            await self._apply(ctx, ())
        part.forget(ctx.state)
