"""HttpNotifier and probe_callback against a real local HTTP endpoint."""

from __future__ import annotations

import base64
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from vnfm.adapters.notify.auth import TokenCache, auth_headers, probe_callback, safe_url
from vnfm.adapters.notify.http import HttpNotifier
from vnfm.domain.errors import BadRequest
from vnfm.domain.model import Subscription
from vnfm.service.ports import OutboxEntry

from .receiver import Receiver

PASSWORD = "s3cr3t-PASSWORD"
CLIENT_SECRET = "client-SECRET-pw"

BASIC = {"authType": ["BASIC"], "paramsBasic": {"userName": "alice", "password": PASSWORD}}


def oauth(receiver: Receiver) -> dict[str, Any]:
    return {
        "authType": ["OAUTH2_CLIENT_CREDENTIALS"],
        "paramsOauth2ClientCredentials": {
            "clientId": "vnfm-client",
            "clientPassword": CLIENT_SECRET,
            "tokenEndpoint": f"{receiver.base}/token",
        },
    }


def occ_notification(state: str = "STARTING", inst: str = "inst-1", op: str = "INSTANTIATE") -> dict[str, Any]:
    return {
        "notificationType": "VnfLcmOperationOccurrenceNotification",
        "notificationStatus": "START",
        "operationState": state,
        "vnfInstanceId": inst,
        "operation": op,
        "isAutomaticInvocation": False,
        "vnfLcmOpOccId": "occ-1",
        "_links": {"vnfInstance": {"href": f"/vnflcm/v1/vnf_instances/{inst}"}},
    }


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class FakeOutbox:
    """OutboxSource over a list: claim hands each entry out once; remove records."""

    def __init__(self) -> None:
        self.entries: list[OutboxEntry] = []
        self.taken: set[str] = set()
        self.removed: list[str] = []
        self.fail_claims = 0
        self.claims = 0
        self.lock = threading.Lock()

    def put(self, notification: dict[str, Any], info: dict[str, Any] | None = None) -> str:
        entry = OutboxEntry(f"row-{len(self.entries)}", notification, info, "2026-11-24T10:00:00Z")
        with self.lock:
            self.entries.append(entry)
        return entry.id

    def claim(self, limit: int) -> list[OutboxEntry]:
        with self.lock:
            self.claims += 1
            if self.fail_claims:
                self.fail_claims -= 1
                raise RuntimeError("database is down")
            out = [e for e in self.entries if e.id not in self.taken][:limit]
            self.taken.update(e.id for e in out)
            return out

    def remove(self, entry_id: str) -> None:
        with self.lock:
            self.removed.append(entry_id)


_boxes: dict[HttpNotifier, FakeOutbox] = {}


def send(n: HttpNotifier, notification: dict[str, Any], info: dict[str, Any] | None = None) -> str:
    """What a service does: store the notification in the outbox, then wake the notifier."""
    entry_id = _boxes[n].put(notification, info)
    n.wake()
    return entry_id


@pytest.fixture
def notifiers() -> Iterator[list[HttpNotifier]]:
    made: list[HttpNotifier] = []
    yield made
    for n in made:
        n.close(timeout=5)


def make(notifiers: list[HttpNotifier], subs: list[Subscription], box: FakeOutbox | None = None,
         **kw: Any) -> HttpNotifier:
    kw.setdefault("base_delay", 0.01)
    kw.setdefault("timeout", 5.0)
    box = box or FakeOutbox()
    n = HttpNotifier(lambda: list(subs), box, **kw)
    _boxes[n] = box
    notifiers.append(n)
    return n


def test_retries_until_delivered_once_with_basic_auth(
    receiver: Receiver, notifiers: list[HttpNotifier], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.fail_first = 2
    sub = Subscription(callback_uri=f"{receiver.base}/notify", authentication=BASIC)
    sleep = RecordingSleep()
    n = make(notifiers, [sub], attempts=5, base_delay=0.5, max_delay=0.75, sleep=sleep, api_base="http://vnfm:9890")
    send(n, occ_notification())
    assert n.drain(10)
    posts = receiver.posts()
    assert len(posts) == 3  # two failures, then the delivery
    assert n.delivered == 1 and n.failed == 0
    assert sleep.delays == [0.5, 0.75]  # exponential, capped
    expected = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    for p in posts:
        assert p.headers["Content-Type"] == "application/json"
        assert p.headers["Authorization"] == expected
    body = posts[-1].json()
    assert body["subscriptionId"] == sub.id
    assert body["notificationType"] == "VnfLcmOperationOccurrenceNotification"
    assert body["id"] and body["timeStamp"].endswith("Z")
    assert body["_links"]["subscription"]["href"] == f"http://vnfm:9890/vnflcm/v1/subscriptions/{sub.id}"
    assert body["_links"]["vnfInstance"]["href"] == "/vnflcm/v1/vnf_instances/inst-1"
    assert len({p.json()["id"] for p in posts}) == 1  # a retry re-sends the same notification
    # failures were logged, without any secret
    assert "attempt 1/5" in caplog.text and "HTTP 500" in caplog.text
    assert PASSWORD not in caplog.text
    assert expected.split()[1] not in caplog.text


def test_gives_up_after_attempts(
    receiver: Receiver, notifiers: list[HttpNotifier], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.fail_first = 100
    receiver.fail_status = 503
    sub = Subscription(callback_uri=f"{receiver.base}/notify", authentication=BASIC)
    n = make(notifiers, [sub], attempts=3)
    send(n, occ_notification())
    assert n.drain(10)
    assert len(receiver.posts()) == 3
    assert n.delivered == 0 and n.failed == 1
    assert "giving up" in caplog.text and "HTTP 503" in caplog.text
    assert PASSWORD not in caplog.text


def test_unreachable_subscriber_is_retried_and_logged_without_secrets(
    notifiers: list[HttpNotifier], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    port = _free_port()
    sub = Subscription(callback_uri=f"http://bob:{PASSWORD}@127.0.0.1:{port}/cb?token={PASSWORD}", authentication=BASIC)
    n = make(notifiers, [sub], attempts=2)
    send(n, occ_notification())
    assert n.drain(10)
    assert n.failed == 1
    assert "ConnectError" in caplog.text
    assert f"http://127.0.0.1:{port}/cb" in caplog.text
    assert PASSWORD not in caplog.text


def test_only_matching_subscriptions_receive(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    wanted = Subscription(
        callback_uri=f"{receiver.base}/notify",
        filter={"operationTypes": ["INSTANTIATE"], "operationStates": ["COMPLETED"]},
    )
    other_op = Subscription(callback_uri=f"{receiver.base}/notify", filter={"operationTypes": ["HEAL"]})
    other_inst = Subscription(
        callback_uri=f"{receiver.base}/notify",
        filter={"vnfInstanceSubscriptionFilter": {"vnfInstanceIds": ["inst-9"]}},
    )
    pkgm = Subscription(callback_uri=f"{receiver.base}/notify", kind="vnfpkgm")
    n = make(notifiers, [wanted, other_op, other_inst, pkgm])
    send(n, occ_notification("STARTING"))
    send(n, occ_notification("COMPLETED"))
    assert n.drain(10)
    bodies = [p.json() for p in receiver.posts()]
    assert [(b["subscriptionId"], b["operationState"]) for b in bodies] == [(wanted.id, "COMPLETED")]


def test_instance_info_lookup_for_vnfd_filters(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    by_vnfd = Subscription(
        callback_uri=f"{receiver.base}/notify",
        filter={"vnfInstanceSubscriptionFilter": {"vnfdIds": ["vnfd-A"]}},
    )
    lookups: list[str] = []

    def info(instance_id: str) -> dict[str, Any] | None:
        lookups.append(instance_id)
        return {"vnfdId": "vnfd-A" if instance_id == "inst-a" else "vnfd-B"}

    n = make(notifiers, [by_vnfd], instance_info=info)
    send(n, occ_notification(inst="inst-a"))
    send(n, occ_notification(inst="inst-b"))
    # explicit info wins over the lookup (the instance may already be deleted)
    send(n, {"notificationType": "VnfIdentifierDeletionNotification", "vnfInstanceId": "gone"},
         {"vnfdId": "vnfd-A"})
    assert n.drain(10)
    assert [p.json()["vnfInstanceId"] for p in receiver.posts()] == ["inst-a", "gone"]
    assert lookups == ["inst-a", "inst-b"]


def test_pkgm_notifications_go_to_pkgm_subscriptions(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    lcm = Subscription(callback_uri=f"{receiver.base}/notify")
    pkg = Subscription(callback_uri=f"{receiver.base}/notify", kind="vnfpkgm", filter={"vnfdId": ["d1"]})
    n = make(notifiers, [lcm, pkg])
    send(n, {"notificationType": "VnfPackageOnboardingNotification", "vnfPkgId": "p1", "vnfdId": "d1"})
    assert n.drain(10)
    (post,) = receiver.posts()
    assert post.json()["subscriptionId"] == pkg.id
    assert post.json()["_links"]["subscription"]["href"].endswith(f"/vnfpkgm/v1/subscriptions/{pkg.id}")


def test_order_is_kept_per_subscription_despite_retries(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    receiver.fail_first = 1
    sub = Subscription(callback_uri=f"{receiver.base}/notify")
    n = make(notifiers, [sub])
    states = ["STARTING", "PROCESSING", "COMPLETED"]
    for s in states:
        send(n, occ_notification(s))
    assert n.drain(10)
    delivered = [p.json()["operationState"] for p in receiver.posts()]
    assert delivered == ["STARTING", *states]  # first one failed once, then everything in order


def test_wake_returns_before_delivery(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    receiver.gate = threading.Event()
    sub = Subscription(callback_uri=f"{receiver.base}/notify")
    n = make(notifiers, [sub])
    started = time.monotonic()
    send(n, occ_notification())
    assert time.monotonic() - started < 0.5
    assert n.pending == 1
    assert n.drain(0.05) is False  # still blocked in the receiver
    receiver.gate.set()
    assert n.drain(10)
    assert n.pending == 0 and n.delivered == 1


def test_oauth2_token_is_fetched_once_and_cached(
    receiver: Receiver, notifiers: list[HttpNotifier], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sub = Subscription(callback_uri=f"{receiver.base}/notify", authentication=oauth(receiver))
    n = make(notifiers, [sub])
    send(n, occ_notification("STARTING"))
    send(n, occ_notification("COMPLETED"))
    assert n.drain(10)
    token_calls = receiver.posts("/token")
    assert len(token_calls) == 1
    client_basic = base64.b64encode(f"vnfm-client:{CLIENT_SECRET}".encode()).decode()
    assert token_calls[0].headers["Authorization"] == f"Basic {client_basic}"
    assert token_calls[0].body == b"grant_type=client_credentials"
    posts = receiver.posts()
    assert len(posts) == 2
    assert all(p.headers["Authorization"] == f"Bearer {receiver.token}" for p in posts)
    for secret in (CLIENT_SECRET, receiver.token, client_basic):
        assert secret not in caplog.text


def test_oauth2_401_refreshes_the_token(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    receiver.fail_first = 1
    receiver.fail_status = 401
    sub = Subscription(callback_uri=f"{receiver.base}/notify", authentication=oauth(receiver))
    n = make(notifiers, [sub])
    send(n, occ_notification())
    assert n.drain(10)
    assert len(receiver.posts("/token")) == 2
    assert n.delivered == 1


async def test_token_cache_expiry(receiver: Receiver) -> None:
    now = [1000.0]
    cache = TokenCache(clock=lambda: now[0], margin=10.0)
    receiver.token_expires_in = 100
    params = oauth(receiver)["paramsOauth2ClientCredentials"]
    async with httpx.AsyncClient() as client:
        assert await cache.get(client, params) == receiver.token
        now[0] += 85  # still valid (100 s minus the 10 s margin)
        assert await cache.get(client, params) == receiver.token
        assert cache.fetches == 1
        now[0] += 10
        receiver.token = "tok-SECRET-2"
        assert await cache.get(client, params) == "tok-SECRET-2"
        assert cache.fetches == 2


async def test_auth_headers_variants() -> None:
    cache = TokenCache()
    async with httpx.AsyncClient() as client:
        assert await auth_headers(client, None, cache) == {}
        assert await auth_headers(client, {"authType": ["TLS_CERT"]}, cache) == {}
        h = await auth_headers(client, {"authType": "BASIC", "paramsBasic": {"userName": "u", "password": "p"}}, cache)
        assert h == {"Authorization": "Basic " + base64.b64encode(b"u:p").decode()}
        with pytest.raises(Exception, match="missing its parameters"):
            await auth_headers(client, {"authType": ["BASIC"]}, cache)


def test_a_closed_notifier_leaves_new_rows_in_the_outbox(receiver: Receiver) -> None:
    sub = Subscription(callback_uri=f"{receiver.base}/notify")
    box = FakeOutbox()
    n = HttpNotifier(lambda: [sub], box, base_delay=0.01)
    box.put(occ_notification())
    n.wake()
    n.close(timeout=10)
    assert len(receiver.posts()) == 1 and len(box.removed) == 1
    late = box.put(occ_notification())
    n.wake()  # closed: not read, stays for another process
    assert n.pending == 0 and len(receiver.posts()) == 1 and late not in box.removed


def test_safe_url() -> None:
    assert safe_url("https://u:pw@host:8443/cb?token=x") == "https://host:8443/cb?***"
    assert safe_url("http://[::1]:80/a") == "http://[::1]:80/a"


# ----------------------------------------------------------------------------- probe
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_probe_accepts_204_and_sends_auth(receiver: Receiver) -> None:
    await probe_callback(f"{receiver.base}/notify", BASIC)
    (get,) = [r for r in receiver.requests if r.method == "GET"]
    assert get.headers["Authorization"].startswith("Basic ")


async def test_probe_rejects_non_204_without_saying_what_came(receiver: Receiver) -> None:
    receiver.get_status = 200
    with pytest.raises(BadRequest, match="did not answer the test GET with 204") as answered:
        await probe_callback(f"{receiver.base}/notify", None)
    assert "200" not in answered.value.detail
    # nobody listening gets the same words: the caller cannot scan ports through the VNFM
    with pytest.raises(BadRequest) as closed:
        await probe_callback(f"http://127.0.0.1:{_free_port()}/notify", None, timeout=2)
    assert closed.value.detail.split(" did not", 1)[1] == answered.value.detail.split(" did not", 1)[1]


async def test_probe_unreachable_has_clear_message_without_secrets() -> None:
    uri = f"http://alice:{PASSWORD}@127.0.0.1:{_free_port()}/notify"
    with pytest.raises(BadRequest) as info:
        await probe_callback(uri, BASIC, timeout=2)
    assert "unreachable" in info.value.detail
    assert PASSWORD not in info.value.detail and "alice" not in info.value.detail


async def test_probe_oauth_failure_is_bad_request(receiver: Receiver) -> None:
    auth = oauth(receiver)
    auth["paramsOauth2ClientCredentials"]["tokenEndpoint"] = f"http://127.0.0.1:{_free_port()}/token"
    with pytest.raises(BadRequest, match="cannot authenticate") as info:
        await probe_callback(f"{receiver.base}/notify", auth, timeout=2)
    assert CLIENT_SECRET not in info.value.detail


@pytest.mark.parametrize("uri", ["ftp://host/x", "/relative/path", "http://", "not a uri"])
async def test_probe_rejects_invalid_uris(uri: str) -> None:
    with pytest.raises(BadRequest, match="absolute http"):
        await probe_callback(uri, None)


async def test_probe_skip_sends_nothing(receiver: Receiver) -> None:
    receiver.get_status = 500
    await probe_callback(f"{receiver.base}/notify", None, skip=True)
    assert receiver.requests == []


# --------------------------------------------------------------------------- outbox
def test_wake_delivers_the_outbox_and_removes_each_row_once_done(
    receiver: Receiver, notifiers: list[HttpNotifier]
) -> None:
    box = FakeOutbox()
    subs = [Subscription(callback_uri=f"{receiver.base}/notify", filter={"operationStates": ["STARTING"]})]
    n = make(notifiers, subs, box=box, poll_interval=60)
    first = box.put(occ_notification("STARTING"))
    nobody = box.put(occ_notification("COMPLETED"))  # selects no subscription: done at once
    n.wake()
    assert n.drain(10)
    assert [p.json()["operationState"] for p in receiver.posts()] == ["STARTING"]
    assert receiver.posts()[0].json()["timeStamp"] == "2026-11-24T10:00:00Z"  # when it was stored
    assert sorted(box.removed) == sorted([first, nobody])
    # rows are only read when woken (or every poll_interval): a new one waits for the next wake
    late = box.put(occ_notification("STARTING", inst="inst-2"))
    assert n.drain(10) and len(receiver.posts()) == 1
    n.wake()
    assert n.drain(10)
    assert len(receiver.posts()) == 2 and box.removed[-1] == late


def test_a_given_up_row_is_removed_and_a_failed_read_is_retried(
    receiver: Receiver, notifiers: list[HttpNotifier], caplog: pytest.LogCaptureFixture
) -> None:
    receiver.fail_first = 100
    box = FakeOutbox()
    n = make(notifiers, [Subscription(callback_uri=f"{receiver.base}/notify")], box=box, attempts=2,
             poll_interval=60)
    gone = box.put(occ_notification())
    box.fail_claims = 1
    n.wake()
    assert n.drain(10)  # the failed read does not leave drain() waiting
    assert "reading the notification outbox failed" in caplog.text and box.removed == []
    n.wake()
    assert n.drain(10)
    assert len(receiver.posts()) == 2 and n.failed == 1
    assert box.removed == [gone]


def test_a_row_still_in_delivery_at_close_is_kept(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    receiver.gate = threading.Event()  # the subscriber hangs
    box = FakeOutbox()
    n = make(notifiers, [Subscription(callback_uri=f"{receiver.base}/notify")], box=box, poll_interval=60)
    box.put(occ_notification())
    n.wake()
    deadline = time.monotonic() + 5
    while not receiver.requests:  # the POST has arrived and is held
        assert time.monotonic() < deadline
        time.sleep(0.01)
    n.close(timeout=0.5)
    notifiers.remove(n)
    receiver.gate.set()
    assert box.removed == []  # delivered again later (at least once), not lost


def test_a_wake_while_the_outbox_is_quiet_reads_nothing(receiver: Receiver, notifiers: list[HttpNotifier]) -> None:
    quiet = [True]
    box = FakeOutbox()
    sub = Subscription(callback_uri=f"{receiver.base}/notify")
    n = make(notifiers, [sub], box, quiet=lambda: quiet[0], poll_interval=3600)
    n.wake()  # nothing stored since the outbox was found drained: no claim, no thread
    assert n.pending == 0 and n.drain(5) and box.claims == 0
    quiet[0] = False
    send(n, occ_notification())
    assert n.drain(10)
    assert box.claims >= 1 and n.delivered == 1 and len(receiver.posts()) == 1
