"""SOL005 package-management subscriptions over HTTP, and their notifications at a local receiver."""

from __future__ import annotations

from .conftest import Api
from .test_packages import assert_problem
from .test_subscriptions import Receiver, receiver  # noqa: F401 (fixture)

SUBS = "/vnfpkgm/v1/subscriptions"
PKGS = "/vnfpkgm/v1/vnf_packages"


async def test_pkgm_subscription_crud_and_bad_filters(api: Api) -> None:
    body = {"callbackUri": "http://127.0.0.1:9/pkg",
            "filter": {"notificationTypes": ["VnfPackageChangeNotification"], "operationalState": ["DISABLED"]},
            "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "pkg-pw-789"}}}
    r = await api.c.post(SUBS, json=body)
    assert r.status_code == 201, r.text
    sub = r.json()
    assert r.headers["Location"].endswith(f"{SUBS}/{sub['id']}")
    assert sub["_links"]["self"]["href"] == f"{SUBS}/{sub['id']}"
    assert sub["filter"] == body["filter"] and "pkg-pw-789" not in r.text
    assert (await api.c.post(SUBS, json=body)).status_code == 303
    assert [s["id"] for s in (await api.c.get(SUBS)).json()] == [sub["id"]]
    assert (await api.c.get(f"{SUBS}/{sub['id']}")).json()["id"] == sub["id"]
    # the two APIs keep their subscriptions apart
    assert (await api.c.get("/vnflcm/v1/subscriptions")).json() == []
    assert_problem(await api.c.get(f"/vnflcm/v1/subscriptions/{sub['id']}"), 404)
    assert (await api.c.delete(f"{SUBS}/{sub['id']}")).status_code == 204
    assert_problem(await api.c.get(f"{SUBS}/{sub['id']}"), 404)

    cb = "http://127.0.0.1:9/pkg"
    assert_problem(await api.c.post(SUBS, json={"callbackUri": cb, "filter": {"operationTypes": ["HEAL"]}}),
                   400, "operationTypes", "PkgmNotificationsFilter")
    assert_problem(await api.c.post(SUBS, json={
        "callbackUri": cb, "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}}),
        400, "notificationTypes", "VnfLcmOperationOccurrenceNotification")
    assert_problem(await api.c.post(SUBS, json={"callbackUri": cb, "filter": {"usageState": ["BUSY"]}}),
                   400, "usageState", "BUSY")
    assert_problem(await api.c.post(SUBS, json={"callbackUri": cb, "filter": {"vnfPkgId": "one"}}), 400, "vnfPkgId")
    assert_problem(await api.c.post(SUBS, json={
        "callbackUri": cb, "filter": {"vnfProductsFromProviders": [{"vnfProductName": "x"}]}}), 400, "vnfProvider")
    # and an LCM subscription cannot ask for package notifications
    assert_problem(await api.c.post("/vnflcm/v1/subscriptions", json={
        "callbackUri": cb, "filter": {"notificationTypes": ["VnfPackageOnboardingNotification"]}}), 400)
    assert (await api.c.get(SUBS)).json() == []


async def test_package_notifications_reach_a_local_receiver(api: Api, receiver: Receiver) -> None:  # noqa: F811
    notifier = api.core.notifier
    assert notifier is not None  # the HTTP notifier is always built

    async def subscribe(path: str, flt: dict[str, object] | None = None) -> str:
        body: dict[str, object] = {"callbackUri": receiver.url + path}
        if flt is not None:
            body["filter"] = flt
        r = await api.c.post(SUBS, json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    every = await subscribe("/all")
    disabled = await subscribe("/disabled", {"notificationTypes": ["VnfPackageChangeNotification"],
                                             "operationalState": ["DISABLED"]})
    nobody = await subscribe("/nobody", {"vnfProductsFromProviders": [{"vnfProvider": "Nobody Ltd"}]})
    lcm = await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": receiver.url + "/lcm"})
    assert lcm.status_code == 201

    pkg_id, vnfd_id = await api.onboard()
    provider = (await api.c.get(f"{PKGS}/{pkg_id}")).json()["vnfProvider"]
    same_provider = await subscribe("/provider", {"vnfProductsFromProviders": [{"vnfProvider": provider}],
                                                  "notificationTypes": ["VnfPackageChangeNotification"]})
    assert await notifier.drain_async(10)
    onboarded = await receiver.wait_for(lambda n: n["notificationType"] == "VnfPackageOnboardingNotification")
    assert len(onboarded) == 1
    n = onboarded[0]
    assert (n["subscriptionId"], n["vnfPkgId"], n["vnfdId"]) == (every, pkg_id, vnfd_id)
    assert n["id"] and n["timeStamp"]
    assert n["_links"]["vnfPackage"]["href"] == f"{PKGS}/{pkg_id}"
    assert n["_links"]["subscription"]["href"].endswith(f"{SUBS}/{every}")

    r = await api.c.patch(f"{PKGS}/{pkg_id}", json={"operationalState": "DISABLED"},
                          headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert await notifier.drain_async(10)
    changed = await receiver.wait_for(lambda n: n.get("changeType") == "OP_STATE_CHANGE")
    assert sorted(n["subscriptionId"] for n in changed) == sorted([every, disabled, same_provider])
    assert {n["operationalState"] for n in changed} == {"DISABLED"}

    assert (await api.c.delete(f"{PKGS}/{pkg_id}")).status_code == 204
    # the package is gone, yet a filter on its provider still selects its deletion
    deleted = await receiver.wait_for(
        lambda n: n.get("changeType") == "PKG_DELETE" and n["subscriptionId"] == same_provider)
    assert deleted[0]["vnfPkgId"] == pkg_id and "operationalState" not in deleted[0]
    assert await notifier.drain_async(10)
    by_sub: dict[str, list[str]] = {}
    for n in receiver.received:
        by_sub.setdefault(n.get("subscriptionId", ""), []).append(n.get("changeType") or n["notificationType"])
    assert by_sub[every] == ["VnfPackageOnboardingNotification", "OP_STATE_CHANGE", "PKG_DELETE"]
    assert by_sub[same_provider] == ["OP_STATE_CHANGE", "PKG_DELETE"]
    assert by_sub[disabled] == ["OP_STATE_CHANGE", "PKG_DELETE"]  # it was DISABLED when deleted
    assert nobody not in by_sub
    # an LCM subscription hears nothing of packages
    assert lcm.json()["id"] not in by_sub
