"""Helpers shared by the routers: JSON bodies, list queries, the application object."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from vnfm.bootstrap import App
from vnfm.domain.errors import BadRequest
from vnfm.entrypoints.api import query
from vnfm.service import views


def app_of(request: Request) -> App:
    return request.app.state.vnfm


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise BadRequest("the request has no body; a JSON object is expected")
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    allowed = {"application/json", "application/merge-patch+json", "text/plain", ""}
    if ctype not in allowed:
        raise BadRequest(f"Content-Type {ctype} is not accepted; send application/json")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"malformed JSON body: {exc}") from None


def listing(request: Request, docs: list[dict[str, Any]], default_excluded: Sequence[str]) -> JSONResponse:
    params = request.query_params
    known = {"filter", "all_fields", "fields", "exclude_fields", "exclude_default", "nextpage_opaque_marker"}
    unknown = [k for k in params if k not in known]
    if unknown:
        raise BadRequest(f"unknown query parameter(s): {', '.join(unknown)}")
    flt = query.parse_filter(params["filter"]) if params.get("filter") else None
    all_fields = "all_fields" in params
    fields = [f for f in params.get("fields", "").split(",") if f] or None
    exclude = [f for f in params.get("exclude_fields", "").split(",") if f] or None
    exclude_default = "exclude_default" in params
    out = []
    for doc in docs:
        if flt is not None and not flt.matches(doc):
            continue
        out.append(query.apply_selectors(doc, all_fields=all_fields, fields=fields, exclude_fields=exclude,
                                         exclude_default=exclude_default, default_excluded=default_excluded))
    return JSONResponse(out)


def add_subscription_routes(router: APIRouter, path: str, kind: str, show_name: str) -> None:
    """POST / GET (list) on `path`, GET / DELETE on `path`/{sub_id}: the SOL003 LCCN and SOL005
    package-management subscriptions (`kind` "vnflcm" / "vnfpkgm") behave the same way."""

    @router.post(path)
    async def create_subscription(request: Request) -> Response:
        sub, created = await app_of(request).subscriptions.create(await json_body(request), kind=kind)
        loc = str(request.url_for(show_name, sub_id=sub.id))
        if not created:  # the same subscription exists: 303 See Other to it
            return Response(status_code=303, headers={"Location": loc})
        return JSONResponse(views.subscription_info(sub), status_code=201, headers={"Location": loc})

    @router.get(path)
    async def list_subscriptions(request: Request) -> JSONResponse:
        docs = [views.subscription_info(s) for s in app_of(request).subscriptions.list(kind=kind)]
        return listing(request, docs, [])

    @router.get(path + "/{sub_id}", name=show_name)
    async def show_subscription(request: Request, sub_id: str) -> dict[str, object]:
        return views.subscription_info(app_of(request).subscriptions.get(sub_id, kind=kind))

    @router.delete(path + "/{sub_id}", status_code=204)
    async def delete_subscription(request: Request, sub_id: str) -> Response:
        app_of(request).subscriptions.delete(sub_id, kind=kind)
        return Response(status_code=204)
