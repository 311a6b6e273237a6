"""HTTP delivery of notifications to subscribers (SOL003 5.4.20 / SOL005 9.4.10, SOL013 8.3.4 auth).

Notifications come from the database outbox: services store them with the change they report and
call `wake()` after the commit; rows left by a process that died are taken over after
`reclaim_after`. A daemon thread running its own asyncio loop finds the subscriptions whose
filter selects the notification and POSTs it to each callbackUri, in order per subscription,
retrying with capped exponential backoff; an outbox row is deleted once every subscriber got it
or was given up on (delivery is at least once).
Authentication follows the subscription's SubscriptionAuthentication: BASIC, or
OAUTH2_CLIENT_CREDENTIALS with a token fetched from the tokenEndpoint and cached until it expires.
Nothing secret (passwords, tokens, Authorization headers) is ever logged or put in an exception
message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from vnfm.adapters.notify.auth import AuthError, TokenCache, auth_headers, probe_callback, safe_url, secrets_of
from vnfm.adapters.notify.filters import (
    matches_fm_subscription,
    matches_pkgm_subscription,
    matches_subscription,
    needs_instance_info,
    notification_kind,
)
from vnfm.adapters.remote.egress import EgressPolicy, egress_client
from vnfm.domain.alarms import FM
from vnfm.domain.model import Subscription, new_id
from vnfm.domain.notifications import LCM, LCM_V2, LCM_V2_KIND, PKGM, callback_headers
from vnfm.domain.secrets import scrub
from vnfm.service.ports import OutboxEntry

log = logging.getLogger("vnfm.notify")

InfoLookup = Callable[[str], Mapping[str, Any] | None]
# A stored (SOL003 v2.6.1) notification as a /vnflcm/v2 subscriber gets it (service.views_v2.notification)
Reshape = Callable[[Mapping[str, Any], Subscription], dict[str, Any]]


# ============================================================================= notifier
class OutboxSource(Protocol):
    """This process's view of the outbox: take what it should deliver, forget what is done."""

    def claim(self, limit: int) -> list[OutboxEntry]: ...

    def remove(self, entry_id: str) -> None: ...


@dataclass
class _Item:
    entry: OutboxEntry
    remaining: int = 0  # deliveries not ended yet; the outbox row is deleted at 0


@dataclass
class _Delivery:
    sub: Subscription
    body: dict[str, Any]
    item: _Item


_STOP = object()


class HttpNotifier:
    """Notifier port over HTTP. Thread-safe; `wake` never blocks on the network.

    subscriptions: returns the current subscriptions (called once per notification, off the
        caller's thread).
    outbox / poll_interval: where `wake()` finds stored notifications, and how often it looks
        without being woken (for rows other processes left behind).
    instance_info / package_info: look up by vnfInstanceId / vnfPkgId the data that instance or
        product filters need (only called when a filter needs it). An outbox entry's `info`
        overrides the lookup (e.g. for a deletion notification, when the instance is gone).
    attempts / base_delay / max_delay: retries; the n-th retry waits min(max_delay, base_delay*2**(n-1)).
    api_base: scheme://host:port prefixed to the notification's _links.subscription href.
    reshape_v2: how a subscription made through /vnflcm/v2 gets a notification (v3.3.1 shapes);
        without it such subscriptions get none (never a v2.6.1 body).
    quiet: True when the outbox holds nothing new for this process (nothing stored since a claim
        found it drained): `wake()` then does nothing (no claim, no thread hop). The poll claims
        regardless.
    """

    def __init__(
        self,
        subscriptions: Callable[[], list[Subscription]],
        outbox: OutboxSource,
        *,
        instance_info: InfoLookup | None = None,
        package_info: InfoLookup | None = None,
        attempts: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        timeout: float = 10.0,
        verify: bool | str | ssl.SSLContext = True,
        api_base: str = "",
        tokens: TokenCache | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        poll_interval: float = 5.0,
        on_delivery: Callable[[bool], None] | None = None,
        egress: EgressPolicy | None = None,
        reshape_v2: Reshape | None = None,
        quiet: Callable[[], bool] | None = None,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self._subscriptions = subscriptions
        self._instance_info = instance_info
        self._package_info = package_info
        self._reshape_v2 = reshape_v2
        self.attempts = attempts
        self.on_delivery = on_delivery  # told each delivery's outcome (True: delivered) for metrics
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self._verify = verify
        self._egress = egress  # where callbacks and token endpoints may be (adapters/remote/egress)
        self.api_base = api_base.rstrip("/")
        self.tokens = tokens or TokenCache()
        self._sleep = sleep
        self._outbox = outbox
        self._quiet = quiet
        self.poll_interval = poll_interval
        self._wake_tokens = 0  # wake() calls the feeder has not served yet (each holds one pending)
        self._wake_event: asyncio.Event | None = None
        self._cond = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._closed = False
        self.delivered = 0
        self.failed = 0

    # ------------------------------------------------------------------ public API
    def wake(self) -> None:
        """Deliver what the outbox holds for this process (called after a commit that stored some)."""
        if self._quiet is not None and self._quiet():
            return
        with self._cond:
            if self._closed:
                return
            self._pending += 1
            self._wake_tokens += 1
            self._ensure_thread()
            loop, event = self._loop, self._wake_event
        if loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):  # loop already gone
                loop.call_soon_threadsafe(event.set)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything woken for so far is delivered or given up. False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    async def drain_async(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self.drain, timeout)

    @property
    def pending(self) -> int:
        with self._cond:
            return self._pending

    def close(self, timeout: float | None = 10.0) -> None:
        """Stop accepting notifications, wait up to `timeout` for the queue, stop the thread."""
        with self._cond:
            self._closed = True
        self.drain(timeout)
        with self._cond:
            loop, queue, thread = self._loop, self._queue, self._thread
        if loop is not None and queue is not None:
            with contextlib.suppress(RuntimeError):  # loop already gone
                loop.call_soon_threadsafe(queue.put_nowait, _STOP)
        if thread is not None:
            thread.join(timeout)

    async def probe(self, uri: str, auth: Mapping[str, Any] | None = None,
                    headers: Mapping[str, str] | None = None) -> None:
        """probe_callback with this notifier's TLS and timeout settings."""
        await probe_callback(uri, auth, headers, timeout=self.timeout, verify=self._verify, tokens=self.tokens,
                             policy=self._egress)

    # ------------------------------------------------------------------ background loop
    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._loop = None
            self._thread = threading.Thread(target=self._run, name="vnfm-notifier", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception:  # pragma: no cover - defensive: never kill silently
            log.exception("notification loop crashed")
        finally:
            with self._cond:
                self._loop = None
                self._queue = None
                self._wake_event = None

    def _done(self, n: int = 1) -> None:
        with self._cond:
            self._pending -= n
            if self._pending <= 0:
                self._pending = 0
                self._cond.notify_all()

    async def _feed(self, queue: asyncio.Queue[Any], event: asyncio.Event) -> None:
        """Move outbox rows this process should deliver into the queue: when woken, and every
        poll_interval (rows of processes that died)."""
        outbox = self._outbox
        batch = 100
        while True:
            event.clear()
            with self._cond:
                tokens, self._wake_tokens = self._wake_tokens, 0
            try:
                while True:
                    entries = await asyncio.to_thread(outbox.claim, batch)
                    with self._cond:
                        self._pending += len(entries)
                    for e in entries:
                        queue.put_nowait(_Item(e))
                    if len(entries) < batch:
                        break
            except Exception:
                log.exception("reading the notification outbox failed; trying again in %.0fs", self.poll_interval)
            finally:
                self._done(tokens)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), self.poll_interval)

    async def _finish(self, item: _Item) -> None:
        """Every delivery of an outbox item has ended: delete its row."""
        try:
            await asyncio.to_thread(self._outbox.remove, item.entry.id)
        except Exception:  # it stays and is delivered again after reclaim_after: at least once
            log.exception("removing delivered notification %s from the outbox failed", item.entry.id)
        finally:
            self._done()

    async def _main(self) -> None:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        event = asyncio.Event()
        with self._cond:
            self._loop = asyncio.get_running_loop()
            self._queue = queue
            self._wake_event = event
        sub_queues: dict[str, asyncio.Queue[_Delivery]] = {}
        workers: set[asyncio.Task[None]] = set()
        feeder = asyncio.create_task(self._feed(queue, event))
        async with egress_client(self._egress, verify=self._verify, timeout=self.timeout) as client:
            while True:
                item = await queue.get()
                if item is _STOP:
                    break
                try:
                    deliveries = await self._route(item)
                except Exception:
                    log.exception("routing a %s notification failed", item.entry.notification.get("notificationType"))
                    deliveries = []
                with self._cond:
                    self._pending += len(deliveries)
                if deliveries:
                    item.remaining = len(deliveries)
                else:
                    await self._finish(item)
                for d in deliveries:
                    q = sub_queues.get(d.sub.id)
                    if q is None:
                        q = sub_queues[d.sub.id] = asyncio.Queue()
                        task = asyncio.create_task(self._worker(client, d.sub.id, q, sub_queues))
                        workers.add(task)
                        task.add_done_callback(workers.discard)
                    q.put_nowait(d)
            workers.add(feeder)
            for task in list(workers):
                task.cancel()
            if workers:
                await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(
        self, client: httpx.AsyncClient, sub_id: str, q: asyncio.Queue[_Delivery],
        registry: dict[str, asyncio.Queue[_Delivery]],
    ) -> None:
        """Deliver one subscription's notifications in order; exit when its queue is empty."""
        while True:
            try:
                d = q.get_nowait()
            except asyncio.QueueEmpty:
                registry.pop(sub_id, None)
                return
            try:
                ok = await self._deliver(client, d)
            except asyncio.CancelledError:
                self._done(1 + q.qsize())
                raise
            except Exception:
                log.exception("delivering to subscription %s failed unexpectedly", sub_id)
                ok = False
            if ok:
                self.delivered += 1
            else:
                self.failed += 1
            d.item.remaining -= 1
            if d.item.remaining == 0:
                await self._finish(d.item)
            self._done()

    async def _route(self, item: _Item) -> list[_Delivery]:
        n = item.entry.notification
        kind = notification_kind(n)
        tenant = item.entry.tenant  # another tenant's subscriptions never hear of it
        kinds = {kind, LCM_V2_KIND} if kind == "vnflcm" and self._reshape_v2 else {kind}
        subs = [s for s in await asyncio.to_thread(self._subscriptions) if s.kind in kinds and s.tenant == tenant]
        info: Mapping[str, Any] | None = item.entry.info
        looked_up = info is not None
        out: list[_Delivery] = []
        for sub in subs:
            flt = sub.filter or {}
            if kind == "vnflcm":
                if not looked_up and needs_instance_info(flt) and self._instance_info and n.get("vnfInstanceId"):
                    info = await asyncio.to_thread(self._instance_info, str(n["vnfInstanceId"]))
                    looked_up = True
                selected = matches_subscription(flt, n, info)
            elif kind == "vnffm":
                selected = await self._fm_selects(flt, n, item.entry.info)
            else:
                if not looked_up and self._package_info and n.get("vnfPkgId"):
                    info = await asyncio.to_thread(self._package_info, str(n["vnfPkgId"]))
                    looked_up = True
                selected = matches_pkgm_subscription(flt, n, info)
            if selected:
                out.append(_Delivery(sub, self._body_for(sub, n, item.entry.published_at), item))
        return out

    async def _fm_selects(self, flt: Mapping[str, Any], n: Mapping[str, Any],
                          entry_info: Mapping[str, Any] | None) -> bool:
        """An FM notification: the alarm's instance (from the alarm, or the entry's info for a
        cleared one) and, when the filter needs them, the instance's data."""
        alarm = n.get("alarm")
        inst_id = (alarm or {}).get("managedObjectId") if isinstance(alarm, Mapping) else None
        inst_id = inst_id or (entry_info or {}).get("vnfInstanceId")
        info: dict[str, Any] = {"vnfInstanceId": inst_id}
        if needs_instance_info(flt) and self._instance_info and inst_id:
            found = await asyncio.to_thread(self._instance_info, str(inst_id))
            info.update(found or {})
            info["vnfInstanceId"] = inst_id
        return matches_fm_subscription(flt, n, info)

    def _body_for(self, sub: Subscription, n: Mapping[str, Any], published_at: str) -> dict[str, Any]:
        body = self._reshape_v2(n, sub) if sub.kind == LCM_V2_KIND and self._reshape_v2 else dict(n)
        body.setdefault("id", new_id())
        body["subscriptionId"] = sub.id
        body.setdefault("timeStamp", published_at)
        links = dict(body.get("_links") or {})
        prefix = {"vnflcm": LCM, LCM_V2_KIND: LCM_V2, "vnffm": FM}.get(sub.kind, PKGM)
        links["subscription"] = {"href": f"{self.api_base}{prefix}/subscriptions/{sub.id}"}
        body["_links"] = links
        return body

    def _backoff(self, attempt: int) -> float:
        return float(min(self.max_delay, self.base_delay * (2 ** (attempt - 1))))

    async def _deliver(self, client: httpx.AsyncClient, d: _Delivery) -> bool:
        ok = await self._attempts(client, d)
        if self.on_delivery is not None:
            self.on_delivery(ok)
        return ok

    async def _attempts(self, client: httpx.AsyncClient, d: _Delivery) -> bool:
        sub = d.sub
        secrets = secrets_of(sub.authentication)
        content = json.dumps(d.body).encode()
        target = safe_url(sub.callback_uri)
        ntype = d.body.get("notificationType")
        for attempt in range(1, self.attempts + 1):
            try:
                headers = {"Content-Type": "application/json", "Accept": "application/json",
                           **callback_headers(sub.kind)}
                headers.update(await auth_headers(client, sub.authentication, self.tokens, self.timeout))
                resp = await client.post(sub.callback_uri, content=content, headers=headers)
                if 200 <= resp.status_code < 300:
                    log.debug("notification %s delivered to subscription %s (%s)", ntype, sub.id, target)
                    return True
                reason = f"HTTP {resp.status_code}"
                if resp.status_code == 401 and sub.authentication:
                    oauth = sub.authentication.get("paramsOauth2ClientCredentials")
                    if oauth:
                        self.tokens.invalidate(oauth)
            except AuthError as exc:
                reason = str(exc)
            except httpx.HTTPError as exc:
                reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            reason = scrub(reason.replace(sub.callback_uri, target), secrets)  # URI may carry user-info
            if attempt < self.attempts:
                delay = self._backoff(attempt)
                log.warning(
                    "notification %s to subscription %s (%s) failed (attempt %d/%d): %s; retrying in %.1fs",
                    ntype, sub.id, target, attempt, self.attempts, reason, delay,
                )
                await self._sleep(delay)
            else:
                log.error(
                    "notification %s to subscription %s (%s) failed %d times, giving up: %s",
                    ntype, sub.id, target, self.attempts, reason,
                )
        return False
