"""Which subscriptions a notification goes to: pure functions over JSON-ready dicts.

SOL003 v2.6.1 LifecycleChangeNotificationsFilter (clause 5.5.3.12) and VnfInstanceSubscriptionFilter
(SOL003 4.4.1.5), SOL005 v2.6.1 PkgmNotificationsFilter (9.5.3.2). Every attribute present in a filter
must match (AND); inside one attribute's list any entry may match (OR). An absent or empty list
puts no constraint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vnfm.domain.alarms import ALARM_NOTIFICATION, FM_NOTIFICATION_TYPES
from vnfm.domain.notifications import LCM_OCC_NOTIFICATION, PKGM_NOTIFICATION_TYPES

# The keys of the instance filter that need the instance's data (not just its id).
INSTANCE_DATA_KEYS = ("vnfdIds", "vnfProductsFromProviders", "vnfInstanceNames")


def notification_kind(notification: Mapping[str, Any]) -> str:
    """"vnfpkgm" for SOL005 package notifications, "vnffm" for SOL003 fault management ones, else
    "vnflcm" (Subscription.kind values)."""
    ntype = notification.get("notificationType")
    if ntype in PKGM_NOTIFICATION_TYPES:
        return "vnfpkgm"
    return "vnffm" if ntype in FM_NOTIFICATION_TYPES else "vnflcm"


def _listed(values: Any) -> Sequence[Any] | None:
    """The filter's list when it constrains anything, else None."""
    if values is None or values == []:
        return None
    if isinstance(values, str | int | float):
        return [values]
    return list(values)


def _in(value: Any, values: Any) -> bool:
    allowed = _listed(values)
    return allowed is None or value in allowed


def _version_matches(entry: Mapping[str, Any], info: Mapping[str, Any]) -> bool:
    if entry.get("vnfSoftwareVersion") != info.get("vnfSoftwareVersion"):
        return False
    return _in(info.get("vnfdVersion"), entry.get("vnfdVersions"))


def _product_matches(entry: Mapping[str, Any], info: Mapping[str, Any]) -> bool:
    if entry.get("vnfProductName") != info.get("vnfProductName"):
        return False
    versions = _listed(entry.get("versions"))
    return versions is None or any(_version_matches(v, info) for v in versions if isinstance(v, Mapping))


def _provider_matches(entry: Mapping[str, Any], info: Mapping[str, Any]) -> bool:
    if entry.get("vnfProvider") != info.get("vnfProvider"):
        return False
    products = _listed(entry.get("vnfProducts"))
    return products is None or any(_product_matches(p, info) for p in products if isinstance(p, Mapping))


def matches_products(products_from_providers: Any, info: Mapping[str, Any] | None) -> bool:
    """vnfProductsFromProviders: provider, then optionally product names, versions, VNFD versions."""
    entries = _listed(products_from_providers)
    if entries is None:
        return True
    if info is None:
        return False
    return any(_provider_matches(e, info) for e in entries if isinstance(e, Mapping))


def needs_instance_info(flt: Mapping[str, Any] | None) -> bool:
    inst = (flt or {}).get("vnfInstanceSubscriptionFilter") or {}
    return any(_listed(inst.get(k)) is not None for k in INSTANCE_DATA_KEYS)


def matches_instance_filter(
    inst_filter: Mapping[str, Any] | None, vnf_instance_id: str | None, instance_info: Mapping[str, Any] | None
) -> bool:
    """VnfInstanceSubscriptionFilter. Without `instance_info`, only vnfInstanceIds can match."""
    f = inst_filter or {}
    if not _in(vnf_instance_id, f.get("vnfInstanceIds")):
        return False
    data_constraints = [k for k in INSTANCE_DATA_KEYS if _listed(f.get(k)) is not None]
    if not data_constraints:
        return True
    if instance_info is None:
        return False  # cannot prove a match: do not send
    if not _in(instance_info.get("vnfdId"), f.get("vnfdIds")):
        return False
    if not _in(instance_info.get("vnfInstanceName"), f.get("vnfInstanceNames")):
        return False
    return matches_products(f.get("vnfProductsFromProviders"), instance_info)


def matches_subscription(
    filter: Mapping[str, Any] | None,
    notification: Mapping[str, Any],
    instance_info: Mapping[str, Any] | None = None,
) -> bool:
    """Does a SOL003 LccnSubscription's `filter` select this VNF LCM notification?

    `instance_info` (vnfdId, vnfProvider, vnfProductName, vnfSoftwareVersion, vnfdVersion,
    vnfInstanceName) is needed only when the filter constrains more than instance ids.
    operationTypes / operationStates apply to VnfLcmOperationOccurrenceNotification only.
    """
    flt = filter or {}
    ntype = notification.get("notificationType")
    if not _in(ntype, flt.get("notificationTypes")):
        return False
    if ntype == LCM_OCC_NOTIFICATION:
        if not _in(notification.get("operation"), flt.get("operationTypes")):
            return False
        if not _in(notification.get("operationState"), flt.get("operationStates")):
            return False
    return matches_instance_filter(
        flt.get("vnfInstanceSubscriptionFilter"), notification.get("vnfInstanceId"), instance_info
    )


def matches_pkgm_subscription(
    filter: Mapping[str, Any] | None,
    notification: Mapping[str, Any],
    package_info: Mapping[str, Any] | None = None,
) -> bool:
    """Does a SOL005 PkgmSubscription's `filter` select this package notification?

    `package_info` is the VnfPkgInfo document (vnfProvider, vnfProductName, vnfSoftwareVersion,
    vnfdVersion, operationalState, usageState); needed for product/state constraints.
    """
    flt = filter or {}
    info = dict(package_info or {})
    if not _in(notification.get("notificationType"), flt.get("notificationTypes")):
        return False
    if not _in(notification.get("vnfPkgId"), flt.get("vnfPkgId")):
        return False
    vnfd_id = notification.get("vnfdId", info.get("vnfdId"))
    if not _in(vnfd_id, flt.get("vnfdId")):
        return False
    op_state = notification.get("operationalState", info.get("operationalState"))
    if not _in(op_state, flt.get("operationalState")):
        return False
    if not _in(info.get("usageState"), flt.get("usageState")):
        return False
    return matches_products(flt.get("vnfProductsFromProviders"), package_info)


def matches_fm_subscription(
    filter: Mapping[str, Any] | None,
    notification: Mapping[str, Any],
    instance_info: Mapping[str, Any] | None = None,
) -> bool:
    """Does a SOL003 FmSubscription's `filter` (FmNotificationsFilter, 7.5.3.2) select this FM
    notification? The alarm attributes (faultyResourceTypes, perceivedSeverities, eventTypes,
    probableCauses) constrain AlarmNotification only; an AlarmClearedNotification carries only
    the alarm's id, so it goes to every subscription whose instance filter selects the alarm's
    instance (`info` of the outbox entry: {"vnfInstanceId": ...} plus the instance's data)."""
    flt = filter or {}
    if not _in(notification.get("notificationType"), flt.get("notificationTypes")):
        return False
    alarm = notification.get("alarm") if notification.get("notificationType") == ALARM_NOTIFICATION else None
    if isinstance(alarm, Mapping):
        faulty = (alarm.get("rootCauseFaultyResource") or {}).get("faultyResourceType")
        if _listed(flt.get("faultyResourceTypes")) is not None and not _in(faulty, flt.get("faultyResourceTypes")):
            return False
        for key, attr in (("perceivedSeverities", "perceivedSeverity"), ("eventTypes", "eventType"),
                          ("probableCauses", "probableCause")):
            if not _in(alarm.get(attr), flt.get(key)):
                return False
        instance_id = alarm.get("managedObjectId")
    else:
        instance_id = (instance_info or {}).get("vnfInstanceId")
    return matches_instance_filter(flt.get("vnfInstanceSubscriptionFilter"), instance_id, instance_info)
