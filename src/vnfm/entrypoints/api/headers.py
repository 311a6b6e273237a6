"""Response headers as the specifications write them, on every response (applied by `edge.Edge`).

Starlette stores header names in lower case and uvicorn sends them as they are. HTTP says names
are case-insensitive, but the ETSI NFV-TST 010 suites (and some clients) read `Location`,
`Content-Type`, `Link`, `Version` ... case-sensitively. The raw ASGI middleware `edge.Edge` wraps the whole
application (outside Starlette's error handling, so 500s, 401s and streamed or file responses
pass through it too): every header name in its canonical spelling, and the SOL013 `Version`
header (and `Date`, since uvicorn's own lower-case one is turned off) added when missing.

It also merges repeated slashes in the request path: the ETSI suites build URLs as
`{apiRoot}/{apiName}/...` with apiRoot "/" and so ask for `//vnflcm/v1/...`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from functools import lru_cache
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


@lru_cache(maxsize=512)  # response header names: a small set
def canonical_cached(name: bytes) -> bytes:
    return canonical(name)


def merge_slashes(scope: Scope) -> Scope:
    """`scope` with repeated slashes of its path merged (a copy; `scope` itself when there are none)."""
    path = scope.get("path", "")
    if "//" not in path:
        return scope
    scope = dict(scope)
    scope["path"] = _SLASHES.sub("/", path)
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        scope["raw_path"] = re.sub(rb"/{2,}", b"/", raw)
    return scope


class Versions:
    """The `Version` header of a response that has none: `version`, or another one for the paths
    under a prefix (`by_prefix`: another major version of an API, e.g. /vnflcm/v2 -> 2.0.0)."""

    def __init__(self, version: str, by_prefix: dict[str, str] | None = None) -> None:
        self.version = version.encode("latin-1")
        self.by_prefix = [(p.rstrip("/"), v.encode("latin-1")) for p, v in (by_prefix or {}).items()]

    def of(self, path: str) -> bytes:
        for prefix, version in self.by_prefix:
            if path == prefix or path.startswith(prefix + "/"):
                return version
        return self.version


_date: tuple[int, bytes] = (0, b"")  # (second, its Date value): one formatdate per second


def http_date() -> bytes:
    global _date
    now = int(time.time())
    if _date[0] != now:
        _date = (now, formatdate(now, usegmt=True).encode("latin-1"))
    return _date[1]


def finish_headers(headers: list[tuple[bytes, bytes]], version: bytes, add_date: bool) -> list[tuple[bytes, bytes]]:
    """Every name in its canonical spelling; `Version` and `Date` added when missing."""
    out = [(canonical_cached(bytes(k)), bytes(v)) for k, v in headers]
    names = {k for k, _ in out}
    if b"Version" not in names:
        out.append((b"Version", version))
    if add_date and b"Date" not in names:
        out.append((b"Date", http_date()))
    return out
