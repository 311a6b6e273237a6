"""Authentication and authorisation of every request, in two places:

- `AuthGate`, an ASGI middleware around everything: a request for an exact PUBLIC path passes
  untouched; any other must authenticate (401 otherwise) and a parameter-free path of the role
  table (rules.py) is checked right there; the caller (a domain Principal) goes into the request
  state (`principal`) before any route runs or any body is read.
  Console paths may authenticate with the console's session cookie (console/session.py); an
  unauthenticated console page is sent to the login page.
- `authorize`, a dependency of every API route: the role its route template needs (403 without it,
  and for a route the table has no rule for).

Every change (any method but GET / HEAD) and every refusal leaves one audit line (logger
`vnfm.audit`): who (subject, tenant, how authenticated), what (method, route), which resource (the
path's parameters), the status."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse
from starlette.datastructures import Headers

from vnfm.domain.access import CALLER, Principal
from vnfm.domain.errors import Forbidden
from vnfm.entrypoints.api.auth.authenticate import Authenticator, AuthFailed
from vnfm.entrypoints.api.auth.mtls import client_cert
from vnfm.entrypoints.api.auth.rules import PUBLIC, rule_for
from vnfm.entrypoints.api.console.session import PREFIX, credential_headers, is_console
from vnfm.entrypoints.api.headers import ASGIApp, Message, Receive, Scope, Send
from vnfm.entrypoints.api.problem import problem_response

log = logging.getLogger("vnfm.auth")
audit = logging.getLogger("vnfm.audit")


def principal_of(request: Request) -> Principal:
    found = request.scope.get("state", {}).get("principal")
    if not isinstance(found, Principal):  # the gate sets it for every non-public request
        raise Forbidden("the request carries no authenticated caller")
    return found


def _check(principal: Principal, method: str, template: str) -> None:
    needed = rule_for(method, template)
    if needed is None:
        raise Forbidden(f"no access rule names {method} {template}")
    if needed != PUBLIC and not principal.has(needed):
        raise Forbidden(f"{method} {template} needs the {needed} role")


async def authorize(request: Request) -> None:
    """The dependency every API route runs first: the caller holds the role of the route's rule."""
    route = request.scope.get("route")
    template = getattr(route, "path", None) or request.url.path
    rule = rule_for(request.method, template)
    if rule == PUBLIC:
        return
    _check(principal_of(request), request.method, template)


class AuthGate:
    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.auth = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        exact = rule_for(method, path) if "{" not in path else None
        if exact == PUBLIC:
            await self.app(scope, receive, send)
            return
        try:
            principal = await self.auth.authenticate(credential_headers(scope, Headers(scope=scope)),
                                                     client_cert(scope))
        except AuthFailed as exc:
            log.info("401 on %s %s: %s", method, path, exc)
            _audit(None, method, path, {}, 401)
            if method == "GET" and is_console(path) and not path.endswith("/progress"):
                await RedirectResponse(f"{PREFIX}/login", status_code=303)(scope, receive, send)
                return
            resp = problem_response(401, "Unauthorized", "a valid access token is required")
            resp.headers["WWW-Authenticate"] = 'Bearer realm="vnfm", error="invalid_token"'
            await resp(scope, receive, send)
            return
        if exact is not None:
            try:
                _check(principal, method, path)
            except Forbidden as exc:
                _audit(principal, method, path, {}, 403)
                await problem_response(403, exc.title, exc.detail)(scope, receive, send)
                return
        scope.setdefault("state", {})["principal"] = principal
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        caller = CALLER.set(principal)  # repositories confine a non-admin to its tenant
        try:
            await self.app(scope, receive, send_status)
        finally:
            CALLER.reset(caller)
            if method not in ("GET", "HEAD") or status in (401, 403):
                template = getattr(scope.get("route"), "path", None) or path
                _audit(principal, method, template, dict(scope.get("path_params") or {}), status)


def _audit(who: Principal | None, method: str, template: str, params: dict[str, Any], status: int) -> None:
    subject = f"{who.subject}@{who.tenant} ({who.method})" if who else "unauthenticated"
    resource = ",".join(f"{k}={str(v)[:80]}" for k, v in params.items()) or "-"
    audit.info("%s %s %s [%s] -> %d", subject, method, template, resource, status,
               extra={"subject": who.subject if who else None, "tenant": who.tenant if who else None,
                      "auth": who.method if who else None, "method": method, "route": template,
                      "resource": params, "status": status})
