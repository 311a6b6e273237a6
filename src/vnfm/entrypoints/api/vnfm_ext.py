"""vnfm's own endpoints: the VIM registry (/vnfm/v1/vims) and the simulated cloud (/sim/v1, only
while the simulator is on; its fault injection only when enabled too)."""

from __future__ import annotations

import functools
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.adapters.infra.simulator.twin.operator import operator_view
from vnfm.adapters.infra.simulator.twin.view import instance_state
from vnfm.domain.errors import BadRequest, NotFound
from vnfm.entrypoints.api.common import app_of, json_body
from vnfm.entrypoints.api.routing import Router
from vnfm.service import requests as rq
from vnfm.service import views

router = Router()
# mounted only with the simulator setting (VNFM_SIMULATOR=1, the embedded default)
sim_router = Router()
# mounted only with the fault_injection setting (VNFM_FAULT_INJECTION=1, `vnfm server --fault-injection`)
faults_router = Router()


@router.get("/vnfm/v1/vims")
async def list_vims(request: Request) -> list[dict[str, Any]]:
    return [views.vim_info(v) for v in app_of(request).vims.list()]


@router.post("/vnfm/v1/vims", status_code=201)
async def register_vim(request: Request, probe: bool = False) -> JSONResponse:
    """`?probe=true` (what `vnfm vim register` sends): only once the VIM answers and accepts its
    credentials (422 saying which failed)."""
    body = await json_body(request)
    vim = await off_loop(functools.partial(app_of(request).vims.register_body, body, probe=probe))
    return JSONResponse(views.vim_info(vim), status_code=201)


@router.get("/vnfm/v1/vims/{vim_id}")
async def show_vim(request: Request, vim_id: str) -> dict[str, Any]:
    return views.vim_info(app_of(request).vims.require(vim_id))


@router.get("/vnfm/v1/vims/{vim_id}/kubeconfig")
async def vim_kubeconfig(request: Request, vim_id: str, showToken: bool = False) -> dict[str, Any]:  # noqa: N803
    """A kubeconfig for a Kubernetes VIM; its bearer token only with `?showToken=true`."""
    return app_of(request).vims.kubeconfig(vim_id, with_token=showToken)


@router.delete("/vnfm/v1/vims/{vim_id}", status_code=204)
async def delete_vim(request: Request, vim_id: str) -> Response:
    app_of(request).vims.delete(vim_id)
    return Response(status_code=204)


@sim_router.get("/sim/v1/state")
async def sim_state(request: Request) -> dict[str, Any]:
    """The whole simulated cloud; with `operator_hosts` (hosts outside every VNF, e.g. Ansible
    servers, and the inventories they keep) once a driver has used one."""
    sim = app_of(request).sim
    snap = dict(sim.snapshot())
    operators = operator_view(sim)
    if operators:
        snap["operator_hosts"] = operators
    return snap


@sim_router.get("/sim/v1/state/{inst_id}")
async def sim_state_of(request: Request, inst_id: str) -> dict[str, Any]:
    snap = instance_state(app_of(request).sim, inst_id)
    if snap is None:
        raise NotFound(f"the simulated cloud has nothing for VNF instance {inst_id}")
    return snap


@faults_router.post("/sim/v1/faults", status_code=204)
async def sim_faults(request: Request) -> Response:
    """Inject faults into the simulated cloud (tests and demos of error paths)."""
    req = rq.parse(rq.SimFaultsRequest, await json_body(request))
    faults = rq.dump(req)
    if not faults:
        raise BadRequest("the body names no fault (fail_build, build_message, unreachable, unreachable_next, "
                         "fail_delete)")
    app_of(request).sim.inject(**faults)
    return Response(status_code=204)


@faults_router.delete("/sim/v1/faults", status_code=204)
async def sim_clear_faults(request: Request) -> Response:
    app_of(request).sim.clear_faults()
    return Response(status_code=204)
