"""The API's routers: FastAPI's APIRouter that refuses, with one string test, a path that none of
its routes can match (issue 24 item 4).

FastAPI tries the routes of every included router in turn, one regular expression each, until one
matches: a request under /vnflcm paid for every route of /vnfpkgm first, /healthz for ~100
(GET /vnflcm/v1/api_versions cost 1.5 times GET /vnfpkgm/v1/api_versions, /healthz 5 times). A
route's path matches only paths that begin with its text before the first parameter, so a router
whose routes all have such a text answers "no match" (neither full nor partial, so no 405 either)
for a path that begins with none of them. Valid when the router is included without a prefix
(`include_router(router)`, as app.py does): the routes' own paths are then the paths matched.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette._utils import get_route_path
from starlette.routing import Match


class Router(APIRouter):
    _literal: tuple[tuple[str, ...] | None, int] = (None, -1)  # (prefixes, for how many routes)

    def literal_prefixes(self) -> tuple[str, ...] | None:
        """The texts before the first parameter of the routes' paths (None: a route without a
        plain path, e.g. a mount or an included router: no shortcut)."""
        prefixes, count = self._literal
        if count == len(self.routes):
            return prefixes
        found: set[str] | None = set()
        for route in self.routes:
            path = getattr(route, "path", None)
            if not isinstance(path, str) or not hasattr(route, "path_regex") or found is None:
                found = None
                continue
            found.add(path.split("{", 1)[0])
        prefixes = tuple(sorted(found)) if found is not None else None
        self._literal = (prefixes, len(self.routes))
        return prefixes

    def matches(self, scope: Any) -> tuple[Match, Any]:
        prefixes = self.literal_prefixes()
        if prefixes is not None and not get_route_path(scope).startswith(prefixes):
            return Match.NONE, {}
        return super().matches(scope)
