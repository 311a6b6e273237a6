"""vnfm's extension routes for a cluster's certificates: what is known of them, and a convenience
route that starts their renewal. The renewal itself is a SOL003 HEAL occurrence
(`additionalParams.renew_certificates: true`, service/heal_plan.py), so it is followed, retried,
rolled forward or failed like any LCM operation (`GET /vnflcm/v1/vnf_lcm_op_occs/{id}`)."""

from __future__ import annotations

import functools
from typing import Any

from fastapi import Request, Response
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.entrypoints.api.body import no_body
from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.routing import Router
from vnfm.service import certificates

router = Router()


@router.get("/vnfm/v1/vnf_instances/{inst_id}/certificates")
async def show_certificates(request: Request, inst_id: str) -> dict[str, Any]:
    inst = await off_loop(app_of(request).instances.get, inst_id)
    return certificates.view(inst)


@router.post("/vnfm/v1/vnf_instances/{inst_id}/renew_certificates")
async def renew_certificates(request: Request, inst_id: str) -> Response:
    """202 with the Location of the HEAL occurrence that renews them (the same as
    `POST /vnflcm/v1/vnf_instances/{id}/heal {"additionalParams": {"renew_certificates": true}}`)."""
    await no_body(request, "renew_certificates")
    heal = functools.partial(app_of(request).instances.heal, inst_id,
                             {"additionalParams": {"renew_certificates": True}})
    occ = await off_loop(heal)
    return Response(status_code=202, headers={"Location": str(request.url_for("show_op_occ", op_id=occ.id))})
