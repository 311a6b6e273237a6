"""Entity tags (RFC 9110 8.8.3, 13.1; SOL013 4.5, SOL003 v2.6.1 5.4.3.3.4).

A GET of an individual resource answers with a strong `ETag`: a digest of the representation it
sends, so it changes whenever what a client sees changes (`If-None-Match` with it: 304). A PATCH
with `If-Match` is carried out only when the resource's current representation has one of the
tags given (`*`: any); otherwise 412 and nothing changes. The PATCH routes compute the current
tag from the same document their GET sends (`etag_of`), inside the transaction that applies the
change (`if_match`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from vnfm.domain.errors import PreconditionFailed
from vnfm.entrypoints.api.headers import ASGIApp, Message, Receive, Scope, Send

# The individual resources (GET answers with an ETag).
INDIVIDUAL = re.compile(r"^/(?:vnflcm/v[12]/(?:vnf_instances|vnf_lcm_op_occs|subscriptions)"
                        r"|vnfpkgm/v1/(?:vnf_packages|subscriptions)|vnffm/v1/(?:alarms|subscriptions)|vnfm/v1/vims"
                        r"|v1\.0/vims)/[^/]+/?$")


def etag_bytes(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def etag_of(document: Any) -> str:
    """The ETag a GET route returning `document` sends (rendered as FastAPI renders it)."""
    return etag_bytes(bytes(JSONResponse(jsonable_encoder(document)).body))


def _tags(header: str) -> list[str]:
    return [t.strip() for t in header.split(",") if t.strip()]


def if_match(header: str | None, current: Callable[[], Any]) -> None:
    """PreconditionFailed unless `header` (an If-Match value; None: not sent) names the ETag of
    `current()`, the resource's representation now."""
    if header is None:
        return
    tags = _tags(header)
    if "*" in tags:
        return
    now = etag_of(current())
    if now not in tags:  # strong comparison: a weak tag (W/"...") never matches
        raise PreconditionFailed(f"If-Match {header[:100]!r}: the resource has changed (its ETag is now {now}); "
                                 "nothing was modified: GET it again")


class ETags:
    """Raw ASGI middleware: ETag (and If-None-Match -> 304) on GETs of individual resources."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD") \
                or not INDIVIDUAL.match(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        none_match = ", ".join(v.decode("latin-1") for k, v in scope.get("headers", [])
                               if k.lower() == b"if-none-match")
        start: Message | None = None
        chunks: list[bytes] = []

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if message["status"] != 200:
                    await send(message)
                    return
                start = message
                return
            if start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            tag = etag_bytes(body)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"etag"]
            headers.append((b"etag", tag.encode()))
            matched = tag in _tags(none_match) or "*" in _tags(none_match)
            if matched:  # RFC 9110 15.4.5: no content, the validator
                headers = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-type")]
                await send({**start, "status": 304, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, buffered)
