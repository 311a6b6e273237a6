"""The console's login and logout (how the session cookie is made: see session.py)."""

from __future__ import annotations

from fastapi import Request, Response
from fastapi.responses import RedirectResponse

from vnfm.entrypoints.api.auth.authenticate import Authenticator, AuthFailed
from vnfm.entrypoints.api.auth.mtls import client_cert
from vnfm.entrypoints.api.auth.oauth2 import OAuthError, authenticate_client, issue_token
from vnfm.entrypoints.api.console.render import render
from vnfm.entrypoints.api.console.session import COOKIE, PREFIX, read_form
from vnfm.entrypoints.api.routing import Router

router = Router(prefix=PREFIX, include_in_schema=False)
LOGIN_FIELDS = frozenset({"client_id", "client_secret", "token"})


@router.get("/login", name="console_login")
def login_page(request: Request) -> Response:
    auth: Authenticator = request.app.state.auth
    if not auth.enabled:
        return RedirectResponse(f"{PREFIX}/", status_code=303)
    return render(request, "login.html", {"builtin": bool(auth.clients), "error": ""})


async def _token_from(request: Request, auth: Authenticator, form: dict[str, str]) -> tuple[str, int | None]:
    if form.get("client_id"):
        try:
            client = await authenticate_client(auth, form["client_id"], form.get("client_secret", ""))
        except OAuthError as exc:
            raise AuthFailed(exc.description) from None
        token = issue_token(auth, client, list(client.roles), client_cert(request.scope))
        return token, auth.settings.oauth2_token_lifetime
    token = form.get("token", "").strip()
    if not token:
        raise AuthFailed("give a client id and secret, or an access token")
    await auth.authenticate({"authorization": f"Bearer {token}"}, client_cert(request.scope))
    return token, None


@router.post("/login")
async def login(request: Request) -> Response:
    auth: Authenticator = request.app.state.auth
    form = await read_form(request, LOGIN_FIELDS, csrf=False)
    if not auth.enabled:
        return RedirectResponse(f"{PREFIX}/", status_code=303)
    try:
        token, lifetime = await _token_from(request, auth, form)
    except AuthFailed:
        page = render(request, "login.html", {"builtin": bool(auth.clients),
                                              "error": "Unknown client, wrong secret or invalid token."})
        page.status_code = 401
        return page
    resp = RedirectResponse(f"{PREFIX}/", status_code=303)
    resp.set_cookie(COOKIE, token, max_age=lifetime, path=PREFIX, httponly=True, samesite="strict",
                    secure=request.url.scheme == "https")
    return resp


@router.post("/logout")
async def logout(request: Request) -> Response:
    await read_form(request, csrf=False)
    resp = RedirectResponse(f"{PREFIX}/login", status_code=303)
    resp.delete_cookie(COOKIE, path=PREFIX, httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return resp
