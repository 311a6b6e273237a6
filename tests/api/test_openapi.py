"""The OpenAPI document (entrypoints/api/openapi.py) walked route by route: every route of the app
is in it, with its request body, its 202 when it starts work, and its errors as ProblemDetails; then
each documented operation is called (unknown ids, minimal bodies) and must answer one of the
statuses it documents, errors in the documented media type. /docs and /redoc load no asset from
elsewhere."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.routing import APIRoute

from vnfm.entrypoints.api.openapi import ACCEPTED, ASSET_TYPES, BODIES, NO_BODY, TACKER_CODES

from .conftest import Api

UNKNOWN = "00000000-0000-0000-0000-000000000000"
WITH_BODY = {"POST", "PUT", "PATCH"}


def _schema_routes(api: Api) -> list[tuple[str, str]]:
    """(method, template) of every route the app puts in its schema (included routers too)."""
    found: list[tuple[str, str]] = []

    def walk(routes: list[Any]) -> None:
        for route in routes:
            inner = getattr(route, "original_router", None)  # FastAPI >= 0.165 keeps included routers whole
            if inner is not None:
                walk(inner.routes)
            elif isinstance(route, APIRoute) and route.include_in_schema:
                found.extend((m, re.sub(r":\w+}", "}", route.path)) for m in sorted(route.methods or ()) if m != "HEAD")

    walk(api.app.router.routes)
    return found


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m.upper(), path, op) for path, ops in doc["paths"].items() for m, op in ops.items()]


async def test_every_route_is_documented_with_body_202_and_problems(api: Api) -> None:
    doc = (await api.c.get("/openapi.json")).json()
    routes = _schema_routes(api)
    assert len(routes) > 40
    documented = {(m, p) for m, p, _ in _operations(doc)}
    assert sorted(set(routes) - documented) == []
    schemas = doc["components"]["schemas"]
    assert "ProblemDetails" in schemas and "HTTPValidationError" not in schemas
    for method, path, op in _operations(doc):
        where = f"{method} {path}"
        responses = op["responses"]
        assert "422" not in responses, where  # FastAPI's, never sent: validation errors are 400 ProblemDetails
        if method in WITH_BODY and (method, path) not in NO_BODY:
            assert "requestBody" in op, f"{where}: no request body documented (openapi.BODIES)"
            (media, content), = op["requestBody"]["content"].items()
            ref = content["schema"].get("$ref")
            if ref:
                assert ref.rsplit("/", 1)[1] in doc["components"]["schemas"], where
        if (method, path) in ACCEPTED:
            assert "202" in responses and "200" not in responses, where
        errors = {int(c): r for c, r in responses.items() if int(c) >= 400}
        assert {401, 403, 500} <= set(errors), where
        for code, resp in errors.items():
            media = "application/json" if path.startswith("/v1.0/") and code in TACKER_CODES \
                else "application/problem+json"
            assert media in resp["content"], (where, code)
    # the tables name only routes that exist (a renamed route is not silently undocumented)
    assert sorted(k for k in (*BODIES, *NO_BODY, *ACCEPTED) if k not in documented) == []
    # the request models' own schemas: what the API validates is what is documented
    scale = doc["components"]["schemas"]["ScaleVnfRequest"]
    assert set(scale["required"]) == {"type", "aspectId"} and scale["additionalProperties"] is False
    # v3.3.1 (/vnflcm/v2) models keep their own schemas: vimConnectionInfo a list on v1, a map on v2
    v1_vims = schemas["InstantiateVnfRequest"]["properties"]["vimConnectionInfo"]["anyOf"][0]
    v2_vims = schemas["InstantiateVnfRequestV2"]["properties"]["vimConnectionInfo"]["anyOf"][0]
    assert v1_vims["type"] == "array" and v2_vims["type"] == "object"
    assert v2_vims["additionalProperties"]["$ref"] == "#/components/schemas/VimConnectionInfoV2"


async def test_each_operation_answers_what_it_documents(api: Api) -> None:
    doc = (await api.c.get("/openapi.json")).json()
    called = 0
    for method, path, op in _operations(doc):
        url = re.sub(r"\{[^}]+\}", UNKNOWN, path)
        body = op.get("requestBody", {}).get("content", {})
        kw: dict[str, Any] = {}
        if "application/zip" in body:
            kw = {"content": b"PK\x05\x06" + b"\x00" * 18, "headers": {"Content-Type": "application/zip"}}
        elif body:
            (media,) = body
            kw = {"content": b"{}", "headers": {"Content-Type": media}}
        r = await api.c.request(method, url, **kw)
        called += 1
        assert str(r.status_code) in op["responses"], (method, path, r.status_code, r.text[:300])
        if r.status_code >= 400:
            media = "application/json" if path.startswith("/v1.0/") and r.status_code in TACKER_CODES \
                else "application/problem+json"
            assert r.headers["content-type"].startswith(media), (method, path, r.headers["content-type"])
    assert called > 40


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_doc_pages_are_self_hosted(api: Api, page: str) -> None:
    r = await api.c.get(page)
    assert r.status_code == 200 and "/openapi.json" in r.text
    assert not re.findall(r"(?:src|href)=\"(?:https?:)?//", r.text), "an asset from elsewhere"
    for asset in re.findall(r"/docs/assets/[\w.-]+", r.text):
        got = await api.c.get(asset)
        assert got.status_code == 200 and len(got.content) > 1000, asset
        assert got.headers["content-type"].startswith(ASSET_TYPES[asset.rsplit("/", 1)[1]])
    r = await api.c.get("/docs/assets/..%2Fcore.py")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
