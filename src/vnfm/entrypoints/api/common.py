"""Helpers shared by the routers: list queries, subscriptions, the application object."""

from __future__ import annotations

import base64
from collections.abc import Collection, Sequence
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from vnfm.bootstrap import App
from vnfm.domain.errors import BadRequest
from vnfm.entrypoints.api import query
from vnfm.entrypoints.api.body import json_body
from vnfm.service import views

__all__ = ["add_subscription_routes", "app_of", "json_body", "listing"]


def app_of(request: Request) -> App:
    return request.app.state.vnfm


def listing(request: Request, docs: list[dict[str, Any]], default_excluded: Sequence[str], *,
            attributes: Collection[str], resource: str) -> JSONResponse:
    """A list response (SOL013 5.2, 5.3, 5.4.2): `filter` and attribute selectors over the
    resource's `attributes` (another name is a 400), and paging by `page_size` (setting) with a
    `Link: <...>; rel="next"` header that carries the query and an opaque marker (the last id)."""
    q = query.parse_list_params(request.query_params)
    q.check_attributes(attributes, resource)
    matched = [d for d in docs if q.matches(d)]
    start = 0
    if q.nextpage_opaque_marker:
        last = _unmark(q.nextpage_opaque_marker)
        at = next((i for i, d in enumerate(matched) if d.get("id") == last), None)
        if at is None:
            raise BadRequest("nextpage_opaque_marker is not valid any more (the page it follows changed); "
                             "list again from the start")
        start = at + 1
    size = app_of(request).settings.page_size
    page = matched[start:start + size] if size > 0 else matched[start:]
    resp = JSONResponse([q.select(d, default_excluded) for d in page])
    if size > 0 and start + len(page) < len(matched):
        nxt = request.url.include_query_params(nextpage_opaque_marker=_mark(str(page[-1].get("id", ""))))
        resp.headers["Link"] = f'<{nxt}>; rel="next"'
    return resp


def _mark(item_id: str) -> str:
    return base64.urlsafe_b64encode(item_id.encode()).decode().rstrip("=")


def _unmark(marker: str) -> str:
    try:
        return base64.urlsafe_b64decode(marker + "=" * (-len(marker) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("nextpage_opaque_marker is not a marker this server gave") from None


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
        name = "LccnSubscription" if kind == "vnflcm" else "PkgmSubscription"
        return listing(request, docs, [], attributes=query.SUBSCRIPTION_ATTRIBUTES, resource=name)

    @router.get(path + "/{sub_id}", name=show_name)
    async def show_subscription(request: Request, sub_id: str) -> dict[str, object]:
        return views.subscription_info(app_of(request).subscriptions.get(sub_id, kind=kind))

    @router.delete(path + "/{sub_id}", status_code=204)
    async def delete_subscription(request: Request, sub_id: str) -> Response:
        app_of(request).subscriptions.delete(sub_id, kind=kind)
        return Response(status_code=204)
