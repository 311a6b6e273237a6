"""The console's pages (GET, readers and up) and the operator's buttons (POST: retry, rollback,
fail an occurrence through the same service calls, roles and audit as the API's routes)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.adapters.mgmt.cluster.params import DEFAULT_K8S_VERSION
from vnfm.domain.errors import BadRequest, VnfmError
from vnfm.domain.model import OpOcc, OpState
from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.console import sources
from vnfm.entrypoints.api.console.render import SECURITY_HEADERS, render
from vnfm.entrypoints.api.console.session import PREFIX, read_form
from vnfm.entrypoints.api.routing import Router
from vnfm.service import overview, views
from vnfm.service.ports import Condition
from vnfm.service.remedies import remedies

router = Router(prefix=PREFIX, include_in_schema=False)
FLEET_LIMIT = 1000  # instances, packages, VIMs listed on one page (the API lists the rest)
OPS_LIMIT = 200
RECENT_FAILED = 10
PROGRESS_LINES = 50  # as many as the API's vnfmProgress


async def _page(request: Request, build: Callable[[], Awaitable[Response]]) -> Response:
    """`build`'s page, or a page that says what went wrong with the error's status."""
    try:
        no_query(request)
        return await build()
    except VnfmError as exc:
        return render(request, "error.html", {"status": exc.status, "title": exc.title, "detail": exc.detail},
                      status=exc.status)


def no_query(request: Request) -> None:
    """Console pages take no query parameter: one is refused, naming it, rather than ignored."""
    for key in request.query_params:
        raise BadRequest(f"query parameter {key[:40]!r}: console pages take none")


def _op_row(occ: OpOcc) -> dict[str, Any]:
    return {"id": occ.id, "operation": occ.operation.value, "state": occ.operation_state.value,
            "since": views.ts(occ.state_entered_time), "instance": occ.vnf_instance_id,
            "error": (occ.error or {}).get("detail", "") if isinstance(occ.error, dict) else ""}


@router.get("")
def root() -> Response:
    return RedirectResponse(f"{PREFIX}/", status_code=303)


@router.get("/")
async def fleet(request: Request) -> Response:
    core = app_of(request)

    async def build() -> Response:
        instances = await off_loop(core.instances.page, [], None, FLEET_LIMIT)
        states = tuple(s.value for s in overview.ATTENTION)
        occs = await off_loop(core.instances.op_page, [Condition("operationState", "in", states)], None, OPS_LIMIT)
        ordered = overview.attention_order([o for o in occs if o.operation_state.value in states])
        failed = [o for o in ordered if o.operation_state == OpState.FAILED][:RECENT_FAILED]
        active = [o for o in ordered if o.operation_state != OpState.FAILED]
        rows = [{"id": i.id, "name": i.vnf_instance_name or "", "state": i.instantiation_state.value,
                 "product": f"{i.vnf_product_name} {i.vnf_software_version}", "busy": i.lock_op_id,
                 "cluster": overview.cluster_of(i, DEFAULT_K8S_VERSION)} for i in instances]
        return render(request, "fleet.html", {
            "by_state": overview.instances_by_state(instances), "instances": rows,
            "ops": [_op_row(o) for o in active + failed], "truncated": len(instances) >= FLEET_LIMIT})

    return await _page(request, build)


@router.get("/instances/{inst_id}")
async def instance(request: Request, inst_id: str) -> Response:
    core = app_of(request)

    async def build() -> Response:
        inst = await off_loop(core.instances.get, inst_id)
        cluster = overview.cluster_of(inst, DEFAULT_K8S_VERSION)
        vim = await off_loop(core.vims.get, inst.vim_id) if inst.vim_id else None
        occs = await off_loop(core.instances.op_page, [Condition("vnfInstanceId", "eq", (inst.id,))], None, OPS_LIMIT)
        occs = sorted((o for o in occs if o.vnf_instance_id == inst.id), key=lambda o: o.start_time, reverse=True)
        return render(request, "instance.html", {
            "inst": views.instance_info(inst), "cluster": cluster, "vnfcs": overview.vnfc_rows(inst),
            "nodes": await sources.cluster_nodes(core, cluster.vim_id) if cluster else None,
            "vim": views.vim_info(vim) if vim else None, "vim_id": inst.vim_id, "parts": overview.driver_parts(inst),
            "alarms": await sources.open_alarms(core, inst.id), "ops": [_op_row(o) for o in occs]})

    return await _page(request, build)


def progress_of(occ: OpOcc) -> dict[str, Any]:
    """What the operation page shows and polls: the same document and progress lines `--wait` reads."""
    body = views.op_occ_info(occ)
    return {"id": occ.id, "state": body["operationState"], "since": body.get("stateEnteredTime"),
            "final": occ.is_final or occ.operation_state == OpState.FAILED_TEMP,
            "events": views.masked(occ.events[-PROGRESS_LINES:]), "error": body.get("error"),
            "remedies": [vars(r) for r in remedies(body)], "op": body}


@router.get("/ops/{op_id}")
async def operation(request: Request, op_id: str) -> Response:
    core = app_of(request)

    async def build() -> Response:
        occ = await off_loop(core.instances.op_get, op_id)
        return render(request, "operation.html", {"p": progress_of(occ)})

    return await _page(request, build)


@router.get("/ops/{op_id}/progress")
def progress(request: Request, op_id: str) -> Response:  # in a worker thread
    no_query(request)
    return JSONResponse(progress_of(app_of(request).instances.op_get(op_id)), headers=SECURITY_HEADERS)


async def _act(request: Request, op_id: str, action: str) -> Response:
    core = app_of(request)

    async def build() -> Response:
        await read_form(request)
        await off_loop(getattr(core.instances, action), op_id)
        return RedirectResponse(f"{PREFIX}/ops/{op_id}", status_code=303)

    return await _page(request, build)


@router.post("/ops/{op_id}/retry")
async def retry(request: Request, op_id: str) -> Response:
    return await _act(request, op_id, "retry")


@router.post("/ops/{op_id}/rollback")
async def rollback(request: Request, op_id: str) -> Response:
    return await _act(request, op_id, "rollback")


@router.post("/ops/{op_id}/fail")
async def fail(request: Request, op_id: str) -> Response:
    return await _act(request, op_id, "fail")


@router.get("/packages")
async def packages(request: Request) -> Response:
    core = app_of(request)

    async def build() -> Response:
        found = await off_loop(core.packages.page, [], None, FLEET_LIMIT)
        return render(request, "packages.html", {"packages": [views.package_info(p) for p in found]})

    return await _page(request, build)


@router.get("/vims")
async def vims(request: Request) -> Response:
    core = app_of(request)

    async def build() -> Response:
        found = await off_loop(core.vims.list)
        rows = [{"id": v.id, "name": v.name, "type": views.reported_type(v.vim_type), "default": v.is_default,
                 "endpoint": views.masked(str(v.interface_info.get("endpoint") or v.access_info.get("authUrl") or "")),
                 "created": views.ts(v.created_at)} for v in found]
        return render(request, "vims.html", {"vims": rows})

    return await _page(request, build)
