"""SOL003 v2.6.1 VNF fault management: /vnffm/v1 (alarms: list, show, acknowledge; FM subscriptions)."""

from __future__ import annotations

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.alarms import alarm_info
from vnfm.entrypoints.api.common import ListSource, add_subscription_routes, app_of, json_body, listing
from vnfm.entrypoints.api.routing import Router

router = Router(prefix="/vnffm")

# SOL003 7.4.2.3.2: the attributes of an Alarm (filter, fields, exclude_fields name them)
ALARM_ATTRIBUTES = frozenset({
    "id", "managedObjectId", "vnfcInstanceIds", "rootCauseFaultyResource", "alarmRaisedTime", "alarmChangedTime",
    "alarmClearedTime", "ackState", "perceivedSeverity", "eventTime", "eventType", "faultType", "probableCause",
    "isRootCause", "correlatedAlarmIds", "faultDetails", "_links",
})


@router.get("/api_versions")
@router.get("/v1/api_versions")
async def api_versions() -> dict[str, object]:
    return {"uriPrefix": "/vnffm/v1", "apiVersions": [{"version": "2.6.1", "isDeprecated": False}]}


@router.get("/v1/alarms")
async def list_alarms(request: Request) -> Response:
    app = app_of(request)
    source = ListSource(app.alarms.page, alarm_info, lambda a: a.id)
    return await listing(request, source, [], attributes=ALARM_ATTRIBUTES, resource="Alarm",
                         page_size=app.settings.page_size)


@router.get("/v1/alarms/{alarm_id}", name="show_alarm")
def show_alarm(request: Request, alarm_id: str) -> dict[str, object]:  # in a worker thread
    return alarm_info(app_of(request).alarms.get(alarm_id))


@router.patch("/v1/alarms/{alarm_id}")
async def acknowledge_alarm(request: Request, alarm_id: str) -> Response:
    """SOL003 7.4.3.3.4: AlarmModifications in, AlarmModifications out (200); 409 when acknowledged."""
    changed = await off_loop(app_of(request).alarms.acknowledge, alarm_id, await json_body(request))
    return JSONResponse(changed)


# ------------------------------------------------------------------ subscriptions (7.4.4, 7.4.5)
add_subscription_routes(router, "/v1/subscriptions", "vnffm", "show_fm_subscription")
