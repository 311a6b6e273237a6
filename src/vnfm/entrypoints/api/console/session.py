"""How a browser's requests to the console are authenticated, with the API's own authentication and roles.

- `POST /console/login` takes a built-in OAuth 2.0 client's id and secret (the server issues the
  client's token itself, as `POST /oauth2/token` would) or an access token (the static development
  token, an external issuer's JWT, an introspected token). The token is checked like any API
  request's and kept in a cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's
  page sends it), Path=/console (the API never takes it: a cookie cannot drive /vnflcm), Secure
  over HTTPS, living as long as a built-in token. With no authentication configured (the embedded,
  loopback-only default) every caller is the anonymous admin and no login is asked.
- The gate (auth/gate.py) reads that cookie for /console paths only (`credential_headers`).
- Every console POST must come from a console page: its Origin (else Referer) is this server's,
  and it carries the form's `csrf` value, an HMAC of the session's token no other site can compute.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from fastapi import Request
from starlette.datastructures import Headers, MutableHeaders

from vnfm.domain.errors import BadRequest, Forbidden
from vnfm.entrypoints.api.auth.authenticate import bearer_token

PREFIX = "/console"
COOKIE = "vnfm_console"
MAX_FORM = 16 * 1024
_ANONYMOUS_KEY = secrets.token_bytes(32)  # CSRF key with no session token (no authentication configured)


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def cookie_token(headers: Mapping[str, str]) -> str:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header carries no session  # noqa: BLE001
        return ""
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else ""


def credential_headers(scope: MutableMapping[str, Any], headers: Headers) -> Headers:
    """The headers a console request authenticates with: its session cookie's token as a bearer
    token (a console request with its own Authorization header keeps it). Other paths: unchanged."""
    path = str(scope.get("path", ""))
    if not is_console(path) or bearer_token(headers):
        return headers
    token = cookie_token(headers)
    if not token:
        return headers
    changed = MutableHeaders(raw=list(headers.raw))
    changed["authorization"] = f"Bearer {token}"
    return Headers(raw=changed.raw)


def csrf_value(request: Request) -> str:
    token = cookie_token(request.headers)
    key = token.encode() if token else _ANONYMOUS_KEY
    return hmac.new(key, b"vnfm-console-csrf", hashlib.sha256).hexdigest()


def _same_origin(request: Request) -> bool:
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    parts = urlsplit(source)
    return bool(parts.scheme and parts.netloc) and (parts.scheme, parts.netloc) == (
        request.url.scheme, request.url.netloc)


async def read_form(request: Request, fields: frozenset[str] = frozenset(), *,
                    csrf: bool = True) -> dict[str, str]:
    """The urlencoded form of a console POST, refused (403) unless it comes from a console page;
    a field other than `fields` (and `csrf`) is refused (400) naming it, a repeated one too."""
    if not _same_origin(request):
        raise Forbidden("a console form must be posted from this server's own pages (Origin or Referer)")
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise BadRequest("a console form must be application/x-www-form-urlencoded")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            raise BadRequest("the form is too large")
    try:
        pairs = parse_qsl(body.decode(), keep_blank_values=True)
    except UnicodeDecodeError:
        raise BadRequest("the form is not UTF-8") from None
    allowed = fields | ({"csrf"} if csrf else set())
    form: dict[str, str] = {}
    for key, value in pairs:
        if key not in allowed:
            raise BadRequest(f"form field {key[:40]!r} is unknown here (known: {', '.join(sorted(allowed)) or 'none'})")
        if key in form:
            raise BadRequest(f"form field {key[:40]!r} appears more than once")
        form[key] = value
    if csrf and not hmac.compare_digest(form.get("csrf", ""), csrf_value(request)):
        raise Forbidden("the form's csrf value does not match this session: reload the page")
    return form
