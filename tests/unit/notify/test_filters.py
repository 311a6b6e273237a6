"""Subscription filter matching (SOL003 LccnSubscriptionRequest.filter, SOL005 PkgmNotificationsFilter)."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.adapters.notify.filters import (
    matches_instance_filter,
    matches_pkgm_subscription,
    matches_subscription,
    needs_instance_info,
    notification_kind,
)

OCC: dict[str, Any] = {
    "notificationType": "VnfLcmOperationOccurrenceNotification",
    "notificationStatus": "RESULT",
    "operationState": "COMPLETED",
    "operation": "SCALE",
    "vnfInstanceId": "inst-1",
}
CREATED: dict[str, Any] = {"notificationType": "VnfIdentifierCreationNotification", "vnfInstanceId": "inst-1"}
DELETED: dict[str, Any] = {"notificationType": "VnfIdentifierDeletionNotification", "vnfInstanceId": "inst-1"}
INFO: dict[str, Any] = {
    "vnfdId": "vnfd-k8s",
    "vnfProvider": "Company",
    "vnfProductName": "Sample K8s",
    "vnfSoftwareVersion": "1.0",
    "vnfdVersion": "1.2",
    "vnfInstanceName": "cluster-a",
}


def prod(provider: str = "Company", products: Any = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"vnfProvider": provider}
    if products is not None:
        entry["vnfProducts"] = products
    return entry


def isf(**kw: Any) -> dict[str, Any]:
    return {"vnfInstanceSubscriptionFilter": kw}


CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any], dict[str, Any] | None, bool]] = [
    ("no filter", None, OCC, None, True),
    ("empty filter", {}, OCC, None, True),
    ("empty lists constrain nothing", {"notificationTypes": [], "operationTypes": []}, OCC, None, True),
    # notificationTypes
    ("type listed", {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}, OCC, None, True),
    ("type not listed", {"notificationTypes": ["VnfIdentifierCreationNotification"]}, OCC, None, False),
    ("creation listed", {"notificationTypes": ["VnfIdentifierCreationNotification"]}, CREATED, None, True),
    ("deletion not listed", {"notificationTypes": ["VnfIdentifierCreationNotification"]}, DELETED, None, False),
    # operationTypes / operationStates
    ("op listed", {"operationTypes": ["INSTANTIATE", "SCALE"]}, OCC, None, True),
    ("op not listed", {"operationTypes": ["HEAL"]}, OCC, None, False),
    ("state listed", {"operationStates": ["COMPLETED", "FAILED_TEMP"]}, OCC, None, True),
    ("state not listed", {"operationStates": ["STARTING"]}, OCC, None, False),
    ("op+state both must match", {"operationTypes": ["SCALE"], "operationStates": ["STARTING"]}, OCC, None, False),
    ("op types ignore identifier notifications", {"operationTypes": ["HEAL"]}, CREATED, None, True),
    ("op states ignore identifier notifications", {"operationStates": ["FAILED"]}, DELETED, None, True),
    (
        "type + op",
        {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"], "operationTypes": ["SCALE"]},
        OCC, None, True,
    ),
    # vnfInstanceIds: needs no instance info
    ("instance id listed", isf(vnfInstanceIds=["inst-0", "inst-1"]), OCC, None, True),
    ("instance id not listed", isf(vnfInstanceIds=["inst-0"]), OCC, INFO, False),
    ("instance id on creation", isf(vnfInstanceIds=["inst-1"]), CREATED, None, True),
    # vnfInstanceNames
    ("name listed", isf(vnfInstanceNames=["cluster-a"]), OCC, INFO, True),
    ("name not listed", isf(vnfInstanceNames=["cluster-b"]), OCC, INFO, False),
    ("name without info", isf(vnfInstanceNames=["cluster-a"]), OCC, None, False),
    # vnfdIds
    ("vnfd listed", isf(vnfdIds=["x", "vnfd-k8s"]), OCC, INFO, True),
    ("vnfd not listed", isf(vnfdIds=["x"]), OCC, INFO, False),
    ("vnfd without info", isf(vnfdIds=["vnfd-k8s"]), OCC, None, False),
    ("vnfd and id", isf(vnfdIds=["vnfd-k8s"], vnfInstanceIds=["inst-2"]), OCC, INFO, False),
    # vnfProductsFromProviders
    ("provider only", isf(vnfProductsFromProviders=[prod()]), OCC, INFO, True),
    ("other provider", isf(vnfProductsFromProviders=[prod("Other")]), OCC, INFO, False),
    ("one of providers", isf(vnfProductsFromProviders=[prod("Other"), prod()]), OCC, INFO, True),
    ("product name", isf(vnfProductsFromProviders=[prod(products=[{"vnfProductName": "Sample K8s"}])]),
     OCC, INFO, True),
    ("other product", isf(vnfProductsFromProviders=[prod(products=[{"vnfProductName": "Other"}])]),
     OCC, INFO, False),
    (
        "software version",
        isf(vnfProductsFromProviders=[prod(products=[
            {"vnfProductName": "Sample K8s", "versions": [{"vnfSoftwareVersion": "1.0"}]}])]),
        OCC, INFO, True,
    ),
    (
        "other software version",
        isf(vnfProductsFromProviders=[prod(products=[
            {"vnfProductName": "Sample K8s", "versions": [{"vnfSoftwareVersion": "2.0"}]}])]),
        OCC, INFO, False,
    ),
    (
        "vnfd version",
        isf(vnfProductsFromProviders=[prod(products=[
            {"vnfProductName": "Sample K8s",
             "versions": [{"vnfSoftwareVersion": "1.0", "vnfdVersions": ["1.1", "1.2"]}]}])]),
        OCC, INFO, True,
    ),
    (
        "other vnfd version",
        isf(vnfProductsFromProviders=[prod(products=[
            {"vnfProductName": "Sample K8s",
             "versions": [{"vnfSoftwareVersion": "1.0", "vnfdVersions": ["1.1"]}]}])]),
        OCC, INFO, False,
    ),
    (
        "second version entry matches",
        isf(vnfProductsFromProviders=[prod(products=[
            {"vnfProductName": "Sample K8s",
             "versions": [{"vnfSoftwareVersion": "0.9"}, {"vnfSoftwareVersion": "1.0", "vnfdVersions": ["1.2"]}]}])]),
        OCC, INFO, True,
    ),
    ("products without info", isf(vnfProductsFromProviders=[prod()]), OCC, None, False),
    # everything combined
    (
        "all attributes match",
        {
            "notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
            "operationTypes": ["SCALE"],
            "operationStates": ["COMPLETED"],
            **isf(vnfdIds=["vnfd-k8s"], vnfInstanceIds=["inst-1"]),
        },
        OCC, INFO, True,
    ),
]


@pytest.mark.parametrize(("name", "flt", "notification", "info", "expected"), CASES, ids=[c[0] for c in CASES])
def test_matches_subscription(
    name: str, flt: dict[str, Any] | None, notification: dict[str, Any], info: dict[str, Any] | None, expected: bool
) -> None:
    assert matches_subscription(flt, notification, info) is expected


def test_needs_instance_info() -> None:
    assert not needs_instance_info({})
    assert not needs_instance_info(isf(vnfInstanceIds=["a"]))
    assert not needs_instance_info(isf(vnfdIds=[]))
    assert needs_instance_info(isf(vnfdIds=["a"]))
    assert needs_instance_info(isf(vnfInstanceNames=["a"]))
    assert needs_instance_info(isf(vnfProductsFromProviders=[prod()]))


def test_instance_filter_directly() -> None:
    assert matches_instance_filter(None, "x", None)
    assert not matches_instance_filter({"vnfInstanceIds": ["y"]}, None, None)


def test_notification_kind() -> None:
    assert notification_kind(OCC) == "vnflcm"
    assert notification_kind({"notificationType": "VnfPackageChangeNotification"}) == "vnfpkgm"


PKG_NOTE = {"notificationType": "VnfPackageChangeNotification", "vnfPkgId": "p1", "vnfdId": "d1",
            "changeType": "OP_STATE_CHANGE", "operationalState": "ENABLED"}
PKG_INFO = {"vnfProvider": "Company", "vnfProductName": "P", "vnfSoftwareVersion": "1", "vnfdVersion": "1",
            "operationalState": "ENABLED", "usageState": "NOT_IN_USE"}


@pytest.mark.parametrize(
    ("flt", "info", "expected"),
    [
        ({}, None, True),
        ({"notificationTypes": ["VnfPackageChangeNotification"]}, None, True),
        ({"notificationTypes": ["VnfPackageOnboardingNotification"]}, None, False),
        ({"vnfPkgId": ["p1"]}, None, True),
        ({"vnfPkgId": ["p2"]}, None, False),
        ({"vnfdId": ["d1"]}, None, True),
        ({"vnfdId": ["d2"]}, None, False),
        ({"operationalState": ["ENABLED"]}, None, True),
        ({"operationalState": ["DISABLED"]}, None, False),
        ({"usageState": ["NOT_IN_USE"]}, PKG_INFO, True),
        ({"usageState": ["IN_USE"]}, PKG_INFO, False),
        ({"usageState": ["NOT_IN_USE"]}, None, False),
        ({"vnfProductsFromProviders": [{"vnfProvider": "Company"}]}, PKG_INFO, True),
        ({"vnfProductsFromProviders": [{"vnfProvider": "Other"}]}, PKG_INFO, False),
    ],
)
def test_matches_pkgm_subscription(flt: dict[str, Any], info: dict[str, Any] | None, expected: bool) -> None:
    assert matches_pkgm_subscription(flt, PKG_NOTE, info) is expected


def test_vnfm_extension_types_are_opt_in() -> None:
    """VnfmCertificateExpiryNotification reaches only subscriptions that list it: a SOL003 client
    with no notificationTypes filter never gets a type it does not know."""
    n = {"notificationType": "VnfmCertificateExpiryNotification", "vnfInstanceId": "i1"}
    assert not matches_subscription(None, n)
    assert not matches_subscription({"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}, n)
    assert matches_subscription({"notificationTypes": ["VnfmCertificateExpiryNotification"]}, n)
    assert not matches_subscription({"notificationTypes": ["VnfmCertificateExpiryNotification"],
                                     "vnfInstanceSubscriptionFilter": {"vnfInstanceIds": ["i2"]}}, n)
