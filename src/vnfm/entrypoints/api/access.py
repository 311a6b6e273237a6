"""The HTTP access log (logger `vnfm.access`), one line per request with its request id, and the
latency of each request for the metrics.

Written by the raw ASGI middleware around the whole application (`edge.Edge`: 401s and 500s are
logged too). The request id is the client's `X-Request-Id` when it is a plain token, else a new
one; the response carries it back in `X-Request-Id`. Only the path is logged, never the query
string or a header value.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable

from vnfm.entrypoints.api.headers import Scope

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


def log_request(scope: Scope, rid: str, status: int, seconds: float, observe: Observe | None) -> None:
    """The request's access line, and its latency for the metrics (`observe`)."""
    method, path = scope.get("method", ""), scope.get("path", "")
    if log.isEnabledFor(logging.INFO):
        log.info("%s %s %d %.1fms", method, path, status, seconds * 1000,
                 extra={"request_id": rid, "method": method, "path": path, "status": status,
                        "ms": round(seconds * 1000, 1)})
    if observe is not None:
        template = getattr(scope.get("route"), "path", None) or "other"
        observe(method if method in METHODS else "other", template, status, seconds)
