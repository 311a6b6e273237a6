"""SOL003 LCCN subscriptions (and SOL005 package-management subscriptions)."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlparse

from vnfm.domain.access import caller_tenant
from vnfm.domain.alarms import FM_NOTIFICATION_TYPES, EventType, FaultyResourceType, PerceivedSeverity
from vnfm.domain.errors import BadRequest, NotFound
from vnfm.domain.model import Subscription
from vnfm.domain.notifications import (
    LCM_V2_KIND,
    NOTIFICATION_TYPES,
    OPERATION_STATES,
    OPERATION_TYPES,
    OPERATION_TYPES_V2,
    OPT_IN_NOTIFICATION_TYPES,
    PKGM_NOTIFICATION_TYPES,
    callback_headers,
)
from vnfm.service import requests as rq
from vnfm.service.ports import AbstractUnitOfWork, Condition, UowFactory
from vnfm.service.secrets import SecretBox

PKGM_FILTER_KEYS = {"notificationTypes", "vnfProductsFromProviders", "vnfdId", "vnfPkgId", "operationalState",
                    "usageState"}


def _check_enums(flt: dict[str, Any], enums: tuple[tuple[str, frozenset[str] | set[str]], ...]) -> None:
    for key, allowed in enums:
        values = flt.get(key)
        if values is None:
            continue
        if not isinstance(values, list):
            raise BadRequest(f"filter.{key} must be a list")
        bad = [v for v in values if v not in allowed]
        if bad:
            raise BadRequest(f"filter.{key}: unknown value(s) {', '.join(map(str, bad))}")


def _check_filter(flt: dict[str, Any]) -> None:
    _check_enums(flt, (("notificationTypes", NOTIFICATION_TYPES | OPT_IN_NOTIFICATION_TYPES),
                       ("operationTypes", OPERATION_TYPES), ("operationStates", OPERATION_STATES)))


LCCN_FILTER_KEYS = {"vnfInstanceSubscriptionFilter", "notificationTypes", "operationTypes", "operationStates"}
INSTANCE_FILTER_KEYS = {"vnfdIds", "vnfProductsFromProviders", "vnfInstanceIds", "vnfInstanceNames"}


def _check_filter_v2(flt: dict[str, Any]) -> None:
    """SOL003 v3.3.1 LifecycleChangeNotificationsFilter: an attribute it does not have is refused."""
    unknown = sorted(set(flt) - LCCN_FILTER_KEYS)
    inst = flt.get("vnfInstanceSubscriptionFilter")
    if inst is not None and not isinstance(inst, dict):
        raise BadRequest("filter.vnfInstanceSubscriptionFilter must be an object")
    unknown += [f"vnfInstanceSubscriptionFilter.{k}" for k in sorted(set(inst or {}) - INSTANCE_FILTER_KEYS)]
    if unknown:
        raise BadRequest(f"filter: unknown attribute(s) {', '.join(unknown)} (SOL003 v3.3.1 "
                         "LifecycleChangeNotificationsFilter)")
    _check_enums(flt, (("notificationTypes", NOTIFICATION_TYPES), ("operationTypes", OPERATION_TYPES_V2),
                       ("operationStates", OPERATION_STATES)))


def _check_pkgm_filter(flt: dict[str, Any]) -> None:
    unknown = sorted(set(flt) - PKGM_FILTER_KEYS)
    if unknown:
        raise BadRequest(f"filter: unknown attribute(s) {', '.join(unknown)} "
                         f"(a PkgmNotificationsFilter has {', '.join(sorted(PKGM_FILTER_KEYS))})")
    _check_enums(flt, (("notificationTypes", PKGM_NOTIFICATION_TYPES),
                       ("operationalState", {"ENABLED", "DISABLED"}),
                       ("usageState", {"IN_USE", "NOT_IN_USE"})))
    for key in ("vnfdId", "vnfPkgId"):
        values = flt.get(key)
        if values is not None and (not isinstance(values, list) or not all(isinstance(v, str) for v in values)):
            raise BadRequest(f"filter.{key} must be a list of identifiers")
    products = flt.get("vnfProductsFromProviders")
    if products is not None and (not isinstance(products, list)
                                 or not all(isinstance(p, dict) and p.get("vnfProvider") for p in products)):
        raise BadRequest("filter.vnfProductsFromProviders must be a list of objects, each with vnfProvider")


FM_FILTER_KEYS = {"vnfInstanceSubscriptionFilter", "notificationTypes", "faultyResourceTypes",
                  "perceivedSeverities", "eventTypes", "probableCauses"}


def _check_fm_filter(flt: dict[str, Any]) -> None:
    """FmNotificationsFilter (SOL003 v2.6.1 7.5.3.2): unknown attributes and values are refused."""
    unknown = sorted(set(flt) - FM_FILTER_KEYS)
    if unknown:
        raise BadRequest(f"filter: unknown attribute(s) {', '.join(unknown)} "
                         f"(an FmNotificationsFilter has {', '.join(sorted(FM_FILTER_KEYS))})")
    _check_enums(flt, (("notificationTypes", FM_NOTIFICATION_TYPES),
                       ("faultyResourceTypes", {t.value for t in FaultyResourceType}),
                       ("perceivedSeverities", {s.value for s in PerceivedSeverity}),
                       ("eventTypes", {e.value for e in EventType})))
    causes = flt.get("probableCauses")
    if causes is not None and (not isinstance(causes, list) or not all(isinstance(c, str) for c in causes)):
        raise BadRequest("filter.probableCauses must be a list of strings")
    inst = flt.get("vnfInstanceSubscriptionFilter")
    if inst is not None and not isinstance(inst, dict):
        raise BadRequest("filter.vnfInstanceSubscriptionFilter must be an object")
    unknown = sorted(set(inst or {}) - INSTANCE_FILTER_KEYS)
    if unknown:
        raise BadRequest(f"filter.vnfInstanceSubscriptionFilter: unknown attribute(s) {', '.join(unknown)}")


REQUESTS: dict[str, type[rq.LccnSubscriptionRequest]] = {
    "vnflcm": rq.LccnSubscriptionRequest, "vnfpkgm": rq.PkgmSubscriptionRequest, "vnffm": rq.FmSubscriptionRequest,
    LCM_V2_KIND: rq.LccnSubscriptionRequestV2}
FILTER_CHECKS = {"vnflcm": _check_filter, "vnfpkgm": _check_pkgm_filter, "vnffm": _check_fm_filter,
                 LCM_V2_KIND: _check_filter_v2}


def _check_auth(auth: dict[str, Any] | None, callback: str, tls_cert: bool) -> None:
    if not auth:
        return
    types = auth.get("authType")
    if not isinstance(types, list) or not types:
        raise BadRequest("authentication.authType must be a non-empty list")
    for t in types:
        if t == "BASIC":
            p = auth.get("paramsBasic") or {}
            if not p.get("userName") or not p.get("password"):
                raise BadRequest("authentication.paramsBasic needs userName and password for BASIC")
        elif t == "OAUTH2_CLIENT_CREDENTIALS":
            p = auth.get("paramsOauth2ClientCredentials") or {}
            for k in ("clientId", "clientPassword", "tokenEndpoint"):
                if not p.get(k):
                    raise BadRequest(f"authentication.paramsOauth2ClientCredentials.{k} is required")
        elif t == "TLS_CERT":
            if not tls_cert:
                raise BadRequest("authentication.authType TLS_CERT: this VNFM has no client certificate for "
                                 "notifications (settings notify_client_cert / notify_client_key)")
            if not callback.startswith("https://"):
                raise BadRequest("authentication.authType TLS_CERT needs an https callbackUri")
        else:
            raise BadRequest(f"authentication.authType: unknown value {t!r}")


class SubscriptionService:
    def __init__(
        self,
        uow: UowFactory,
        probe: Callable[[str, dict[str, Any] | None, dict[str, str]], Awaitable[None]] | None = None,
        box: SecretBox | None = None,
        tls_cert: bool = False,
    ) -> None:
        self.uow = uow
        self.tls_cert = tls_cert  # notifications can present a client certificate (TLS_CERT)
        self.box = box  # encrypts authentication secrets at rest
        self.probe = probe  # SOL003: test the callback URI (GET, expect 204) before accepting

    async def create(self, body: Any, kind: str = "vnflcm") -> tuple[Subscription, bool]:
        """Returns (subscription, created). An identical existing one is returned with created=False."""
        req = rq.parse(REQUESTS[kind], body)
        verbosity = getattr(req, "verbosity", None) or ("FULL" if kind == LCM_V2_KIND else None)
        url = urlparse(req.callbackUri)
        if url.scheme not in ("http", "https") or not url.netloc:
            raise BadRequest(f"callbackUri {req.callbackUri!r} is not an http(s) URL")
        flt = req.filter or {}
        FILTER_CHECKS[kind](flt)
        _check_auth(req.authentication, req.callbackUri, self.tls_cert)
        with self.uow() as uow:
            for existing in uow.subscriptions.list():
                if (existing.kind == kind and existing.callback_uri == req.callbackUri and existing.filter == flt
                        and existing.verbosity == verbosity):
                    return existing, False
        if self.probe is not None:
            await self.probe(req.callbackUri, req.authentication, callback_headers(kind))
        auth = self.box.seal(req.authentication) if self.box and req.authentication else req.authentication
        sub = Subscription(callback_uri=req.callbackUri, filter=flt, authentication=auth, kind=kind,
                           verbosity=verbosity, tenant=caller_tenant())
        with self.uow() as uow:
            uow.subscriptions.add(sub)
            uow.commit()
        return sub, True

    def for_delivery(self, uow: AbstractUnitOfWork | None = None) -> builtins.list[Subscription]:
        """Every subscription (both APIs) with its authentication decrypted, for the notifier
        (`uow`: read in this unit of work, e.g. the one that claimed the notifications)."""
        if uow is None:
            with self.uow() as own:
                subs = own.subscriptions.list()
        else:
            subs = uow.subscriptions.list()
        if self.box is not None:
            for s in subs:
                s.authentication = self.box.unseal(s.authentication) if s.authentication else s.authentication
        return subs

    def list(self, kind: str = "vnflcm") -> builtins.list[Subscription]:
        with self.uow() as uow:
            return [s for s in uow.subscriptions.list() if s.kind == kind]

    def page(self, kind: str, conditions: Sequence[Condition], after_id: str | None,
             limit: int) -> builtins.list[Subscription]:
        with self.uow() as uow:
            return uow.subscriptions.page_of_kind(kind, conditions, after_id, limit)

    def get(self, sub_id: str, kind: str = "vnflcm") -> Subscription:
        with self.uow() as uow:
            sub = uow.subscriptions.get(sub_id)
        if sub is None or sub.kind != kind:
            raise NotFound(f"subscription {sub_id} does not exist")
        return sub

    def delete(self, sub_id: str, kind: str = "vnflcm") -> None:
        self.get(sub_id, kind)
        with self.uow() as uow:
            uow.subscriptions.delete(sub_id)
            uow.commit()
