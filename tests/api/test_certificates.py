"""Certificate lifecycle of the clusters vnfm builds, on the simulated cloud (issue 27 item 1):
expiry read on every master and stored, shown (the extension route, `vnf show`'s source, the
metric); the watch warns first (an opt-in notification and a log line), then renews
automatically, one master at a time, the API probed up throughout; scale and heal work after the
original expiry date; the twin refuses admin.conf use with an expired certificate, as the API
server would, and an on-demand renewal brings the cluster back."""

from __future__ import annotations

import asyncio
import copy
import logging
import ssl
import time
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api, ApiFactory, seed_body
from tests.api.schemas import sol003_fm as S
from tests.api.test_ha_vip_port import HA_BODY, _onboard
from tests.api.test_subscriptions import Receiver
from vnfm.domain.certificates import AUTO_RENEW_PROPERTY
from vnfm.entrypoints.cli.render import render_certificates

DAY = 86400.0
CERTS = "/vnfm/v1/vnf_instances/{}/certificates"


class Clock:
    """The twin's and the watch's clock, moved by the test."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def _clocks(api: Api) -> tuple[Clock, Any]:
    clock = Clock()
    twin = api.core.extras["twin"]
    twin.clock = clock
    api.core.extras["cert_watch"].clock = clock
    return clock, twin


async def _until(pred: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = pred()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.02)


async def _until_async(pred: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = await pred()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.05)


async def _open_alarms(api: Api, inst_id: str, n: int, cause: str = "") -> list[dict[str, Any]] | None:
    """The instance's open alarms (of `cause`) once there are `n`."""
    r = await api.c.get("/vnffm/v1/alarms", params={"filter": f"(eq,managedObjectId,{inst_id})"})
    got = [a for a in r.json() if a["perceivedSeverity"] != "CLEARED" and cause in a["probableCause"]]
    return got if len(got) >= n else None


async def _kinds(rx: Receiver, kind: str, n: int) -> list[dict[str, Any]] | None:
    got = [x for x in list(rx.received) if x.get("notificationType") == kind]
    return got if len(got) >= n else None


async def _no_open_alarms(api: Api, inst_id: str) -> bool:
    r = await api.c.get("/vnffm/v1/alarms", params={"filter": f"(eq,managedObjectId,{inst_id})"})
    return all(a["perceivedSeverity"] == "CLEARED" for a in r.json())


def _kube_client(api: Api, inst_id: str) -> httpx.AsyncClient:
    vim = next(v for v in api.core.vims.list() if (v.extra or {}).get("vnf_instance_id") == inst_id)
    ctx = ssl.create_default_context(cadata=vim.access_info["ssl_ca_cert"])
    return httpx.AsyncClient(base_url=vim.access_info["authUrl"], verify=ctx, timeout=5.0,
                             headers={"Authorization": f"Bearer {vim.access_info['bearer_token']}"})


async def test_warned_then_renewed_without_outage_and_manageable_after_expiry(
        api_factory: ApiFactory, caplog: pytest.LogCaptureFixture) -> None:
    # automatic renewal is off globally, on for this instance (vnfConfigurableProperties)
    api = await api_factory(sim_cert_validity=40 * DAY, cert_check_interval=0.2, cert_warn_days=45,
                            cert_renew_days=30, cert_auto_renew=False)
    clock, twin = _clocks(api)
    vnfd_id = await _onboard(api)
    with Receiver() as rx, caplog.at_level(logging.WARNING, "vnfm.certificates"):
        r = await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": rx.url, "filter": {
            "notificationTypes": ["VnfmCertificateExpiryNotification", "VnfLcmOperationOccurrenceNotification"]}})
        assert r.status_code == 201, r.text
        assert (await api.c.post("/vnffm/v1/subscriptions", json={"callbackUri": rx.url})).status_code == 201
        inst_id = await api.create_instance(vnfd_id)
        await api.run(inst_id, "instantiate", {**copy.deepcopy(HA_BODY),
                                               "vnfConfigurableProperties": {AUTO_RENEW_PROPERTY: True}})
        view = (await api.c.get(CERTS.format(inst_id))).json()
        assert view["known"] and len(view["nodes"]) == 3 and 39 < view["earliest"]["daysLeft"] <= 40
        shown = render_certificates(view)  # what `vnfm vnf show` prints under the VNF
        assert "first to expire" in shown and all(n["node"] in shown for n in view["nodes"])
        original = min(t for n in api.core.instances.get(inst_id).driver_state["kubeadm"]["certificates"]["nodes"]
                       .values() for c, t in n.items() if c != "ca")

        # 40 days left, warning at 45: the warning, once; no renewal yet (at 30)
        warn = (await rx.wait_for(lambda n: n["notificationType"] == "VnfmCertificateExpiryNotification"))[0]
        assert warn["vnfInstanceId"] == inst_id and 39 < warn["daysLeft"] <= 40 and warn["autoRenewal"] is True
        assert any("expire soon" in m for m in caplog.messages)
        # and a VNF FM alarm per control plane: WARNING (40 days left), the certificate named
        alarms = await _until_async(lambda: _open_alarms(api, inst_id, 3), "three certificate alarms")
        assert {(a["probableCause"], a["perceivedSeverity"]) for a in alarms} == {
            ("KUBERNETES_CERTIFICATE_EXPIRING", "WARNING")}
        assert all(any(f"certificate {a['faultType']} expires on" in d for d in a["faultDetails"]) and
                   any("certificate apiserver expires on" in d for d in a["faultDetails"]) for a in alarms)
        raised = await _until_async(lambda: _kinds(rx, "AlarmNotification", 3), "three AlarmNotifications")
        for doc in alarms:  # the SOL003 v2.6.1 data model (strict)
            S.Alarm.model_validate(doc)
        for n in raised:
            S.AlarmNotification.model_validate(n)
        metrics = (await api.c.get("/metrics")).text
        assert f'vnfm_cluster_certificate_expiry_timestamp_seconds{{cert="apiserver",vnf_instance_id="{inst_id}"}}' \
            in metrics
        await asyncio.sleep(0.5)  # two more check periods: still one warning, no HEAL started
        assert [n["notificationType"] for n in rx.received].count("VnfmCertificateExpiryNotification") == 1
        assert not [n for n in rx.received if n.get("operation") == "HEAL"]

        # 11 days later: within 30 days, the watch starts the renewal; the API is probed throughout
        twin.cert_validity_s, twin.restart_time = 365 * DAY, 0.15
        statuses: list[int] = []
        async with _kube_client(api, inst_id) as kube:
            clock.offset = 11 * DAY
            start = await rx.wait_for(lambda n: n.get("operation") == "HEAL")
            op_loc = f"/vnflcm/v1/vnf_lcm_op_occs/{start[0]['vnfLcmOpOccId']}"
            while (await api.c.get(op_loc)).json()["operationState"] not in ("COMPLETED", "FAILED_TEMP"):
                statuses.append((await kube.get("/readyz")).status_code)
                await asyncio.sleep(0.01)
        occ = (await api.c.get(op_loc)).json()
        assert occ["operationState"] == "COMPLETED", occ.get("error")
        assert statuses and set(statuses) == {200}, statuses  # never down: one master at a time
        assert twin.observed["max_renewals_in_flight"] == 1
        kinds = [n["notificationType"] for n in rx.received]
        assert kinds.index("VnfmCertificateExpiryNotification") < kinds.index("VnfLcmOperationOccurrenceNotification",
                                                                              kinds.index("VnfmCertificateExpiryNotification"))
        view = (await api.c.get(CERTS.format(inst_id))).json()
        assert view["earliest"]["daysLeft"] > 300 and "renewedAt" in view
        await _until_async(lambda: _no_open_alarms(api, inst_id), "the certificate alarms cleared after the renewal")
        cleared = await _until_async(lambda: _kinds(rx, "AlarmClearedNotification", 3), "three cleared")
        assert {n["alarmId"] for n in cleared} == {a["id"] for a in alarms}
        for n in cleared:
            S.AlarmClearedNotification.model_validate(n)

        # past the original expiry: scale out and a worker heal still work
        clock.offset = original - time.time() + DAY
        await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})
        worker = next(v["id"] for v in (await api.instance(inst_id))["instantiatedVnfInfo"]["vnfcResourceInfo"]
                      if v["vduId"] == "workerNode")
        await api.run(inst_id, "heal", {"vnfcInstanceId": [worker]})
        assert (await api.c.delete(f"/vnflcm/v1/subscriptions/{r.json()['id']}")).status_code == 204


async def test_expired_cluster_refuses_admin_use_until_renewed_on_demand(api_factory: ApiFactory) -> None:
    # automatic renewal is on globally, off for this instance: it expires, alarmed, until renewed by hand
    api = await api_factory(sim_cert_validity=DAY, cert_check_interval=0.2, cert_auto_renew=True)
    clock, twin = _clocks(api)
    _, vnfd_id = await api.onboard()
    inst_id = await api.instantiated(vnfd_id, seed_body(vnfConfigurableProperties={AUTO_RENEW_PROPERTY: False}))
    (soon,) = await _until_async(lambda: _open_alarms(api, inst_id, 1), "the expiry alarm")
    assert (soon["probableCause"], soon["perceivedSeverity"]) == ("KUBERNETES_CERTIFICATE_EXPIRING", "MAJOR")
    clock.offset = 2 * DAY  # the admin.conf and API server certificates have expired
    occ = await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"}, expect="FAILED_TEMP")
    assert "x509: certificate has expired" in occ["error"]["detail"]
    (gone,) = await _until_async(lambda: _open_alarms(api, inst_id, 1, "KUBERNETES_CERTIFICATE_EXPIRED"),
                                 "the expired alarm")
    assert gone["perceivedSeverity"] == "CRITICAL" and gone["id"] != soon["id"]
    assert not [o for o in (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() if o["operation"] == "HEAL"]
    assert (await api.c.post(f"/vnflcm/v1/vnf_lcm_op_occs/{occ['id']}/fail")).status_code == 200
    # a body is refused, not ignored; then the renewal is a HEAL occurrence like any other
    assert (await api.c.post(f"/vnfm/v1/vnf_instances/{inst_id}/renew_certificates", json={"x": 1})).status_code == 400
    twin.cert_validity_s = 365 * DAY  # renewed certificates last a year: nothing left to alarm about
    r = await api.c.post(f"/vnfm/v1/vnf_instances/{inst_id}/renew_certificates")
    assert r.status_code == 202, r.text
    done = await api.wait_op(r.headers["Location"])
    assert done["operation"] == "HEAL" and done["operationState"] == "COMPLETED", done.get("error")
    assert not done.get("resourceChanges", {}).get("affectedVnfcs")  # no VNFC replaced
    await _until_async(lambda: _no_open_alarms(api, inst_id), "the expired alarm cleared after the renewal")
    await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})


async def test_unreadable_certificates_are_said_not_fatal(api: Api) -> None:
    """A master whose certificates cannot be read (here: the twin lost them) does not fail the
    operation that built the cluster: its progress and the view say why."""
    _, vnfd_id = await api.onboard()
    inst_id = await api.instantiated(vnfd_id)

    def lose(extras: dict[str, Any]) -> None:
        for h in extras["k8s"]["hosts"].values():
            h.pop("certs", None)

    api.core.sim.update_extras(inst_id, lose)
    occ = await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    events = " | ".join(e["message"] for e in api.core.instances.op_get(occ["id"]).events)
    assert "warning: the certificates of control plane masternode-0 could not be read" in events
    view = (await api.c.get(CERTS.format(inst_id))).json()
    assert view["unreadable"] == [{"node": "masternode-0", "reason": "this host is not a control plane: it has no "
                                                                       "certificates"}]
    assert "not read on masternode-0" in render_certificates(view)


async def test_renewal_request_is_checked_before_anything_starts(api: Api) -> None:
    _, vnfd_id = await api.onboard()
    inst_id = await api.instantiated(vnfd_id)
    vnfc = next(v["id"] for v in (await api.instance(inst_id))["instantiatedVnfInfo"]["vnfcResourceInfo"]
                if v["vduId"] == "workerNode")
    heal = f"/vnflcm/v1/vnf_instances/{inst_id}/heal"
    r = await api.c.post(heal, json={"vnfcInstanceId": [vnfc], "additionalParams": {"renew_certificates": True}})
    assert r.status_code == 422 and "leave vnfcInstanceId out" in r.text
    r = await api.c.post(heal, json={"additionalParams": {"renew_certificates": "yes"}})
    assert r.status_code == 400 and "renew_certificates" in r.text
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/scale",
                         json={"type": "SCALE_OUT", "aspectId": "worker_instance",
                               "additionalParams": {"renew_certificates": True}})
    assert r.status_code == 400 and "only HEAL" in r.text


async def test_the_instance_switch_of_automatic_renewal_is_checked_and_changeable(api: Api) -> None:
    """isCertificateAutoRenewalEnabled: a boolean (or null: the global setting again), at instantiate
    or by PATCH of the instance; anything else is refused with its name before anything changes."""
    _, vnfd_id = await api.onboard()
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate",
                         json=seed_body(vnfConfigurableProperties={AUTO_RENEW_PROPERTY: "yes"}))
    assert r.status_code == 400 and AUTO_RENEW_PROPERTY in r.text
    await api.run(inst_id, "instantiate", seed_body(vnfConfigurableProperties={AUTO_RENEW_PROPERTY: False}))
    url = f"/vnflcm/v1/vnf_instances/{inst_id}"
    r = await api.c.patch(url, json={"vnfConfigurableProperties": {AUTO_RENEW_PROPERTY: 1}})
    assert r.status_code == 400 and AUTO_RENEW_PROPERTY in r.text
    assert (await api.instance(inst_id))["vnfConfigurableProperties"] == {AUTO_RENEW_PROPERTY: False}
    for value, shown in ((True, {AUTO_RENEW_PROPERTY: True}), (None, None)):  # null: back to the global setting
        r = await api.c.patch(url, json={"vnfConfigurableProperties": {AUTO_RENEW_PROPERTY: value}})
        assert r.status_code == 202, r.text
        await api.wait_op(r.headers["Location"])
        assert (await api.instance(inst_id)).get("vnfConfigurableProperties") == shown
