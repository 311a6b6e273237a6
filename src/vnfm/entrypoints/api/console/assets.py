"""The console's stylesheet and script, read from the package (no CDN, no build step); public so
the login page is styled before anyone logs in. Two exact routes, one access rule each."""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import Response

from vnfm.entrypoints.api.console.session import PREFIX
from vnfm.entrypoints.api.routing import Router

router = Router(prefix=PREFIX, include_in_schema=False)
_CACHE = {"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"}


@cache
def asset(name: str) -> bytes:
    return (resources.files("vnfm.entrypoints.api.console") / "static" / name).read_bytes()


@router.get("/static/console.css")
def stylesheet() -> Response:
    return Response(asset("console.css"), media_type="text/css", headers=_CACHE)


@router.get("/static/console.js")
def script() -> Response:
    return Response(asset("console.js"), media_type="text/javascript", headers=_CACHE)
