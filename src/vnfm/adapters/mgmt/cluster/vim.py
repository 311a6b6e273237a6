"""The cluster registered as a Kubernetes VIM (and removed again), so CNFs can be deployed on it.

Registration is idempotent: the VIM carries the id of the VNF instance that registered it, so a
retry after a crash between "registered" and "recorded in the driver state" finds it again instead
of registering a second one (which terminate would never remove).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.domain.errors import BadRequest, OperationFailed
from vnfm.domain.model import Vim
from vnfm.nodesteps.kubernetes import VimToken
from vnfm.service.ports import LcmContext, VimRegistry

VIM_CONN_ID = "kubernetes-cluster"
OWNER_KEY = "vnf_instance_id"


def vim_id_for(instance_id: str) -> str:
    """The id of the VIM an instance registers: derived from the instance, so a retry finds what an
    interrupted attempt registered with one lookup by id (no scan of every VIM: their number grows
    with the fleet)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"vnfm:kubernetes-vim:{instance_id}"))


def registered_by(vims: VimRegistry, instance_id: str) -> Vim | None:
    """The Kubernetes VIM this VNF instance registered, if any (a scan: the last resort, for VIMs
    registered under a random id by an earlier version)."""
    for v in vims.list():
        if v.vim_type == "kubernetes" and v.extra.get(OWNER_KEY) == instance_id:
            return v
    return None


async def register(c: Cluster, admin: Node, api_url: str, extra: dict[str, Any] | None = None) -> None:
    """Register (or update in place) the cluster's VIM: API URL, CA, a ServiceAccount token from `admin`.
    A node session may name the URL the VNFM reaches the API at (`api_url` in the token step's data,
    when it is not the cluster's own endpoint); TLS is verified against the cluster CA either way.
    `extra`: what else the VIM tells the drivers of CNFs on it (e.g. the LB's NodePort pool)."""
    ctx = c.ctx
    if ctx.vims is None:
        raise OperationFailed("no VIM registry available to register the cluster")
    data = (await c.ex.run(admin.ssh, VimToken())).data
    api_url = str(data.get("api_url") or api_url)
    access = {"authUrl": api_url, "bearer_token": data["token"], "ssl_ca_cert": data["ca_pem"]}
    recorded = ctx.state.get("vim_id")
    vim_id = recorded or vim_id_for(ctx.instance.id)
    vim_name = c.p.vim_name or f"kubernetes-{ctx.instance.id}"
    extra = {**(extra or {}), OWNER_KEY: ctx.instance.id, "infra_vim_id": ctx.instance.vim_id}
    # A first registration is one write; a retry after a crash between "registered" and "recorded
    # in the driver state" finds its VIM taken under the derived id and updates it in place.
    vim: Vim | None = None
    existing = ctx.vims.get(vim_id) if recorded else None
    if existing is None:
        try:
            vim = ctx.vims.register(Vim(id=vim_id, vim_type="kubernetes", name=vim_name, access_info=access,
                                        interface_info={"endpoint": api_url}, extra=extra,
                                        tenant=ctx.instance.tenant))
        except BadRequest:  # the id is taken (by this instance's earlier attempt), or refused
            existing = ctx.vims.get(vim_id)
            if existing is None:
                raise
        else:
            ctx.progress(f"Kubernetes VIM {vim.id} ('{vim.name}') registered: {api_url}")
    if existing is not None:
        existing.access_info = access
        existing.interface_info = {"endpoint": api_url}
        existing.name = vim_name
        existing.extra = {**existing.extra, **extra}
        vim = ctx.vims.update(existing)
        ctx.progress(f"Kubernetes VIM {vim.id} ('{vim.name}') updated in place: {api_url}")
    assert vim is not None
    ctx.state["vim_id"] = vim.id
    entry = {"id": VIM_CONN_ID, "vimId": vim.id, "vimType": "kubernetes",
             "interfaceInfo": {"endpoint": api_url}, "accessInfo": {}, "extra": {}}
    conns = [e for e in ctx.instance.vim_connection_info if e.get("id") != VIM_CONN_ID]
    ctx.instance.vim_connection_info = [*conns, entry]
    c.ex.note("vim", {"id": vim.id, "name": vim.name, "endpoint": api_url,
                      "ca_sha256": hashlib.sha256(str(data["ca_pem"]).encode()).hexdigest()})


def deregister(ctx: LcmContext) -> None:
    """Remove the VIM this instance registered (found by id, or by its owner key)."""
    vim_id = ctx.state.get("vim_id")
    if ctx.vims is not None:
        vim = ((ctx.vims.get(vim_id) if vim_id else None) or ctx.vims.get(vim_id_for(ctx.instance.id))
               or registered_by(ctx.vims, ctx.instance.id))
        if vim is not None:
            ctx.vims.delete(vim.id)
            ctx.progress(f"Kubernetes VIM {vim.id} deregistered")
    ctx.state.pop("vim_id", None)
    ctx.instance.vim_connection_info = [e for e in ctx.instance.vim_connection_info
                                        if e.get("id") != VIM_CONN_ID]
