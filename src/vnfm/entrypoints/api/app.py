"""The FastAPI application: SOL003 /vnflcm/v1, SOL005 /vnfpkgm/v1, vnfm's VIM and simulator APIs."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response

from vnfm import __version__
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.entrypoints.api import problem, vnflcm, vnfm_ext, vnfpkgm

API_VERSION = "2.6.1"


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

    app = FastAPI(title="vnfm", version=__version__, lifespan=lifespan,
                  description="ETSI NFV-SOL003/SOL005 v2.6.1 VNF manager")
    app.state.vnfm = core
    problem.install(app)

    @app.middleware("http")
    async def sol013_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        token = settings.auth_token
        if token and not request.url.path.endswith("api_versions"):
            got = request.headers.get("x-auth-token", "")
            bearer = request.headers.get("authorization", "")
            if bearer.lower().startswith("bearer "):
                got = got or bearer[7:]
            if not hmac.compare_digest(got.encode(), token.encode()):
                resp: Response = problem.problem_response(401, "Unauthorized", "a valid X-Auth-Token is required")
                resp.headers["WWW-Authenticate"] = "Bearer"
                resp.headers["Version"] = API_VERSION
                return resp
        response = await call_next(request)
        response.headers.setdefault("Version", API_VERSION)
        return response

    app.include_router(vnfpkgm.router)
    app.include_router(vnflcm.router)
    app.include_router(vnfm_ext.router)
    return app
