"""Control-plane certificates on the twin: each master host keeps the notAfter of the files its
layout has (nodesteps/certs.py), issued when it becomes a control plane (init, join) and again by a
renewal; the twin's clock (`TwinConfig.clock`) decides expiry. As the real API server and kubectl
would, every step that uses a host's admin.conf fails there once its client certificate, or the API
server's serving certificate, has expired (`require_admin`)."""

from __future__ import annotations

import asyncio
from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on
from vnfm.nodesteps.base import NodeStep, StepFailed, StepResult
from vnfm.nodesteps.certs import KUBEADM, CertExpiry, CertRenew, files

CA_VALIDITY_S = 10 * 365 * 86400.0  # kubeadm's CAs: ten years, never renewed by `certs renew`


def issue(tw: TwinHost, st: dict[str, Any], sid: str, node: str, layout: str = KUBEADM, *,
          first: bool = False, renew: bool = False) -> None:
    """New certificates for control plane `node` on server `sid` (`first`: the kubeadm init host,
    which alone has super-admin.conf; `renew`: only those `kubeadm certs renew all` renews)."""
    now = tw.config.clock()
    h = st["hosts"].setdefault(sid, {})
    old = (h.get("certs") or {}).get("not_after") or {}
    out: dict[str, float] = {}
    for f in files(layout, node):
        if f.optional and not first and f.name not in old:
            continue  # super-admin.conf: written by kubeadm init only
        if renew and (not f.renewed or f.name not in old):
            if f.name in old:
                out[f.name] = old[f.name]
            continue
        out[f.name] = now + (CA_VALIDITY_S if f.name == "ca" else tw.config.cert_validity_s)
    if renew and "ca" in old:
        out["ca"] = old["ca"]
    h["certs"] = {"layout": layout, "not_after": out}


def expired(tw: TwinHost, st: dict[str, Any], sid: str) -> list[str]:
    """The certificates of this host that kubectl with its admin.conf needs and that have expired."""
    not_after = ((st["hosts"].get(sid) or {}).get("certs") or {}).get("not_after") or {}
    now = tw.config.clock()
    return [n for n in ("admin.conf", "apiserver") if n in not_after and not_after[n] <= now]


def require_admin(tw: TwinHost, st: dict[str, Any], host: str, sid: str, step: NodeStep) -> None:
    """Refuse, as the API server and kubectl do, admin.conf use with an expired certificate."""
    bad = expired(tw, st, sid)
    if bad:
        raise StepFailed(host, step, "x509: certificate has expired or is not yet valid "
                                     f"({', '.join(bad)} of this control plane)")


def _read(tw: TwinHost, st: dict[str, Any], host: str, sid: str, step: CertExpiry | CertRenew) -> dict[str, Any]:
    held = (st["hosts"].get(sid) or {}).get("certs")
    if node_on(st, sid, "master") is None or not held:
        raise StepFailed(host, step, "this host is not a control plane: it has no certificates")
    have = held["not_after"] if held["layout"] == step.layout else {}
    not_after: dict[str, int] = {}
    missing: list[str] = []
    for f in step.files:
        if f.name in have:
            not_after[f.name] = int(have[f.name])
        elif f.optional:
            missing.append(f.name)
        else:
            raise StepFailed(host, step, f"certificate {f.name}: {f.path} does not exist")
    return {"not_after": not_after, "missing": missing}


def expiry(tw: TwinHost, host: str, sid: str, step: CertExpiry) -> StepResult:
    return StepResult(False, tw.tx(lambda st: _read(tw, st, host, sid, step)))


async def renew(tw: TwinHost, host: str, sid: str, step: CertRenew) -> StepResult:
    """kubeadm certs renew all, then the control-plane static pods restart: this host's API server
    does not answer for `TwinConfig.restart_time` (the simulated API answers 503 while no control
    plane of the cluster does)."""
    def start(st: dict[str, Any]) -> None:
        _read(tw, st, host, sid, step)  # a control plane of this layout
        issue(tw, st, sid, step.node, step.layout, renew=True)
        h = st["hosts"][sid]
        h["cert_renewals"] = int(h.get("cert_renewals") or 0) + 1
        h["apiserver_restarting"] = True

    seen = tw.config.observed
    tw.tx(start)
    seen["renewals_in_flight"] = seen.get("renewals_in_flight", 0) + 1
    seen["max_renewals_in_flight"] = max(seen.get("max_renewals_in_flight", 0), seen["renewals_in_flight"])
    try:
        if tw.config.restart_time > 0:
            await asyncio.sleep(tw.config.restart_time)  # the simulated restart's duration
    finally:
        seen["renewals_in_flight"] -= 1
        tw.tx(lambda st: st["hosts"][sid].pop("apiserver_restarting", None))
    return StepResult(True, tw.tx(lambda st: _read(tw, st, host, sid, step)))


def api_down(st: dict[str, Any]) -> bool:
    """No control plane of the cluster serves the API now (all restarting after a renewal)."""
    masters = [n.get("server_id") for n in (st.get("nodes") or {}).values() if n.get("role") == "master"]
    return bool(masters) and all((st["hosts"].get(sid) or {}).get("apiserver_restarting") for sid in masters)


HANDLERS: dict[type, Any] = {
    CertExpiry: expiry,
    CertRenew: renew,
}
