"""`Location` URLs of created resources, as `request.url_for` builds them, without its cost.

Starlette's `url_for` walks every route of the application (and FastAPI's included routers) each
time: ~3 % of a zero-latency instantiate's server CPU (issue 24 item 4). The path template of a
route name is looked up once per router (with marker values for its parameters) and the values
are put in; the absolute URL is made from the request's base URL as `url_for` does."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import URLPath
from starlette.requests import Request

# id(router) -> (router, {(name, parameter names): path template}); routers are not hashable.
_templates: dict[int, tuple[Any, dict[tuple[str, tuple[str, ...]], str]]] = {}
_KEPT_ROUTERS = 32  # one per application in a process (tests build many)


def _marker(key: str) -> str:
    return f"\x00{key}\x00"


def location(request: Request, name: str, **params: str) -> str:
    """str(request.url_for(name, **params)) for a route whose parameters are plain strings."""
    provider = request.scope.get("router") or request.scope.get("app")
    if provider is None or any(not v or "/" in v or "\x00" in v for v in params.values()):
        return str(request.url_for(name, **params))  # what url_for refuses, it refuses
    entry = _templates.get(id(provider))
    if entry is None or entry[0] is not provider:
        if len(_templates) >= _KEPT_ROUTERS:
            _templates.clear()
        entry = _templates[id(provider)] = (provider, {})
    per_router = entry[1]
    key = (name, tuple(sorted(params)))
    template = per_router.get(key)
    if template is None:
        template = per_router[key] = str(provider.url_path_for(name, **{k: _marker(k) for k in params}))
    path = template
    for k, v in params.items():
        path = path.replace(_marker(k), v)
    return str(URLPath(path=path, protocol="http").make_absolute_url(base_url=request.base_url))
