"""A cluster's control-plane certificates: reading their expiry on every master (stored in the
driver's state as `certificates`, the shape every cluster driver keeps, read by the VNFM's view,
metric and expiry watch: service/certificates.py) and renewing them one master at a time.

    state["certificates"] = {"layout": "kubeadm" | "kubespray", "checked_at": <Unix time>,
                             "nodes": {<node>: {<cert>: <notAfter, Unix time>}},
                             "renewed_at": <Unix time of the last renewal> (after one)}
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from vnfm.adapters.mgmt.cluster import endpoint, etcd, vim
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, pin
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.certs import KUBEADM, CertExpiry, CertRenew
from vnfm.nodesteps.kubernetes import WaitNodeReady

KEY = "certificates"


def _store(c: Cluster, layout: str, read: dict[str, dict[str, int]], errors: dict[str, str] | None = None) -> None:
    old = c.ctx.state.get(KEY) or {}
    names = {m.name for m in c.masters}
    kept = {n: v for n, v in (old.get("nodes") or {}).items() if n in names and n not in (errors or {})}
    new = {**old, "layout": layout, "checked_at": int(time.time()), "nodes": {**kept, **read}}
    bad = {n: e for n, e in {**(old.get("errors") or {}), **(errors or {})}.items() if n in names and n not in read}
    if bad:
        new["errors"] = bad
    else:
        new.pop("errors", None)
    c.ctx.state[KEY] = new


async def record(c: Cluster, layout: str = KUBEADM, on: Sequence[Node] | None = None) -> None:
    """Read the certificates of every master (`on`: those only; the others' stored dates are kept)
    in parallel and store their notAfter dates. A master whose certificates cannot be read does not
    fail the operation that built the cluster: the reason is stored (shown by the view and
    `vnf show`) and said in the progress."""
    masters = list(c.masters if on is None else on)
    results = await asyncio.gather(*(c.ex.run(m.ssh, CertExpiry(m.name, layout)) for m in masters),
                                   return_exceptions=True)
    read: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    for m, r in zip(masters, results, strict=True):
        if isinstance(r, StepFailed):  # the step ran and failed (never a cancel, a lost lease or a host key)
            errors[m.name] = r.reason
            c.ctx.progress(f"warning: the certificates of control plane {m.name} could not be read: {r.reason}")
        elif isinstance(r, BaseException):
            raise r
        else:
            read[m.name] = dict(r.data["not_after"])
    _store(c, layout, read, errors)
    dates = [(t, f"{n}/{cert}") for n, certs in c.ctx.state[KEY]["nodes"].items() for cert, t in certs.items()]
    if dates:
        t, what = min(dates)
        c.ctx.progress(f"certificates of {len(read)} control plane(s) read; the first to expire: {what} "
                       f"on {time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime(t))}")


EtcdCheck = Callable[[Cluster, Node, Sequence[Node]], Awaitable[None]]


async def renew(c: Cluster, layout: str = KUBEADM, *, etcd_check: EtcdCheck = etcd.check_members,
                refresh: Callable[[], Awaitable[None]] | None = None) -> None:
    """Renew every master's certificates one master at a time, so that the others serve the API
    through the VIP / load balancer meanwhile: renew and restart its control-plane static pods,
    wait until it answers and is Ready through the control-plane endpoint (its admin.conf names the
    VIP or LB) and etcd has every member healthy (`etcd_check(cluster, the renewed master, the
    masters)`: by default kubeadm's stacked etcd through its PKI paths; Kubespray passes its own);
    then refresh what the VNFM holds: `refresh` (a driver's own: e.g. Kubespray's LB kubeconfig
    and VIM), by default the Kubernetes VIM's credentials through the cluster endpoint."""
    masters = c.masters
    if not masters:
        raise OperationFailed("the cluster has no control plane to renew certificates on")
    await pin(c, masters)
    for i, m in enumerate(masters, 1):
        c.ctx.progress(f"renewing the certificates of control plane {m.name} ({i} of {len(masters)}); "
                       "its API server, controller manager, scheduler and etcd restart")
        data = (await c.ex.run(m.ssh, CertRenew(m.name, layout))).data
        await c.ex.run(m.ssh, WaitNodeReady(m.name, c.p.node_ready_timeout))
        await etcd_check(c, m, masters)
        _store(c, layout, {m.name: dict(data["not_after"])})
        c.ctx.progress(f"control plane {m.name} renewed and Ready through the control-plane endpoint")
    c.ctx.state[KEY]["renewed_at"] = int(time.time())
    if refresh is not None:
        await refresh()
        return
    _, api_url = await endpoint.endpoint(c)
    await vim.register(c, masters[0], api_url)
