"""A URL that holds a control character (percent-decoded, in the path or a query parameter) is
refused with a 400 before any route runs.

Raw ASGI rather than `@app.middleware("http")`: Starlette's `BaseHTTPMiddleware` runs the rest of
the application in a task of its own and streams the response through a memory channel, a cost
paid by every request (issue 24 item 4's profile)."""

from __future__ import annotations

import re

from starlette.requests import Request

from vnfm.entrypoints.api import problem
from vnfm.entrypoints.api.headers import ASGIApp, Receive, Scope, Send

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A query string without these bytes decodes to no control character (only %XX escapes make one).
_MAYBE_IN_QUERY = re.compile(rb"[\x00-\x1f\x7f%]")
_CONTROL_BYTE = re.compile(rb"[\x00-\x1f\x7f]")


def may_hold_control(scope: Scope) -> bool:
    """False when the URL certainly holds no control character (the common case: no request
    object, no URL rebuilt, no query parsed); True: `control_in_url` decides. The URL a request
    object builds is made of the root path, the path, the Host header and the query string."""
    path, root, query = scope.get("path", ""), scope.get("root_path", ""), scope.get("query_string", b"")
    if not isinstance(path, str) or not isinstance(root, str) or not isinstance(query, bytes):
        return True
    if _CONTROL.search(path) or (root and _CONTROL.search(root)) or (query and _MAYBE_IN_QUERY.search(query)):
        return True
    return any(k.lower() == b"host" and _CONTROL_BYTE.search(v) for k, v in scope.get("headers", []))


def control_in_url(request: Request) -> str | None:
    """The part of the URL that holds a control character (percent-decoded), if any."""
    if _CONTROL.search(request.url.path):
        return "the path"
    for key, value in request.query_params.multi_items():
        if _CONTROL.search(key) or _CONTROL.search(value):
            return f"query parameter {key[:40]!r}"
    return None


class ControlChars:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and may_hold_control(scope):
            bad = control_in_url(Request(scope))
            if bad is not None:
                resp = problem.problem_response(400, "Bad Request", f"{bad} holds a control character")
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)
