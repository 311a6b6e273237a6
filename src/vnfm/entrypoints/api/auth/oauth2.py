"""The built-in OAuth 2.0 authorization server (SOL013 8.3, RFC 6749 4.4 client credentials):
`POST /oauth2/token` authenticates a client of the config file (`client_secret_basic` or
`client_secret_post`, one of them) and answers a short-lived JWT signed with the newest key;
`GET /oauth2/jwks` publishes the public keys (other services can check vnfm's tokens)."""

from __future__ import annotations

import asyncio
import base64
import binascii
from urllib.parse import parse_qsl, unquote

from fastapi import Request
from fastapi.responses import JSONResponse

from vnfm.adapters.auth.tokens import issue
from vnfm.config import OAuthClient
from vnfm.domain.access import ROLES
from vnfm.domain.secret_hash import hash_secret, verify_secret
from vnfm.entrypoints.api.auth.authenticate import Authenticator
from vnfm.entrypoints.api.auth.mtls import client_cert, thumbprint
from vnfm.entrypoints.api.routing import Router

router = Router()
MAX_FORM = 16 * 1024
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_DUMMY_HASH = hash_secret("vnfm-no-such-client")  # unknown clients cost the same time as known ones


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status

    def response(self) -> JSONResponse:
        headers = dict(_NO_STORE)
        if self.status == 401:
            headers["WWW-Authenticate"] = 'Basic realm="vnfm"'
        return JSONResponse({"error": self.error, "error_description": self.description},
                            status_code=self.status, headers=headers)


def _form(body: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "the body is no application/x-www-form-urlencoded form") from None
    form: dict[str, str] = {}
    for key, value in pairs:
        if key in form:
            raise OAuthError("invalid_request", f"parameter {key[:40]!r} appears more than once")
        form[key] = value
    return form


def _basic(header: str) -> tuple[str, str] | None:
    if header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise OAuthError("invalid_client", "malformed Basic credentials", 401) from None
    cid, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError("invalid_client", "malformed Basic credentials", 401)
    return unquote(cid), unquote(secret)  # RFC 6749 2.3.1: form-urlencoded before Basic


def _credentials(request: Request, form: dict[str, str]) -> tuple[str, str]:
    basic = _basic(request.headers.get("authorization", ""))
    posted = "client_secret" in form
    if basic is not None and posted:
        raise OAuthError("invalid_request", "use one client authentication method, not Basic and the body both")
    if basic is not None:
        if form.get("client_id", basic[0]) != basic[0]:
            raise OAuthError("invalid_request", "client_id in the body differs from the Basic credentials")
        return basic
    if posted and form.get("client_id"):
        return form["client_id"], form["client_secret"]
    raise OAuthError("invalid_client", "client authentication is required (client_secret_basic or "
                                       "client_secret_post)", 401)


def _granted(client: OAuthClient, scope: str | None) -> list[str]:
    if scope is None:
        return list(client.roles)
    wanted = scope.split()
    beyond = [w for w in wanted if w not in client.roles]
    if beyond or not wanted:
        raise OAuthError("invalid_scope", f"scope may name only the client's roles ({' '.join(client.roles)})")
    return [r for r in ROLES if r in wanted]


@router.post("/oauth2/token", include_in_schema=False)
async def token(request: Request) -> JSONResponse:
    auth: Authenticator = request.app.state.auth
    try:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded":
            raise OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM:
                raise OAuthError("invalid_request", "the body is too large")
        form = _form(body)
        client_id, secret = _credentials(request, form)
        client = await authenticate_client(auth, client_id, secret)
        if form.get("grant_type") != "client_credentials":
            raise OAuthError("unsupported_grant_type", "only grant_type=client_credentials is supported")
        roles = _granted(client, form.get("scope"))
    except OAuthError as exc:
        return exc.response()
    s = auth.settings
    access = issue_token(auth, client, roles, client_cert(request.scope))
    return JSONResponse({"access_token": access, "token_type": "Bearer", "expires_in": s.oauth2_token_lifetime,
                         "scope": " ".join(roles)}, headers=_NO_STORE)


async def authenticate_client(auth: Authenticator, client_id: str, secret: str) -> OAuthClient:
    """The configured client with this secret (unknown ones cost the same time); OAuthError otherwise."""
    client = auth.clients.get(client_id)
    ok = await asyncio.to_thread(verify_secret, secret, client.secret_hash if client else _DUMMY_HASH)
    if client is None or not ok:
        raise OAuthError("invalid_client", "unknown client or wrong secret", 401)
    return client


def issue_token(auth: Authenticator, client: OAuthClient, roles: list[str], cert: bytes | None) -> str:
    """A signed access token for `client`; over mutual TLS bound to the certificate (RFC 8705)."""
    s = auth.settings
    access, _ = issue(auth.signing_keys()[0], issuer=s.oauth2_issuer, audience=s.oauth2_audience,
                      subject=client.client_id, roles=roles, tenant=client.tenant, lifetime=s.oauth2_token_lifetime,
                      cnf_thumbprint=thumbprint(cert) if cert is not None else None)
    return access


@router.get("/oauth2/jwks", include_in_schema=False)
async def jwks(request: Request) -> JSONResponse:
    auth: Authenticator = request.app.state.auth
    return JSONResponse({"keys": [k.jwk() for k in auth.signing_keys()]})
