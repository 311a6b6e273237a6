"""The routers' shortcut (entrypoints/api/routing.py): a router refuses a path none of its routes
can match with one string test. Every route of the application answers exactly as FastAPI's own
matching answers it: the same status for every method, at the route's path, below it, with a
trailing slash, and for paths no route has."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter

from vnfm.entrypoints.api.app import create_app
from vnfm.entrypoints.api.routing import Router

from .conftest import settings_for

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _route_paths(routes: list[Any]) -> Iterator[str]:
    for route in routes:
        inner = getattr(route, "original_router", None)  # an included router (FastAPI >= 0.1xx)
        if inner is not None:
            yield from _route_paths(inner.routes)
        elif isinstance(getattr(route, "path", None), str):
            yield route.path


def _samples(app: Any) -> list[str]:
    paths = sorted(set(_route_paths(app.router.routes)))
    concrete = [re.sub(r"\{[^}]+\}", "x1", p) for p in paths]
    extra = [p + "/" for p in concrete] + [p + "/more" for p in concrete]
    return concrete + extra + ["/", "/nope", "/vnflcm", "/vnflcm/v9/vnf_instances", "//vnflcm/v1/api_versions"]


async def _statuses(tmp_path: Path, paths: list[str] | None) -> tuple[list[str], dict[tuple[str, str], int]]:
    app = create_app(settings_for(tmp_path, run_engine=False))
    found: dict[tuple[str, str], int] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnfm") as c:
            paths = paths or _samples(app)
            for path in paths:
                for method in METHODS:
                    r = await c.request(method, path, headers={"Version": "2.0.0"})
                    found[(method, path)] = r.status_code
    return paths, found


async def test_every_route_matches_as_without_the_shortcut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused: list[str] = []
    shortcut = Router.matches

    def counting(self: Router, scope: Any) -> Any:
        result = shortcut(self, scope)
        if self.literal_prefixes() is not None and not scope["path"].startswith(self.literal_prefixes()):
            refused.append(scope["path"])
        return result

    monkeypatch.setattr(Router, "matches", counting)
    paths, with_shortcut = await _statuses(tmp_path / "a", None)
    assert len(paths) > 250 and len(refused) > 1000  # the shortcut was taken
    monkeypatch.setattr(Router, "matches", APIRouter.matches)
    _, without = await _statuses(tmp_path / "b", paths)
    differences = {k: (v, without[k]) for k, v in with_shortcut.items() if without[k] != v}
    assert differences == {}
    assert {s for s in with_shortcut.values()} >= {200, 404, 405}


def test_a_router_with_a_route_of_no_plain_path_takes_no_shortcut() -> None:
    router = Router(prefix="/a")

    @router.get("/b/{x}")
    def b(x: str) -> str:
        return x

    assert router.literal_prefixes() == ("/a/b/",)
    router.routes.append(object())  # type: ignore[arg-type]  # e.g. a mount: no plain path
    assert router.literal_prefixes() is None
