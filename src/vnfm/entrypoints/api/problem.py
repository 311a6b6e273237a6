"""ProblemDetails (SOL013 / RFC 7807) responses for every error."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from vnfm.adapters.db import DB_ERRORS, is_busy
from vnfm.domain.errors import VnfmError

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
RETRY_AFTER = "2"  # seconds, for a 503 when the database was too busy


def problem_bytes(status: int, title: str, detail: str) -> bytes:
    return json.dumps({"status": status, "title": title, "detail": detail}).encode()


def problem_response(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    body = {"status": status, "title": title, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON)


def install(app: FastAPI) -> None:
    @app.exception_handler(VnfmError)
    async def _vnfm_error(request: Request, exc: VnfmError) -> JSONResponse:
        return problem_response(exc.status, exc.title, exc.detail, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        titles = {404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 401: "Unauthorized"}
        detail = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no resource at {request.url.path}"
        if exc.status_code == 405 and detail == "Method Not Allowed":
            detail = f"{request.method} is not supported on {request.url.path}"
        resp = problem_response(exc.status_code, titles.get(exc.status_code, "Error"), detail)
        resp.headers.update(exc.headers or {})  # Allow on a 405
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        return problem_response(400, "Bad Request", "; ".join(parts))

    # Client-driven errors are answered here, by handlers that do not re-raise: Starlette
    # re-raises whatever its catch-all `Exception` handler answered, and uvicorn then logs a
    # traceback per request (hundreds of lines a second from slow clients or a busy database).
    app.add_exception_handler(ClientDisconnect, _unexpected)
    for cls in DB_ERRORS:
        app.add_exception_handler(cls, _unexpected)
    app.add_exception_handler(Exception, _unexpected)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, ClientDisconnect):  # e.g. cut off for sending its body too slowly
        log.debug("%s %s: the client went away", request.method, request.url.path)
        return problem_response(400, "Bad Request", "the client disconnected")
    if is_busy(exc):  # a bounded wait on the database expired (pool, lock, statement)
        log.warning("%s %s: database busy: %s", request.method, request.url.path, type(exc).__name__)
        resp = problem_response(503, "Service Unavailable", "the database is busy; retry later")
        resp.headers["Retry-After"] = RETRY_AFTER
        return resp
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem_response(500, "Internal Server Error", f"unexpected {type(exc).__name__}; see the server log")
