"""SOL003 v2.6.1 VNF fault management over HTTP: alarms (list, filters, paging, show, acknowledge),
FM subscriptions and their notifications, every body checked against the spec's data model."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.domain.alarms import CAUSE_NODE_NOT_READY, CAUSE_SERVER_DOWN, PerceivedSeverity
from vnfm.service.fm.alarms import Finding

from .conftest import Api, ApiFactory
from .schemas import sol003_fm as S
from .test_packages import assert_problem
from .test_subscriptions import Receiver

# No health watcher: these alarms name instances that do not exist (it would clear them as gone).
QUIET = {"health_interval": 0}
ALARMS = "/vnffm/v1/alarms"
SUBS = "/vnffm/v1/subscriptions"
DOWN = Finding(CAUSE_SERVER_DOWN, ("server w-1 is SHUTOFF",), PerceivedSeverity.CRITICAL,
               {"vimConnectionId": "vim-1", "resourceId": "srv-1", "vimLevelResourceType": "OS::Nova::Server"})
NOT_READY = Finding(CAUSE_NODE_NOT_READY, ("node w-2: Ready is False",))


def _raise(api: Api, instance_id: str, findings: dict[str, Finding | None]) -> tuple[list[Any], list[Any]]:
    return api.core.alarms.record(instance_id, "default", findings)


async def test_alarms_list_filter_page_show_acknowledge(api_factory: ApiFactory) -> None:
    api = await api_factory(page_size=2, **QUIET)
    raised, _ = _raise(api, "inst-a", {"vnfc-1": DOWN, "vnfc-2": NOT_READY, "vnfc-3": None})
    _raise(api, "inst-b", {"vnfc-9": NOT_READY})
    assert len(raised) == 2
    r = await api.c.get(ALARMS)
    assert r.status_code == 200 and len(r.json()) == 2 and 'rel="next"' in r.headers["Link"]
    nxt = r.headers["Link"].split(";")[0].strip("<>").replace("http://vnfm.test", "")
    rest = (await api.c.get(nxt)).json()
    docs = r.json() + rest
    assert len(docs) == 3
    for doc in docs:
        S.Alarm.model_validate(doc)
    r = await api.c.get(ALARMS, params={"filter": "(eq,perceivedSeverity,CRITICAL)"})
    assert [a["vnfcInstanceIds"] for a in r.json()] == [["vnfc-1"]]
    crit = r.json()[0]
    assert crit["rootCauseFaultyResource"]["faultyResource"]["resourceId"] == "srv-1"
    r = await api.c.get(ALARMS, params={"filter": "(eq,managedObjectId,inst-b);(eq,probableCause,"
                                                  f"{CAUSE_NODE_NOT_READY})"})
    assert [a["managedObjectId"] for a in r.json()] == ["inst-b"]
    assert_problem(await api.c.get(ALARMS, params={"filter": "(eq,nope,1)"}), 400, "nope")

    r = await api.c.get(f"{ALARMS}/{crit['id']}")
    assert r.status_code == 200 and r.headers.get("ETag")
    S.Alarm.model_validate(r.json())
    assert_problem(await api.c.get(f"{ALARMS}/no-such"), 404, "no-such")

    url = f"{ALARMS}/{crit['id']}"
    hdr = {"Content-Type": "application/merge-patch+json"}
    assert_problem(await api.c.patch(url, json={"ackState": "UNACKNOWLEDGED"}, headers=hdr), 400, "ackState")
    assert_problem(await api.c.patch(url, json={"ackState": "ACKNOWLEDGED", "x": 1}, headers=hdr), 400, "x")
    r = await api.c.patch(url, json={"ackState": "ACKNOWLEDGED"}, headers=hdr)
    assert r.status_code == 200, r.text
    S.AlarmModifications.model_validate(r.json())
    doc = (await api.c.get(url)).json()
    assert doc["ackState"] == "ACKNOWLEDGED" and doc["alarmChangedTime"]
    assert_problem(await api.c.patch(url, json={"ackState": "ACKNOWLEDGED"}, headers=hdr), 409, "acknowledged")
    r = await api.c.get(ALARMS, params={"filter": "(eq,ackState,UNACKNOWLEDGED)"})
    assert crit["id"] not in [a["id"] for a in r.json()] and len(r.json()) == 2


async def test_alarm_raised_once_cleared_on_recovery(api_factory: ApiFactory) -> None:
    api = await api_factory(**QUIET)
    raised, cleared = _raise(api, "inst-a", {"vnfc-1": DOWN})
    assert len(raised) == 1 and not cleared
    assert _raise(api, "inst-a", {"vnfc-1": NOT_READY}) == ([], [])  # still unhealthy: the same alarm
    raised, cleared = _raise(api, "inst-a", {"vnfc-1": None})
    assert not raised and [a.id for a in cleared] == [api.core.alarms.get(cleared[0].id).id]
    doc = (await api.c.get(f"{ALARMS}/{cleared[0].id}")).json()
    assert doc["perceivedSeverity"] == "CLEARED" and doc["alarmClearedTime"]
    S.Alarm.model_validate(doc)
    assert api.core.alarms.open_for("inst-a") == []


async def test_fm_subscription_refuses_what_it_cannot_act_on(api: Api) -> None:
    for bad, where in (({"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}, "notificationTypes"),
                       ({"perceivedSeverities": ["HUGE"]}, "perceivedSeverities"),
                       ({"operationTypes": ["HEAL"]}, "operationTypes"),
                       ({"probableCauses": "x"}, "probableCauses"),
                       ({"vnfInstanceSubscriptionFilter": {"vnfInstanceId": ["x"]}}, "vnfInstanceId")):
        assert_problem(await api.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/n", "filter": bad}), 400,
                       where)
    r = await api.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/n",
                                     "filter": {"perceivedSeverities": ["CRITICAL"]}})
    assert r.status_code == 201, r.text
    S.FmSubscription.model_validate(r.json())
    assert r.json()["_links"]["self"]["href"].startswith("/vnffm/v1/subscriptions/")
    listed = (await api.c.get(SUBS)).json()
    assert [s["id"] for s in listed] == [r.json()["id"]]
    assert (await api.c.get("/vnflcm/v1/subscriptions")).json() == []  # kinds are apart
    assert (await api.c.delete(f"{SUBS}/{r.json()['id']}")).status_code == 204


@pytest.fixture
def receiver() -> Any:
    with Receiver() as rec:
        yield rec


async def test_alarm_and_cleared_notifications(api_factory: ApiFactory, receiver: Receiver) -> None:
    api = await api_factory(**QUIET)
    every = (await api.c.post(SUBS, json={"callbackUri": receiver.url})).json()
    only_critical = (await api.c.post(SUBS, json={"callbackUri": receiver.url + "/crit", "filter": {
        "perceivedSeverities": ["CRITICAL"], "vnfInstanceSubscriptionFilter": {"vnfInstanceIds": ["inst-a"]}}})).json()
    other_inst = (await api.c.post(SUBS, json={"callbackUri": receiver.url + "/b", "filter": {
        "vnfInstanceSubscriptionFilter": {"vnfInstanceIds": ["inst-b"]}}})).json()
    lcm = (await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": receiver.url + "/lcm"})).json()
    _raise(api, "inst-a", {"vnfc-1": DOWN, "vnfc-2": NOT_READY})
    raised = await receiver.wait_for(lambda n: n.get("notificationType") == "AlarmNotification"
                                     and n["subscriptionId"] == every["id"])
    _raise(api, "inst-a", {"vnfc-1": None, "vnfc-2": NOT_READY})
    cleared = await receiver.wait_for(lambda n: n.get("notificationType") == "AlarmClearedNotification")
    await receiver.wait_for(lambda n: len([m for m in receiver.received
                                           if m.get("notificationType") == "AlarmClearedNotification"]) >= 2)
    for n in receiver.received:
        (S.AlarmNotification if n["notificationType"] == "AlarmNotification" else S.AlarmClearedNotification
         ).model_validate(n)
        assert n["_links"]["subscription"]["href"].endswith(f"/vnffm/v1/subscriptions/{n['subscriptionId']}")
    by_sub: dict[str, list[str]] = {}
    for n in receiver.received:
        by_sub.setdefault(n["subscriptionId"], []).append(n["notificationType"])
    assert sorted(by_sub[every["id"]]) == ["AlarmClearedNotification", "AlarmNotification", "AlarmNotification"]
    assert sorted(by_sub[only_critical["id"]]) == ["AlarmClearedNotification", "AlarmNotification"]
    assert other_inst["id"] not in by_sub and lcm["id"] not in by_sub
    assert len(raised) >= 1 and cleared[0]["alarmId"]
