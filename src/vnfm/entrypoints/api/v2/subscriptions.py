"""SOL003 v3.3.1 LCCN subscriptions at /vnflcm/v2/subscriptions (5.4.18, 5.4.19).

Kept apart from v1's (Subscription.kind "vnflcm2"): a v2 subscriber chose v3.3.1 notification
bodies and a verbosity; v1's list does not show it, nor v2's a v1 one. Both hear of every
instance's changes, whichever API made them (adapters/notify shapes the body per subscription).
"""

from __future__ import annotations

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.notifications import LCM_V2_KIND
from vnfm.entrypoints.api.common import ListSource, app_of, json_body, listing
from vnfm.entrypoints.api.routing import Router
from vnfm.entrypoints.api.v2.version import PREFIX, require_version
from vnfm.service import views_v2

router = Router(prefix=PREFIX, dependencies=[Depends(require_version)])
ATTRIBUTES = frozenset({"id", "filter", "callbackUri", "verbosity", "_links"})


@router.post("/subscriptions")
async def create_subscription(request: Request) -> Response:
    sub, created = await app_of(request).subscriptions.create(await json_body(request), kind=LCM_V2_KIND)
    loc = str(request.url_for("show_subscription_v2", sub_id=sub.id))
    if not created:  # the same subscription exists: 303 See Other to it
        return Response(status_code=303, headers={"Location": loc})
    return JSONResponse(views_v2.subscription_info(sub), status_code=201, headers={"Location": loc})


@router.get("/subscriptions")
async def list_subscriptions(request: Request) -> Response:
    app = app_of(request)
    source = ListSource(lambda c, after, n: app.subscriptions.page(LCM_V2_KIND, c, after, n),
                        views_v2.subscription_info, lambda s: s.id)
    return await listing(request, source, [], attributes=ATTRIBUTES, resource="LccnSubscription",
                         page_size=app.settings.page_size)


@router.get("/subscriptions/{sub_id}", name="show_subscription_v2")
def show_subscription(request: Request, sub_id: str) -> dict[str, object]:  # in a worker thread
    return views_v2.subscription_info(app_of(request).subscriptions.get(sub_id, kind=LCM_V2_KIND))


@router.delete("/subscriptions/{sub_id}", status_code=204)
async def delete_subscription(request: Request, sub_id: str) -> Response:
    await off_loop(app_of(request).subscriptions.delete, sub_id, LCM_V2_KIND)
    return Response(status_code=204)
