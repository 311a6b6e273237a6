"""Helpers shared by the routers: list queries, subscriptions, the application object."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from vnfm.bootstrap import App
from vnfm.entrypoints.api import query
from vnfm.entrypoints.api.body import json_body
from vnfm.entrypoints.api.listing import ListSource
from vnfm.entrypoints.api.listing import listing as listing
from vnfm.service import views

__all__ = ["ListSource", "add_subscription_routes", "app_of", "json_body", "listing"]


def app_of(request: Request) -> App:
    return request.app.state.vnfm


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
    async def list_subscriptions(request: Request) -> Response:
        app = app_of(request)
        source = ListSource(lambda c, after, n: app.subscriptions.page(kind, c, after, n),
                            views.subscription_info, lambda s: s.id)
        name = {"vnflcm": "LccnSubscription", "vnffm": "FmSubscription"}.get(kind, "PkgmSubscription")
        return await listing(request, source, [], attributes=query.SUBSCRIPTION_ATTRIBUTES, resource=name,
                             page_size=app.settings.page_size)

    @router.get(path + "/{sub_id}", name=show_name)
    def show_subscription(request: Request, sub_id: str) -> dict[str, object]:  # in a worker thread
        return views.subscription_info(app_of(request).subscriptions.get(sub_id, kind=kind))

    @router.delete(path + "/{sub_id}", status_code=204)
    async def delete_subscription(request: Request, sub_id: str) -> Response:
        app_of(request).subscriptions.delete(sub_id, kind=kind)
        return Response(status_code=204)
