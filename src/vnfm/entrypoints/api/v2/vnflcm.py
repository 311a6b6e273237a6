"""SOL003 v3.3.1 VNF lifecycle management at /vnflcm/v2 (API version 2.0.0).

The same services, engine and store as /vnflcm/v1: an instance made through either API is
shown and operated through both. Bodies are mapped by `bodies` (requests) and
`service.views_v2` (responses); lists, filters, selectors, paging, ETags and ProblemDetails
work as on v1. Every route but api_versions needs the `Version` header (`version.py`).
"""

from __future__ import annotations

from functools import partial

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.model import OP_OCC_ENGINE_PRIVATE, OpOcc, VnfInstance
from vnfm.entrypoints.api import query
from vnfm.entrypoints.api.body import no_body
from vnfm.entrypoints.api.common import ListSource, app_of, json_body, listing
from vnfm.entrypoints.api.etag import if_match
from vnfm.entrypoints.api.locations import location
from vnfm.entrypoints.api.routing import Router
from vnfm.entrypoints.api.v2 import bodies
from vnfm.entrypoints.api.v2.version import API_VERSION, PREFIX, require_version
from vnfm.service import views, views_v2

versions = Router(prefix=PREFIX)
router = Router(prefix=PREFIX, dependencies=[Depends(require_version)])

# SOL003 v3.3.1 5.5.2.2 / 5.5.2.13: the attributes a filter or selector may name
INSTANCE_ATTRIBUTES = query.VNF_INSTANCE_ATTRIBUTES - {"vnfPkgId"}
OP_OCC_ATTRIBUTES = query.VNF_LCM_OP_OCC_ATTRIBUTES | {"modificationsTriggeredByVnfPkgChange", "vnfSnapshotInfoId"}
OP_OCC_DEFAULT_EXCLUDED = (*query.VNF_LCM_OP_OCC_DEFAULT_EXCLUDED, "modificationsTriggeredByVnfPkgChange")


@versions.get("/api_versions")
async def api_versions() -> dict[str, object]:
    return {"uriPrefix": PREFIX, "apiVersions": [{"version": API_VERSION, "isDeprecated": False}]}


def _accepted(request: Request, occ: OpOcc) -> Response:
    return Response(status_code=202, headers={"Location": location(request, "show_op_occ_v2", op_id=occ.id)})


# ------------------------------------------------------------------ instances
@router.post("/vnf_instances", status_code=201)
async def create_instance(request: Request) -> JSONResponse:
    body = bodies.create(await json_body(request))
    inst = await off_loop(app_of(request).instances.create, body)
    loc = location(request, "show_instance_v2", inst_id=inst.id)
    return JSONResponse(views_v2.instance_info(inst), status_code=201, headers={"Location": loc})


@router.get("/vnf_instances")
async def list_instances(request: Request) -> Response:
    app = app_of(request)
    source = ListSource(app.instances.page, views_v2.instance_info, lambda i: i.id,
                        lean=lambda i, omit: views_v2.instance_info(i, omit), fetch_lean=app.instances.page)
    return await listing(request, source, query.VNF_INSTANCE_DEFAULT_EXCLUDED, attributes=INSTANCE_ATTRIBUTES,
                         resource="VnfInstance", page_size=app.settings.page_size)


@router.get("/vnf_instances/{inst_id}", name="show_instance_v2")
def show_instance(request: Request, inst_id: str) -> dict[str, object]:
    return views_v2.instance_info(app_of(request).instances.get(inst_id))


@router.patch("/vnf_instances/{inst_id}")
async def modify_instance(request: Request, inst_id: str) -> Response:
    header = request.headers.get("if-match")
    app = app_of(request)
    raw = await json_body(request)
    body = bodies.modify(raw, await off_loop(app.instances.get, inst_id))

    def expect(inst: VnfInstance) -> None:  # 412 and no change when it does not match (v2's ETag)
        if_match(header, lambda: views_v2.instance_info(inst))

    return _accepted(request, await off_loop(app.instances.modify, inst_id, body, expect))


@router.delete("/vnf_instances/{inst_id}", status_code=204)
async def delete_instance(request: Request, inst_id: str) -> Response:
    await off_loop(app_of(request).instances.delete, inst_id)
    return Response(status_code=204)


@router.post("/vnf_instances/{inst_id}/instantiate")
async def instantiate(request: Request, inst_id: str) -> Response:
    body = bodies.instantiate(await json_body(request))
    return _accepted(request, await off_loop(app_of(request).instances.instantiate, inst_id, body))


@router.post("/vnf_instances/{inst_id}/scale")
async def scale(request: Request, inst_id: str) -> Response:
    body = bodies.scale(await json_body(request))
    return _accepted(request, await off_loop(app_of(request).instances.scale, inst_id, body))


@router.post("/vnf_instances/{inst_id}/heal")
async def heal(request: Request, inst_id: str) -> Response:
    app = app_of(request)
    raw = await json_body(request)  # none: 400; `{}`: heal the entire VNF
    body = bodies.heal(raw, await off_loop(app.instances.get, inst_id))
    return _accepted(request, await off_loop(app.instances.heal, inst_id, body))


@router.post("/vnf_instances/{inst_id}/terminate")
async def terminate(request: Request, inst_id: str) -> Response:
    body = bodies.terminate(await json_body(request))
    return _accepted(request, await off_loop(app_of(request).instances.terminate, inst_id, body))


@router.post("/vnf_instances/{inst_id}/change_vnfpkg")
async def change_vnfpkg(request: Request, inst_id: str) -> Response:
    body = bodies.change_vnfpkg(await json_body(request))
    return _accepted(request, await off_loop(app_of(request).instances.change_vnfpkg, inst_id, body))


# ------------------------------------------------------------------ occurrences
@router.get("/vnf_lcm_op_occs")
async def list_op_occs(request: Request) -> Response:
    app = app_of(request)
    pages = partial(app.instances.op_page, omit=frozenset({OP_OCC_ENGINE_PRIVATE}))  # plan, log: never shown
    source = ListSource(pages, views_v2.op_occ_info, lambda o: o.id)
    return await listing(request, source, OP_OCC_DEFAULT_EXCLUDED, attributes=OP_OCC_ATTRIBUTES,
                         resource="VnfLcmOpOcc", page_size=app.settings.page_size)


@router.get("/vnf_lcm_op_occs/{op_id}", name="show_op_occ_v2")
def show_op_occ(request: Request, op_id: str) -> dict[str, object]:
    occ = app_of(request).instances.op_get(op_id)
    body = views_v2.op_occ_info(occ)
    body["vnfmProgress"] = views.masked(occ.events[-50:])  # vnfm's extensions, as on v1
    if occ.warnings:
        body["vnfmWarnings"] = views.masked(list(occ.warnings))
    return body


@router.post("/vnf_lcm_op_occs/{op_id}/retry")
async def retry(request: Request, op_id: str) -> Response:
    await no_body(request, "retry")
    return _accepted(request, await off_loop(app_of(request).instances.retry, op_id))


@router.post("/vnf_lcm_op_occs/{op_id}/rollback")
async def rollback(request: Request, op_id: str) -> Response:
    await no_body(request, "rollback")
    return _accepted(request, await off_loop(app_of(request).instances.rollback, op_id))


@router.post("/vnf_lcm_op_occs/{op_id}/cancel")
async def cancel(request: Request, op_id: str) -> Response:
    await off_loop(app_of(request).instances.cancel, op_id, await json_body(request))
    return Response(status_code=202)


@router.post("/vnf_lcm_op_occs/{op_id}/fail")
async def fail(request: Request, op_id: str) -> dict[str, object]:
    await no_body(request, "fail")
    return views_v2.op_occ_info(await off_loop(app_of(request).instances.fail, op_id))
