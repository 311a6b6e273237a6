"""/vnflcm/v2 subscriptions (LccnSubscription v3.3.1) and the notifications a v2 subscriber gets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ..conftest import MASTER_PW, Api, ApiFactory
from ..test_subscriptions import Receiver
from . import schemas as s
from .conftest import V2, V2Api, check, problem, v2_instantiate

SUBS = f"{V2}/subscriptions"
OCC = "VnfLcmOperationOccurrenceNotification"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as rec:
        yield rec


async def test_subscription_crud_kept_apart_from_v1(v2: V2Api) -> None:
    flt = {"operationTypes": ["CHANGE_VNFPKG", "INSTANTIATE"],
           "vnfInstanceSubscriptionFilter": {"vnfdIds": [v2.vnfd_id]}}
    r = await v2.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/cb", "filter": flt})
    assert r.status_code == 201, r.text
    sub = check(s.LccnSubscription, r.json())
    assert sub["verbosity"] == "FULL" and r.headers["Location"].endswith(f"{SUBS}/{sub['id']}")
    assert sub["_links"]["self"]["href"] == f"{SUBS}/{sub['id']}"
    again = await v2.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/cb", "filter": flt}, follow_redirects=False)
    assert again.status_code == 303 and again.headers["Location"] == r.headers["Location"]
    short = await v2.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/cb", "filter": flt, "verbosity": "SHORT"})
    assert short.status_code == 201 and short.json()["verbosity"] == "SHORT"
    listed = (await v2.c.get(SUBS, params={"filter": "(eq,verbosity,SHORT)"})).json()
    assert [x["id"] for x in listed] == [short.json()["id"]]
    assert check(s.LccnSubscription, (await v2.c.get(f"{SUBS}/{sub['id']}")).json()) == sub
    # a v1 subscription and a v2 one are different resources
    assert (await v2.api.c.get("/vnflcm/v1/subscriptions")).json() == []
    problem(await v2.c.get(f"/vnflcm/v2/subscriptions/{sub['id']}x"), 404)
    assert (await v2.api.c.get(f"/vnflcm/v1/subscriptions/{sub['id']}")).status_code == 404
    assert (await v2.c.delete(f"{SUBS}/{sub['id']}")).status_code == 204
    problem(await v2.c.get(f"{SUBS}/{sub['id']}"), 404)

    for bad, words in (({"callbackUri": "http://h/x", "verbosity": "LOUD"}, ("verbosity",)),
                       ({"callbackUri": "http://h/x", "filter": {"operationTypes": ["DANCE"]}}, ("DANCE",)),
                       ({"callbackUri": "http://h/x", "filter": {"vnfdIds": ["a"]}}, ("vnfdIds",)),
                       ({"callbackUri": "http://h/x",
                         "filter": {"vnfInstanceSubscriptionFilter": {"vnfPkgIds": ["a"]}}}, ("vnfPkgIds",)),
                       ({"callbackUri": "ftp://h/x"}, ("callbackUri",))):
        problem(await v2.c.post(SUBS, json=bad), 400, *words)
    assert len((await v2.c.get(SUBS)).json()) == 1


async def test_v2_subscribers_get_v3_notifications(onboarded: tuple[Api, str, str], receiver: Receiver) -> None:
    api, _, vnfd_id = onboarded
    v2 = V2Api(api, vnfd_id)
    try:
        full = (await v2.c.post(SUBS, json={"callbackUri": receiver.url + "/full"})).json()["id"]
        short = (await v2.c.post(SUBS, json={"callbackUri": receiver.url + "/short", "verbosity": "SHORT",
                                             "filter": {"notificationTypes": [OCC]}})).json()["id"]
        v1 = (await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": receiver.url + "/v1"})).json()["id"]
        # made through v1: a v2 subscriber hears of it in v3.3.1 shapes
        inst_id = await api.create_instance(vnfd_id)
        await v2.run(inst_id, "instantiate", v2_instantiate())

        def of(sub: str, ntype: str, state: str | None = None) -> Any:
            return lambda n: (n.get("subscriptionId") == sub and n.get("notificationType") == ntype
                              and (state is None or n.get("operationState") == state))

        created = (await receiver.wait_for(of(full, "VnfIdentifierCreationNotification")))[0]
        check(s.VnfIdentifierNotification, created)
        assert created["_links"]["vnfInstance"]["href"] == f"{V2}/vnf_instances/{inst_id}"
        assert created["_links"]["subscription"]["href"].endswith(f"{SUBS}/{full}")
        done = (await receiver.wait_for(of(full, OCC, "COMPLETED")))[0]
        check(s.VnfLcmOperationOccurrenceNotification, done)
        assert done["verbosity"] == "FULL" and any(a["changeType"] == "ADDED" for a in done["affectedVnfcs"])
        assert done["_links"]["vnfLcmOpOcc"]["href"].startswith(f"{V2}/vnf_lcm_op_occs/")
        start = (await receiver.wait_for(of(short, OCC, "STARTING")))[0]
        check(s.VnfLcmOperationOccurrenceNotification, start)
        brief = (await receiver.wait_for(of(short, OCC, "COMPLETED")))[0]
        check(s.VnfLcmOperationOccurrenceNotification, brief)
        assert brief["verbosity"] == "SHORT" and "affectedVnfcs" not in brief
        # the v1 subscriber got the v2.6.1 shapes of the same changes
        old = (await receiver.wait_for(of(v1, OCC, "COMPLETED")))[0]
        assert "verbosity" not in old and old["_links"]["vnfInstance"]["href"] == f"/vnflcm/v1/vnf_instances/{inst_id}"
        assert MASTER_PW not in json.dumps(receiver.received)

        await v2.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})
        assert (await v2.c.delete(f"{V2}/vnf_instances/{inst_id}")).status_code == 204
        gone = (await receiver.wait_for(of(full, "VnfIdentifierDeletionNotification")))[0]
        check(s.VnfIdentifierNotification, gone)
        assert not [n for n in receiver.received if n["subscriptionId"] == short
                    and n["notificationType"] != OCC]
    finally:
        await v2.c.aclose()


async def test_v2_callbacks_name_the_api_version(api_factory: ApiFactory) -> None:
    """The test GET and every notification to a v2 subscriber carry `Version: 2.0.0` (SOL013
    v3.3.1 table 4.2.2-1; found by the TST 010 run, docs/tst010-v2.md); a v1 subscriber's get none."""
    api = await api_factory(probe_callbacks=True)
    _, vnfd_id = await api.onboard()
    v2 = V2Api(api, vnfd_id)
    with Receiver(versioned={"/v2": "2.0.0"}) as receiver:
        try:
            r = await v2.c.post(SUBS, json={"callbackUri": receiver.url + "/v2"})
            assert r.status_code == 201, r.text
            sub = r.json()["id"]
            assert [h.get("Version") for h in receiver.get_headers] == ["2.0.0"]
            r = await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": receiver.url + "/v1"})
            assert r.status_code == 201, r.text
            assert [h.get("Version") for h in receiver.get_headers] == ["2.0.0", None]
            inst_id = (await v2.create())["id"]
            await receiver.wait_for(lambda n: n.get("subscriptionId") == sub)
            await receiver.wait_for(lambda n: n.get("subscriptionId") == r.json()["id"])
            sent = [(n["subscriptionId"], h.get("Version")) for n, h in zip(receiver.received, receiver.headers,
                                                                            strict=True)]
            assert sorted(sent, key=str) == sorted([(sub, "2.0.0"), (r.json()["id"], None)], key=str)
            assert (await v2.c.delete(f"{V2}/vnf_instances/{inst_id}")).status_code == 204
            for sid in (sub, r.json()["id"]):  # both delivered before the endpoint closes (no retries at teardown)
                await receiver.wait_for(lambda n, sid=sid: n.get("subscriptionId") == sid
                                        and n.get("notificationType") == "VnfIdentifierDeletionNotification")
        finally:
            await v2.c.aclose()
