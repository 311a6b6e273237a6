"""The notification and operation vocabulary of SOL003 / SOL005 v2.6.1, shared by every layer."""

from __future__ import annotations

LCM = "/vnflcm/v1"  # SOL003 VNF LCM API root
PKGM = "/vnfpkgm/v1"  # SOL005 VNF package management API root
LCM_V2 = "/vnflcm/v2"  # SOL003 v3.3.1 VNF LCM API root (API version 2.0.0)
LCM_V2_KIND = "vnflcm2"  # Subscription.kind of a subscription made through /vnflcm/v2
LCM_V2_API_VERSION = "2.0.0"  # the API version /vnflcm/v2 serves (SOL003 v3.3.1)


def callback_headers(kind: str) -> dict[str, str]:
    """Headers of every request vnfm makes to a subscription's callbackUri (the test GET and each
    notification): a /vnflcm/v2 subscriber's endpoint is part of an API version 2.0.0 interface,
    whose requests name their version (SOL013 v3.3.1 table 4.2.2-1, `Version`; as Tacker's v2 API
    sends it). v2.6.1 endpoints get none, as before."""
    return {"Version": LCM_V2_API_VERSION} if kind == LCM_V2_KIND else {}

LCM_OCC_NOTIFICATION = "VnfLcmOperationOccurrenceNotification"
# SOL003 v2.6.1 LifecycleChangeNotificationsFilter.notificationTypes
NOTIFICATION_TYPES = frozenset(
    {LCM_OCC_NOTIFICATION, "VnfIdentifierCreationNotification", "VnfIdentifierDeletionNotification"}
)
# vnfm's own notification types on the VNF LCM subscriptions: delivered only to subscriptions whose
# filter lists them in notificationTypes (opt-in: a SOL003 client never sees a type it does not know)
CERT_EXPIRY_NOTIFICATION = "VnfmCertificateExpiryNotification"
OPT_IN_NOTIFICATION_TYPES = frozenset({CERT_EXPIRY_NOTIFICATION})
OPERATION_TYPES = frozenset({"INSTANTIATE", "SCALE", "SCALE_TO_LEVEL", "CHANGE_FLAVOUR", "TERMINATE", "HEAL",
                             "OPERATE", "CHANGE_EXT_CONN", "MODIFY_INFO"})
# SOL003 v3.3.1 LcmOperationType (a v2 subscription's filter may name these)
OPERATION_TYPES_V2 = OPERATION_TYPES | {"CHANGE_VNFPKG", "CREATE_SNAPSHOT", "REVERT_TO_SNAPSHOT"}
OPERATION_STATES = frozenset({"STARTING", "PROCESSING", "COMPLETED", "FAILED_TEMP", "FAILED", "ROLLING_BACK",
                              "ROLLED_BACK"})
# SOL005 v2.6.1 PkgmNotificationsFilter.notificationTypes
PKGM_NOTIFICATION_TYPES = frozenset({"VnfPackageOnboardingNotification", "VnfPackageChangeNotification"})
