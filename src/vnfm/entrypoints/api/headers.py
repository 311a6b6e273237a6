"""Response headers as the specifications write them, on every response.

Starlette stores header names in lower case and uvicorn sends them as they are. HTTP says names
are case-insensitive, but the ETSI NFV-TST 010 suites (and some clients) read `Location`,
`Content-Type`, `Link`, `Version` ... case-sensitively. This raw ASGI middleware wraps the whole
application (outside Starlette's error handling, so 500s, 401s and streamed or file responses
pass through it too): it writes every header name in its canonical spelling and adds the SOL013
`Version` header (and `Date`, since uvicorn's own lower-case one is turned off) when missing.

It also merges repeated slashes in the request path: the ETSI suites build URLs as
`{apiRoot}/{apiName}/...` with apiRoot "/" and so ask for `//vnflcm/v1/...`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Names whose canonical spelling is not plain "Title-Case".
_SPECIAL = {
    b"www-authenticate": b"WWW-Authenticate",
    b"etag": b"ETag",
    b"content-md5": b"Content-MD5",
    b"x-xss-protection": b"X-XSS-Protection",
}


_SLASHES = re.compile(r"/{2,}")


def canonical(name: bytes) -> bytes:
    """b"content-type" -> b"Content-Type", b"www-authenticate" -> b"WWW-Authenticate"."""
    low = name.lower()
    special = _SPECIAL.get(low)
    if special is not None:
        return special
    return b"-".join(part[:1].upper() + part[1:] for part in low.split(b"-"))


class CanonicalHeaders:
    def __init__(self, app: ASGIApp, version: str, *, add_date: bool = True,
                 by_prefix: dict[str, str] | None = None) -> None:
        """`version`: the `Version` of a response that has none; `by_prefix`: another one for the
        paths under a prefix (another major version of an API, e.g. /vnflcm/v2 -> 2.0.0)."""
        self.app = app
        self.version = version.encode("latin-1")
        self.add_date = add_date
        self.by_prefix = [(p.rstrip("/"), v.encode("latin-1")) for p, v in (by_prefix or {}).items()]

    def version_of(self, path: str) -> bytes:
        for prefix, version in self.by_prefix:
            if path == prefix or path.startswith(prefix + "/"):
                return version
        return self.version

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if "//" in path:
            scope = dict(scope)
            scope["path"] = _SLASHES.sub("/", path)
            raw = scope.get("raw_path")
            if isinstance(raw, bytes):
                scope["raw_path"] = re.sub(rb"/{2,}", b"/", raw)

        version = self.version_of(scope.get("path", ""))

        async def send_canonical(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(canonical(bytes(k)), bytes(v)) for k, v in message.get("headers", [])]
                names = {k for k, _ in headers}
                if b"Version" not in names:
                    headers.append((b"Version", version))
                if self.add_date and b"Date" not in names:
                    headers.append((b"Date", formatdate(usegmt=True).encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_canonical)
