"""`locations.location` builds the same URL as Starlette's `url_for` (its cached template)."""

from __future__ import annotations

import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.testclient import TestClient

from vnfm.entrypoints.api.locations import location


def _app() -> FastAPI:
    app = FastAPI()
    router = APIRouter(prefix="/vnflcm/v1")

    @router.get("/vnf_lcm_op_occs/{op_id}")
    async def show_op_occ(op_id: str) -> str:
        return op_id

    @router.get("/vnf_instances/{inst_id}/x/{op_id}")
    async def two(inst_id: str, op_id: str) -> str:
        return inst_id

    @router.get("/loc")
    async def loc(request: Request, name: str, a: str, b: str = "") -> dict[str, str]:
        params = {"op_id": a} if not b else {"inst_id": a, "op_id": b}
        return {"ours": location(request, name, **params), "theirs": str(request.url_for(name, **params))}

    app.include_router(router)
    return app


@pytest.mark.parametrize("base", ["http://testserver", "https://vnfm.example:8443"])
@pytest.mark.parametrize(("name", "a", "b"), [
    ("show_op_occ", "0b1e5c2e-5b0a-4c55-9a3a-3b1c8f0c0b0a", ""), ("show_op_occ", "x y%20é", ""),
    ("two", "i-1", "o-2"), ("two", "o-2", "i-1"),
])
def test_location_is_url_for(base: str, name: str, a: str, b: str) -> None:
    with TestClient(_app(), base_url=base) as c:
        for _ in range(2):  # the second call uses the cached template
            got = c.get("/vnflcm/v1/loc", params={"name": name, "a": a, "b": b}).json()
            assert got["ours"] == got["theirs"]


def test_refused_values_refused_as_url_for() -> None:
    with TestClient(_app(), raise_server_exceptions=True) as c, pytest.raises(AssertionError):
        c.get("/vnflcm/v1/loc", params={"name": "show_op_occ", "a": "a/b"})
