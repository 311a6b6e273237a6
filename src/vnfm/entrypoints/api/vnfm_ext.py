"""vnfm's own endpoints: the VIM registry (/vnfm/v1/vims) and the simulated cloud (/sim/v1)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from vnfm.adapters.mgmt.kubernetes.twin import KEY as K8S_KEY
from vnfm.adapters.mgmt.kubernetes.twin import view as k8s_view
from vnfm.domain.errors import BadRequest, NotFound
from vnfm.entrypoints.api.common import app_of, json_body
from vnfm.service import requests as rq
from vnfm.service import views

router = APIRouter()


@router.get("/vnfm/v1/vims")
async def list_vims(request: Request) -> list[dict[str, Any]]:
    return [views.vim_info(v) for v in app_of(request).vims.list()]


@router.post("/vnfm/v1/vims", status_code=201)
async def register_vim(request: Request) -> JSONResponse:
    vim = app_of(request).vims.register_body(await json_body(request))
    return JSONResponse(views.vim_info(vim), status_code=201)


@router.get("/vnfm/v1/vims/{vim_id}")
async def show_vim(request: Request, vim_id: str) -> dict[str, Any]:
    return views.vim_info(app_of(request).vims.require(vim_id))


@router.delete("/vnfm/v1/vims/{vim_id}", status_code=204)
async def delete_vim(request: Request, vim_id: str) -> Response:
    app_of(request).vims.delete(vim_id)
    return Response(status_code=204)


@router.get("/sim/v1/state")
async def sim_state(request: Request) -> dict[str, Any]:
    return app_of(request).sim.snapshot()


def kubernetes_view(extras: dict[str, Any], live_servers: set[str] | None = None) -> dict[str, Any] | None:
    """The Kubernetes twin's cluster (if the instance has one), for operators: nodes with readiness,
    etcd members and their health, each master's HAProxy backends, the registered VIM. Nothing
    secret is in the twin's state (token and key hashes only) and only listed keys are copied.
    `live_servers`: ids of the instance's servers; host state the twin still keeps for servers that
    are gone (a healed VM's predecessor) is left out."""
    st = extras.get(K8S_KEY)
    if not isinstance(st, dict) or not (st.get("nodes") or st.get("cluster") or st.get("vim")):
        return None
    v = k8s_view(extras)
    raw_nodes: dict[str, Any] = st.get("nodes") or {}
    by_server = {n.get("server_id"): name for name, n in raw_nodes.items()}
    nodes = [{"name": name, "role": n["role"], "ready": bool(n["ready"]), "cordoned": bool(n["cordoned"]),
              "addresses": list(n.get("addresses") or [])}
             for name, n in v["nodes"].items()]
    members = [{"name": m.get("name"), "peer_url": m.get("peer_url"), "healthy": bool(m.get("healthy"))}
               for m in v["etcd_members"]]
    haproxy = []
    for sid, h in sorted((st.get("hosts") or {}).items()):
        lb = h.get("haproxy") if isinstance(h, dict) else None
        if not lb or (live_servers is not None and sid not in live_servers):
            continue
        backends = [{"name": b[0], "address": b[1], "port": b[2]} for b in lb.get("backends") or []]
        haproxy.append({"master": by_server.get(sid), "address": lb.get("address"),
                        "frontend_port": lb.get("frontend_port"), "backend_count": len(backends),
                        "backends": backends})
    haproxy.sort(key=lambda h: (h["master"] is None, h["master"] or "", h["address"] or ""))
    vim = v.get("vim")
    vim_out: dict[str, Any] | None = None
    if isinstance(vim, dict):
        vim_out = {k: vim.get(k) for k in ("id", "name", "endpoint", "ca_sha256")}
        # a short digest of the ServiceAccount token's hash (a rotation is visible); never the token
        hashes = sorted(str(sa.get("token_sha256") or "")
                        for sa in (st.get("service_accounts") or {}).values() if isinstance(sa, dict))
        vim_out["auth_digest"] = ",".join(h[:12] for h in hashes if h) or None
    return {
        "endpoint": v.get("endpoint"),
        "nodes": nodes,
        "ready_nodes": sum(1 for n in nodes if n["ready"]),
        "etcd": {"member_count": len(members), "healthy": bool(members) and all(m["healthy"] for m in members),
                 "members": members},
        "haproxy": haproxy,
        "vim": vim_out,
    }


@router.get("/sim/v1/state/{inst_id}")
async def sim_state_of(request: Request, inst_id: str) -> dict[str, Any]:
    sim = app_of(request).sim
    snap = sim.snapshot(inst_id)
    if not snap:
        raise NotFound(f"the simulated cloud has nothing for VNF instance {inst_id}")
    live = {str(srv.get("id")) for srv in snap.get("servers") or []}
    cluster = kubernetes_view(sim.extras(inst_id), live)
    if cluster is not None:
        snap["kubernetes"] = cluster
    return dict(snap)


@router.post("/sim/v1/faults", status_code=204)
async def sim_faults(request: Request) -> Response:
    """Inject faults into the simulated cloud (tests and demos of error paths)."""
    req = rq.parse(rq.SimFaultsRequest, await json_body(request))
    faults = rq.dump(req)
    if not faults:
        raise BadRequest("the body names no fault (fail_build, build_message, unreachable, unreachable_next, "
                         "fail_delete)")
    app_of(request).sim.inject(**faults)
    return Response(status_code=204)


@router.delete("/sim/v1/faults", status_code=204)
async def sim_clear_faults(request: Request) -> Response:
    app_of(request).sim.clear_faults()
    return Response(status_code=204)
