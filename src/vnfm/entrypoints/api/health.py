"""Probes and metrics for running vnfm as a service: GET /healthz (the process answers), GET /readyz
(the database answers and, where this process runs the LCM engine, the engine runs), GET /metrics
(Prometheus text format). The probes need no token (probes carry none); /metrics needs an admin
(auth/rules.py; Prometheus sends its token as `authorization: Bearer ...`)."""

from __future__ import annotations

import asyncio

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.routing import Router

router = Router()


@router.get("/healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> JSONResponse:
    core = app_of(request)
    checks: dict[str, str] = {}
    try:
        core.db_ping()
        checks["database"] = "ok"
    except Exception as exc:  # any driver error means "not ready"; its text can hold the URL
        checks["database"] = f"unreachable ({type(exc).__name__})"
    if core.settings.run_engine:
        checks["engine"] = "ok" if core.engine.is_running else "not running"
    else:
        checks["engine"] = "not run in this process"
    ready = all(v == "ok" or v.startswith("not run in") for v in checks.values())
    return JSONResponse({"status": "ok" if ready else "unavailable", "checks": checks},
                        status_code=200 if ready else 503)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    m = app_of(request).metrics
    # in a thread: the database gauges may query the database (at most once per few seconds)
    return Response(await asyncio.to_thread(m.render), media_type=m.content_type)
