"""SOL003 v2.6.1 VNF lifecycle management: /vnflcm/v1 (SOL002 heal by vnfcInstanceId accepted)."""

from __future__ import annotations

from functools import partial

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.model import OP_OCC_ENGINE_PRIVATE, OpOcc, VnfInstance
from vnfm.entrypoints.api import query
from vnfm.entrypoints.api.body import no_body
from vnfm.entrypoints.api.common import ListSource, add_subscription_routes, app_of, json_body, listing
from vnfm.entrypoints.api.etag import if_match
from vnfm.entrypoints.api.locations import location
from vnfm.entrypoints.api.routing import Router
from vnfm.service import views

router = Router(prefix="/vnflcm")
PRIVATE = frozenset({OP_OCC_ENGINE_PRIVATE})
# Every route does its database work in a worker thread (`off_loop`, or a plain `def` route): the
# event loop only parses requests, runs the LCM engine and heart-beats.


@router.get("/v1/api_versions")
async def api_versions() -> dict[str, object]:
    return {"uriPrefix": "/vnflcm/v1", "apiVersions": [{"version": "2.6.1", "isDeprecated": False}]}


@router.get("/api_versions")
async def all_api_versions() -> dict[str, object]:
    """Both major versions (SOL013: the API name's api_versions), /vnflcm/v2's being SOL003 v3.3.1."""
    return {"uriPrefix": "/vnflcm", "apiVersions": [{"version": "2.6.1", "isDeprecated": False},
                                                     {"version": "2.0.0", "isDeprecated": False}]}


def _accepted(request: Request, occ: OpOcc) -> Response:
    loc = location(request, "show_op_occ", op_id=occ.id)
    return Response(status_code=202, headers={"Location": loc})


# ------------------------------------------------------------------ instances
@router.post("/v1/vnf_instances", status_code=201)
async def create_instance(request: Request) -> JSONResponse:
    inst = await off_loop(app_of(request).instances.create, await json_body(request))
    loc = location(request, "show_instance", inst_id=inst.id)
    return JSONResponse(views.instance_info(inst), status_code=201, headers={"Location": loc})


@router.get("/v1/vnf_instances")
async def list_instances(request: Request) -> Response:
    app = app_of(request)
    source = ListSource(app.instances.page, views.instance_info, lambda i: i.id,
                        lean=lambda i, omit: views.instance_info(i, omit), fetch_lean=app.instances.page)
    return await listing(request, source, query.VNF_INSTANCE_DEFAULT_EXCLUDED,
                         attributes=query.VNF_INSTANCE_ATTRIBUTES, resource="VnfInstance",
                         page_size=app.settings.page_size)


# Plain `def` routes that only read run in a worker thread (the database is not read on the loop).
@router.get("/v1/vnf_instances/{inst_id}", name="show_instance")
def show_instance(request: Request, inst_id: str) -> dict[str, object]:
    return views.instance_info(app_of(request).instances.get(inst_id))


@router.patch("/v1/vnf_instances/{inst_id}")
async def modify_instance(request: Request, inst_id: str) -> Response:
    header = request.headers.get("if-match")

    def expect(inst: VnfInstance) -> None:  # SOL003 5.4.3.3.4: 412 and no change when it does not match
        if_match(header, lambda: views.instance_info(inst))

    occ = await off_loop(app_of(request).instances.modify, inst_id, await json_body(request), expect)
    return _accepted(request, occ)


@router.delete("/v1/vnf_instances/{inst_id}", status_code=204)
async def delete_instance(request: Request, inst_id: str) -> Response:
    await off_loop(app_of(request).instances.delete, inst_id)
    return Response(status_code=204)


@router.post("/v1/vnf_instances/{inst_id}/instantiate")
async def instantiate(request: Request, inst_id: str) -> Response:
    return _accepted(request, await off_loop(app_of(request).instances.instantiate, inst_id, await json_body(request)))


@router.post("/v1/vnf_instances/{inst_id}/scale")
async def scale(request: Request, inst_id: str) -> Response:
    return _accepted(request, await off_loop(app_of(request).instances.scale, inst_id, await json_body(request)))


@router.post("/v1/vnf_instances/{inst_id}/heal")
async def heal(request: Request, inst_id: str) -> Response:
    # No body is a 400 (a body-less POST must not rebuild the whole VNF); `{}` is SOL003's heal entire.
    return _accepted(request, await off_loop(app_of(request).instances.heal, inst_id, await json_body(request)))


@router.post("/v1/vnf_instances/{inst_id}/change_vnfpkg")
async def change_vnfpkg(request: Request, inst_id: str) -> Response:
    return _accepted(request, await off_loop(app_of(request).instances.change_vnfpkg, inst_id,
                                             await json_body(request)))


@router.post("/v1/vnf_instances/{inst_id}/terminate")
async def terminate(request: Request, inst_id: str) -> Response:
    return _accepted(request, await off_loop(app_of(request).instances.terminate, inst_id, await json_body(request)))


# ------------------------------------------------------------------ occurrences
@router.get("/v1/vnf_lcm_op_occs")
async def list_op_occs(request: Request) -> Response:
    app = app_of(request)
    pages = partial(app.instances.op_page, omit=PRIVATE)  # plan, log: never shown
    # what a list does not show (by default operationParams, error, the changes) is not built
    source = ListSource(pages, views.op_occ_info, lambda o: o.id, lean=views.op_occ_info,
                        fetch_lean=lambda c, a, n, omit: app.instances.op_page(c, a, n, omit | PRIVATE))
    return await listing(request, source, query.VNF_LCM_OP_OCC_DEFAULT_EXCLUDED,
                         attributes=query.VNF_LCM_OP_OCC_ATTRIBUTES, resource="VnfLcmOpOcc",
                         page_size=app.settings.page_size)


@router.get("/v1/vnf_lcm_op_occs/{op_id}", name="show_op_occ")
def show_op_occ(request: Request, op_id: str) -> dict[str, object]:
    occ = app_of(request).instances.op_get(op_id)
    body = views.op_occ_info(occ)
    body["vnfmProgress"] = views.masked(occ.events[-50:])
    if occ.warnings:  # what the request asked that was not done as asked (kept with the occurrence)
        body["vnfmWarnings"] = views.masked(list(occ.warnings))
    return body


@router.post("/v1/vnf_lcm_op_occs/{op_id}/retry")
async def retry(request: Request, op_id: str) -> Response:
    """202 with the occurrence's Location (not required by SOL003, read by the ETSI suite)."""
    await no_body(request, "retry")
    return _accepted(request, await off_loop(app_of(request).instances.retry, op_id))


@router.post("/v1/vnf_lcm_op_occs/{op_id}/rollback")
async def rollback(request: Request, op_id: str) -> Response:
    await no_body(request, "rollback")
    return _accepted(request, await off_loop(app_of(request).instances.rollback, op_id))


@router.post("/v1/vnf_lcm_op_occs/{op_id}/cancel")
async def cancel(request: Request, op_id: str) -> Response:
    await off_loop(app_of(request).instances.cancel, op_id, await json_body(request))
    return Response(status_code=202)


@router.post("/v1/vnf_lcm_op_occs/{op_id}/fail")
async def fail(request: Request, op_id: str) -> dict[str, object]:
    await no_body(request, "fail")
    return views.op_occ_info(await off_loop(app_of(request).instances.fail, op_id))


# ------------------------------------------------------------------ subscriptions (5.4.18, 5.4.19)
add_subscription_routes(router, "/v1/subscriptions", "vnflcm", "show_subscription")
