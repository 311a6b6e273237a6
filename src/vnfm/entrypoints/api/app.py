"""The FastAPI application: SOL003 /vnflcm/v1, SOL005 /vnfpkgm/v1, vnfm's VIM and simulator APIs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.types import ASGIApp

from vnfm import __version__
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.entrypoints.api import (
    backups,
    certificates,
    doctor,
    health,
    openapi,
    problem,
    tacker_vims,
    unsupported,
    vnffm,
    vnflcm,
    vnfm_ext,
    vnfpkgm,
)
from vnfm.entrypoints.api.auth import oauth2
from vnfm.entrypoints.api.auth.authenticate import Authenticator
from vnfm.entrypoints.api.auth.gate import AuthGate, authorize
from vnfm.entrypoints.api.console import assets as console_assets
from vnfm.entrypoints.api.console import login as console_login
from vnfm.entrypoints.api.console import pages as console_pages
from vnfm.entrypoints.api.controlchars import ControlChars
from vnfm.entrypoints.api.edge import Edge
from vnfm.entrypoints.api.etag import ETags
from vnfm.entrypoints.api.v2 import subscriptions as v2_subscriptions
from vnfm.entrypoints.api.v2 import version as v2_version
from vnfm.entrypoints.api.v2 import vnflcm as v2_vnflcm

API_VERSION = "2.6.1"
NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


class VnfmApi(FastAPI):
    """FastAPI with the header middleware outside everything else (error responses included)."""

    def build_middleware_stack(self) -> ASGIApp:
        core = getattr(self.state, "vnfm", None)
        observe = core.metrics.http_request if core is not None else None
        # outside the error handlers: their ProblemDetails are labelled as the client accepts, and logged
        return Edge(super().build_middleware_stack(), API_VERSION, observe=observe,
                    by_prefix={v2_version.PREFIX: v2_version.API_VERSION})


def create_app(settings: Settings | None = None, *, vnfm_app: App | None = None) -> FastAPI:
    settings = settings or (vnfm_app.settings if vnfm_app else Settings())
    core = vnfm_app or build(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await core.start()
        try:
            yield
        finally:
            await core.stop()

    # FastAPI's native OpenTelemetry off: vnfm exports Prometheus metrics and configures no OTel
    # provider, yet FastAPI asked the global providers (and the environment) on every request.
    app = VnfmApi(title="vnfm", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="ETSI NFV-SOL003/SOL005 v2.6.1 VNF manager", dependencies=[Depends(authorize)],
                  telemetry=NO_TELEMETRY)
    app.state.vnfm = core
    app.state.auth = Authenticator(settings)
    problem.install(app)
    app.add_middleware(ETags)
    app.add_middleware(ControlChars)  # a control character in the URL: 400 before any route

    app.include_router(vnfpkgm.versions)
    app.include_router(vnfpkgm.router)
    app.include_router(vnflcm.router)
    app.include_router(vnffm.router)
    app.include_router(unsupported.router)
    app.include_router(unsupported.router_v2)
    app.include_router(v2_vnflcm.versions)
    app.include_router(v2_vnflcm.router)
    app.include_router(v2_subscriptions.router)
    app.include_router(vnfm_ext.router)
    app.include_router(backups.router)
    app.include_router(certificates.router)
    if settings.simulator:  # the simulated cloud's API and fault injection exist only while it is a VIM
        app.include_router(vnfm_ext.sim_router)
        if settings.fault_injection:
            app.include_router(vnfm_ext.faults_router)
    app.include_router(tacker_vims.router)
    app.include_router(health.router)
    app.include_router(doctor.router)
    app.include_router(oauth2.router)
    for console in (console_login, console_assets, console_pages):  # the web console, /console
        app.include_router(console.router)
    openapi.install(app)  # the completed /openapi.json, /docs and /redoc without a CDN
    app.add_middleware(AuthGate, authenticator=app.state.auth)  # outermost: before any route or body
    return app
