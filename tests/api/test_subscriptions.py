"""SOL003 LCCN subscriptions over HTTP, and notification delivery to a local receiver."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from .conftest import MASTER_PW, Api, ApiFactory, LocalHttpServer, seed_body
from .test_packages import assert_problem

SUBS = "/vnflcm/v1/subscriptions"


async def test_subscription_crud(api: Api) -> None:
    body = {
        "callbackUri": "http://127.0.0.1:9/notify",
        "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
                   "operationTypes": ["INSTANTIATE"], "operationStates": ["COMPLETED", "FAILED_TEMP"]},
        "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "sub-pw-123"}},
    }
    r = await api.c.post(SUBS, json=body)
    assert r.status_code == 201, r.text
    sub = r.json()
    assert r.headers["Location"].endswith(f"{SUBS}/{sub['id']}")
    assert sub["callbackUri"] == body["callbackUri"]
    assert sub["filter"]["operationTypes"] == ["INSTANTIATE"]
    assert "authentication" not in sub and "sub-pw-123" not in r.text

    # The same subscription again: 303 See Other to the existing one.
    r = await api.c.post(SUBS, json=body)
    assert r.status_code == 303
    assert r.headers["Location"].endswith(f"{SUBS}/{sub['id']}")

    other = (await api.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/other"})).json()

    r = await api.c.get(SUBS)
    assert {s["id"] for s in r.json()} == {sub["id"], other["id"]}
    assert "sub-pw-123" not in r.text
    r = await api.c.get(SUBS, params={"filter": "(eq,callbackUri,http://127.0.0.1:9/other)"})
    assert [s["id"] for s in r.json()] == [other["id"]]

    r = await api.c.get(f"{SUBS}/{sub['id']}")
    assert r.status_code == 200 and r.json()["id"] == sub["id"]

    assert (await api.c.delete(f"{SUBS}/{sub['id']}")).status_code == 204
    assert_problem(await api.c.get(f"{SUBS}/{sub['id']}"), 404)
    assert [s["id"] for s in (await api.c.get(SUBS)).json()] == [other["id"]]


async def test_subscription_bad_requests(api: Api) -> None:
    assert_problem(await api.c.post(SUBS, json={}), 400, "callbackUri")
    assert_problem(await api.c.post(SUBS, json={"callbackUri": "ftp://x/y"}), 400, "callbackUri")
    assert_problem(await api.c.post(SUBS, json={"callbackUri": "http://h/x", "bogus": 1}), 400, "bogus")
    r = await api.c.post(SUBS, json={"callbackUri": "http://h/x", "filter": {"operationStates": ["DONE"]}})
    assert_problem(r, 400, "DONE")
    r = await api.c.post(SUBS, json={"callbackUri": "http://h/x", "authentication": {"authType": ["BASIC"]}})
    assert_problem(r, 400, "paramsBasic")


# --------------------------------------------------------------------------- delivery
class Receiver(LocalHttpServer):
    """A notification endpoint on 127.0.0.1: answers 204 to GET (the probe) and records POSTs.

    `versioned`: paths (under `url`) that are SOL003 v3 endpoints, as strict as one (Tacker's v2
    API, ETSI's OpenAPI of the notification endpoint): a request to them without the `Version`
    header named there gets 400 and is not recorded."""

    def __init__(self, versioned: dict[str, str] | None = None) -> None:
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.gets = 0
        self.get_headers: list[dict[str, str]] = []
        self.versioned = versioned or {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _refused(self) -> bool:
                want = outer.versioned.get(self.path.removeprefix("/notifications"))
                if want is None or self.headers.get("Version") == want:
                    return False
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True

            def do_GET(self) -> None:  # noqa: N802
                if self._refused():
                    return
                outer.gets += 1
                outer.get_headers.append(dict(self.headers))
                self.send_response(204)
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                if self._refused():
                    return
                n = int(self.headers.get("Content-Length") or 0)
                outer.received.append(json.loads(self.rfile.read(n)))
                outer.headers.append(dict(self.headers))
                self.send_response(204)
                self.end_headers()

        super().__init__(Handler)

    @property
    def url(self) -> str:
        return f"{self.base}/notifications"

    async def wait_for(self, pred: Any, timeout: float = 15.0) -> list[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = [n for n in list(self.received) if pred(n)]
            if found:
                return found
            if loop.time() > deadline:
                got = [n.get("notificationType") for n in self.received]
                raise TimeoutError(f"no matching notification; got {got}")
            await asyncio.sleep(0.01)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as rec:
        yield rec


async def test_notifications_reach_a_local_receiver(onboarded: tuple[Api, str, str], receiver: Receiver) -> None:
    api, _, vnfd_id = onboarded
    assert api.core.notifier is not None  # the HTTP notifier is always built
    r = await api.c.post(SUBS, json={
        "callbackUri": receiver.url,
        "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "cb-pw-456"}},
    })
    assert r.status_code == 201, r.text
    sub_id = r.json()["id"]

    inst_id = await api.create_instance(vnfd_id)
    await api.run(inst_id, "instantiate", seed_body())

    created = await receiver.wait_for(lambda n: n.get("notificationType") == "VnfIdentifierCreationNotification")
    assert created[0]["vnfInstanceId"] == inst_id
    assert created[0]["subscriptionId"] == sub_id
    done = await receiver.wait_for(
        lambda n: n.get("notificationType") == "VnfLcmOperationOccurrenceNotification"
        and n.get("operationState") == "COMPLETED"
    )
    assert done[0]["operation"] == "INSTANTIATE" and done[0]["vnfInstanceId"] == inst_id
    assert done[0]["notificationStatus"] == "RESULT"
    assert any(v["changeType"] == "ADDED" for v in done[0]["affectedVnfcs"])
    starting = await receiver.wait_for(lambda n: n.get("operationState") == "STARTING")
    assert starting[0]["notificationStatus"] == "START"
    assert MASTER_PW not in json.dumps(receiver.received)
    # BASIC authentication as the subscription asked.
    assert all(h.get("Authorization", "").startswith("Basic ") for h in receiver.headers)

    # Filtered subscriptions: a second one only for TERMINATE results.
    r = await api.c.post(SUBS, json={"callbackUri": receiver.url + "/terminate-only",
                                     "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
                                                "operationTypes": ["TERMINATE"], "operationStates": ["COMPLETED"]}})
    assert r.status_code == 201, r.text
    only_id = r.json()["id"]
    await api.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})
    term = await receiver.wait_for(lambda n: n.get("subscriptionId") == only_id)
    assert [(n["operation"], n["operationState"]) for n in term] == [("TERMINATE", "COMPLETED")]
    assert (await api.c.delete(f"/vnflcm/v1/vnf_instances/{inst_id}")).status_code == 204
    await receiver.wait_for(lambda n: n.get("notificationType") == "VnfIdentifierDeletionNotification")
    assert [n.get("operation") for n in receiver.received if n.get("subscriptionId") == only_id] == ["TERMINATE"]


async def test_probe_tests_the_callback(api_factory: Any, receiver: Receiver) -> None:
    api = await api_factory(probe_callbacks=True)
    r = await api.c.post(SUBS, json={"callbackUri": receiver.url})
    assert r.status_code == 201, r.text
    assert receiver.gets == 1
    # An endpoint that does not answer: 400 naming the URI, nothing stored.
    r = await api.c.post(SUBS, json={"callbackUri": "http://127.0.0.1:9/nothing-here"})
    assert_problem(r, 400, "127.0.0.1:9")
    assert len((await api.c.get(SUBS)).json()) == 1


async def test_callbacks_and_package_uris_on_internal_addresses_are_refused(api_factory: ApiFactory,
                                                                           receiver: Receiver) -> None:
    """Without egress_allow_networks, loopback, link-local and metadata targets are refused and
    the error does not tell what (or whether something) answers there."""
    api = await api_factory(probe_callbacks=True, egress_allow_networks=[])
    for uri in (receiver.url, "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/x",
                "http://localhost:1/x"):
        r = await api.c.post(SUBS, json={"callbackUri": uri})
        assert_problem(r, 400, "does not connect to")
    assert receiver.gets == 0  # nothing reached the receiver
    oauth = {"authType": ["OAUTH2_CLIENT_CREDENTIALS"], "paramsOauth2ClientCredentials": {
        "clientId": "c", "clientPassword": "p-s3cret", "tokenEndpoint": "http://169.254.169.254/token"}}
    r = await api.c.post(SUBS, json={"callbackUri": "http://192.0.2.1:9/cb", "authentication": oauth})
    assert r.status_code == 400 and "p-s3cret" not in r.text
    pkg = (await api.c.post("/vnfpkgm/v1/vnf_packages", json={})).json()["id"]
    r = await api.c.post(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content/upload_from_uri",
                         json={"addressInformation": "http://169.254.169.254/latest/pkg.zip"})
    assert_problem(r, 422, "does not connect to")


async def test_tls_cert_authentication_needs_the_notification_client_certificate(
        api_factory: ApiFactory, tmp_path: Any) -> None:
    from .test_mtls import make_pki

    tls_only = {"authType": ["TLS_CERT"]}
    api = await api_factory()
    r = await api.c.post(SUBS, json={"callbackUri": "https://nfvo.example/cb", "authentication": tls_only})
    assert_problem(r, 400, "authentication.authType TLS_CERT", "notify_client_cert")
    pki = make_pki(tmp_path)
    api = await api_factory(notify_client_cert=pki.good[0], notify_client_key=pki.good[1])
    r = await api.c.post(SUBS, json={"callbackUri": "http://nfvo.example/cb", "authentication": tls_only})
    assert_problem(r, 400, "https callbackUri")
    r = await api.c.post(SUBS, json={"callbackUri": "https://nfvo.example/cb", "authentication": tls_only})
    assert r.status_code == 201, r.text
