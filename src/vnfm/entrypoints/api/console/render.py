"""The console's pages: Jinja2 templates shipped in the wheel (package data), autoescaped, answered
with headers that keep them to this origin (CSP: scripts, styles and forms only from here; no
framing) and out of caches (a page may show what only its viewer may see)."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from vnfm import __version__
from vnfm.domain.access import Principal
from vnfm.entrypoints.api.console.session import csrf_value

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("vnfm.entrypoints.api.console", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.globals["version"] = __version__
    return env


def viewer(request: Request) -> Principal | None:
    found = request.scope.get("state", {}).get("principal")
    return found if isinstance(found, Principal) else None


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    who = viewer(request)
    page = environment().get_template(template).render(
        **context, who=who, can_operate=who is not None and who.has("operator"),
        csrf=csrf_value(request), logged_in=bool(who and who.method != "anonymous"))
    return HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)
