"""Helpers shared by the routers: JSON bodies, list queries, the application object."""

from __future__ import annotations

import base64
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


def listing(request: Request, docs: list[dict[str, Any]], default_excluded: Sequence[str], *,
            selectors: bool = True) -> JSONResponse:
    """A list response (SOL013 5.2, 5.3, 5.4.2): `filter`, attribute selectors (when the resource
    has them), and paging by `page_size` (setting) with a `Link: <...>; rel="next"` header that
    carries the query and an opaque marker (the last item's id)."""
    q = query.parse_list_params(request.query_params, selectors=selectors)
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
        return listing(request, docs, [], selectors=False)

    @router.get(path + "/{sub_id}", name=show_name)
    async def show_subscription(request: Request, sub_id: str) -> dict[str, object]:
        return views.subscription_info(app_of(request).subscriptions.get(sub_id, kind=kind))

    @router.delete(path + "/{sub_id}", status_code=204)
    async def delete_subscription(request: Request, sub_id: str) -> Response:
        app_of(request).subscriptions.delete(sub_id, kind=kind)
        return Response(status_code=204)
