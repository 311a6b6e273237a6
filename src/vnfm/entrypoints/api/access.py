"""The HTTP access log (logger `vnfm.access`), one line per request with its request id, and the
latency of each request for the metrics.

A raw ASGI middleware around the whole application (so 401s and 500s are logged too). The request
id is the client's `X-Request-Id` when it is a plain token, else a new one; the response carries
it back in `X-Request-Id`. Only the path is logged, never the query string or a header value.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable

from vnfm.entrypoints.api.headers import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("vnfm.access")
_TOKEN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
Observe = Callable[[str, str, int, float], None]  # method, route template or "other", status, seconds
# The metrics' method label: any other token a client sends counts as "other" (bounded label set).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name.lower() == b"x-request-id":
            text = value.decode("latin-1")
            if _TOKEN.match(text):
                return text
    return uuid.uuid4().hex[:16]


class AccessLog:
    def __init__(self, app: ASGIApp, observe: Observe | None = None) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(scope)
        scope.setdefault("state", {})["request_id"] = rid
        started = time.monotonic()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.monotonic() - started
            method, path = scope.get("method", ""), scope.get("path", "")
            log.info("%s %s %d %.1fms", method, path, status, seconds * 1000,
                     extra={"request_id": rid, "method": method, "path": path, "status": status,
                            "ms": round(seconds * 1000, 1)})
            if self.observe is not None:
                route = scope.get("route")
                template = getattr(route, "path", None) or "other"
                self.observe(method if method in METHODS else "other", template, status, seconds)
