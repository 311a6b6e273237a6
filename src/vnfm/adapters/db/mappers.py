"""Explicit entity <-> row mappers.

`*_to_dict` / `*_from_dict` give the JSON `body` (enums as their values, datetimes as ISO 8601 in
UTC, VnfResources through its own to_dict/from_dict, nested dicts as they are); `*_to_row` adds the
indexed scalar columns. Reading tolerates missing keys (falls back to the dataclass defaults) so
that bodies written by an older version still load.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from vnfm.domain.model import (
    InstantiationState,
    LcmOperation,
    OnboardingState,
    OperationalState,
    OpOcc,
    OpState,
    Subscription,
    UsageState,
    Vim,
    VnfInstance,
    VnfPackage,
    VnfState,
    utcnow,
)
from vnfm.domain.resources import VnfResources
from vnfm.service.ports import Sealer

Row = dict[str, Any]
E = TypeVar("E")


# ----------------------------------------------------------------------------- helpers
def as_utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else as_utc(dt).isoformat()


def parse_dt(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return as_utc(value)
    return as_utc(datetime.fromisoformat(str(value)))


def _dt(value: Any) -> datetime:
    return parse_dt(value) or utcnow()


def _j(value: Any) -> Any:
    """A private copy of a JSON-ready structure (the entity and the row never share objects)."""
    return copy.deepcopy(value)


# ----------------------------------------------------------------------------- packages
def package_to_dict(p: VnfPackage) -> Row:
    return {
        "id": p.id,
        "onboarding_state": p.onboarding_state.value,
        "operational_state": p.operational_state.value,
        "usage_state": p.usage_state.value,
        "user_defined_data": _j(p.user_defined_data),
        "vnfd_id": p.vnfd_id,
        "vnf_provider": p.vnf_provider,
        "vnf_product_name": p.vnf_product_name,
        "vnf_software_version": p.vnf_software_version,
        "vnfd_version": p.vnfd_version,
        "checksum": _j(p.checksum),
        "software_images": _j(p.software_images),
        "additional_artifacts": _j(p.additional_artifacts),
        "onboarding_failure_details": _j(p.onboarding_failure_details),
        "created_at": iso(p.created_at),
    }


def package_from_dict(d: Mapping[str, Any]) -> VnfPackage:
    return VnfPackage(
        id=d["id"],
        onboarding_state=OnboardingState(d.get("onboarding_state", OnboardingState.CREATED.value)),
        operational_state=OperationalState(d.get("operational_state", OperationalState.DISABLED.value)),
        usage_state=UsageState(d.get("usage_state", UsageState.NOT_IN_USE.value)),
        user_defined_data=d.get("user_defined_data") or {},
        vnfd_id=d.get("vnfd_id"),
        vnf_provider=d.get("vnf_provider"),
        vnf_product_name=d.get("vnf_product_name"),
        vnf_software_version=d.get("vnf_software_version"),
        vnfd_version=d.get("vnfd_version"),
        checksum=d.get("checksum"),
        software_images=d.get("software_images") or [],
        additional_artifacts=d.get("additional_artifacts") or [],
        onboarding_failure_details=d.get("onboarding_failure_details"),
        created_at=_dt(d.get("created_at")),
    )


def package_to_row(p: VnfPackage) -> Row:
    return {
        "id": p.id,
        "onboarding_state": p.onboarding_state.value,
        "operational_state": p.operational_state.value,
        "usage_state": p.usage_state.value,
        "vnfd_id": p.vnfd_id,
        "created_at": as_utc(p.created_at),
        "body": package_to_dict(p),
    }


def package_from_row(row: Mapping[str, Any]) -> VnfPackage:
    return package_from_dict(row["body"])


# ----------------------------------------------------------------------------- instances
# Each key of an instance's JSON body: how it is made from the instance's attribute of the same
# name (a stage's write sends only the keys whose attribute changed: `SqlInstanceRepository`).
INSTANCE_BODY: dict[str, Callable[[VnfInstance], Any]] = {
    "id": lambda i: i.id,
    "vnfd_id": lambda i: i.vnfd_id,
    "vnf_pkg_id": lambda i: i.vnf_pkg_id,
    "vnf_provider": lambda i: i.vnf_provider,
    "vnf_product_name": lambda i: i.vnf_product_name,
    "vnf_software_version": lambda i: i.vnf_software_version,
    "vnfd_version": lambda i: i.vnfd_version,
    "vnf_instance_name": lambda i: i.vnf_instance_name,
    "vnf_instance_description": lambda i: i.vnf_instance_description,
    "instantiation_state": lambda i: i.instantiation_state.value,
    "vim_connection_info": lambda i: _j(i.vim_connection_info),
    "metadata": lambda i: _j(i.metadata),
    "extensions": lambda i: _j(i.extensions),
    "vnf_configurable_properties": lambda i: _j(i.vnf_configurable_properties),
    "flavour_id": lambda i: i.flavour_id,
    "instantiation_level_id": lambda i: i.instantiation_level_id,
    "vnf_state": lambda i: i.vnf_state.value,
    "scale_levels": lambda i: dict(i.scale_levels),
    "ext_virtual_links": lambda i: _j(i.ext_virtual_links),
    "ext_managed_virtual_links": lambda i: _j(i.ext_managed_virtual_links),
    "additional_params": lambda i: _j(i.additional_params),
    "resources": lambda i: i.resources.to_dict(),
    "vim_id": lambda i: i.vim_id,
    "driver_state": lambda i: _j(i.driver_state),
    "lock_op_id": lambda i: i.lock_op_id,
    "created_at": lambda i: iso(i.created_at),
}
# The instance's columns besides id and tenant: how each is made from the attribute of its name.
INSTANCE_COLUMNS: dict[str, Callable[[VnfInstance], Any]] = {
    "vnfd_id": lambda i: i.vnfd_id,
    "vnf_pkg_id": lambda i: i.vnf_pkg_id,
    "vnf_instance_name": lambda i: i.vnf_instance_name,
    "instantiation_state": lambda i: i.instantiation_state.value,
    "vim_id": lambda i: i.vim_id,
    "lock_op_id": lambda i: i.lock_op_id,
    "created_at": lambda i: as_utc(i.created_at),
}


# The keys whose value is a JSON document held as it is (copied by the functions above).
_INSTANCE_DOCS = frozenset({"vim_connection_info", "metadata", "extensions", "vnf_configurable_properties",
                            "ext_virtual_links", "ext_managed_virtual_links", "additional_params", "driver_state"})


def instance_to_dict(i: VnfInstance, keys: Iterable[str] | None = None, *, copied: bool = True) -> Row:
    """The instance's JSON body (`keys`: only these keys of it). `copied=False`: its documents are
    the instance's own objects, for a statement's parameters that are serialised at once (and
    not kept) while nothing changes the instance (a snapshot)."""
    if keys is None:
        return {k: f(i) for k, f in INSTANCE_BODY.items()}
    if copied:
        return {k: INSTANCE_BODY[k](i) for k in keys}
    return {k: getattr(i, k) if k in _INSTANCE_DOCS else INSTANCE_BODY[k](i) for k in keys}


def instance_from_dict(d: Mapping[str, Any]) -> VnfInstance:
    return VnfInstance(
        id=d["id"],
        vnfd_id=d.get("vnfd_id") or "",
        vnf_pkg_id=d.get("vnf_pkg_id") or "",
        vnf_provider=d.get("vnf_provider") or "",
        vnf_product_name=d.get("vnf_product_name") or "",
        vnf_software_version=d.get("vnf_software_version") or "",
        vnfd_version=d.get("vnfd_version") or "",
        vnf_instance_name=d.get("vnf_instance_name"),
        vnf_instance_description=d.get("vnf_instance_description"),
        instantiation_state=InstantiationState(
            d.get("instantiation_state", InstantiationState.NOT_INSTANTIATED.value)
        ),
        vim_connection_info=d.get("vim_connection_info") or [],
        metadata=d.get("metadata") or {},
        extensions=d.get("extensions") or {},
        vnf_configurable_properties=d.get("vnf_configurable_properties") or {},
        flavour_id=d.get("flavour_id"),
        instantiation_level_id=d.get("instantiation_level_id"),
        vnf_state=VnfState(d.get("vnf_state", VnfState.STARTED.value)),
        scale_levels={str(k): int(v) for k, v in (d.get("scale_levels") or {}).items()},
        ext_virtual_links=d.get("ext_virtual_links") or [],
        ext_managed_virtual_links=d.get("ext_managed_virtual_links") or [],
        additional_params=d.get("additional_params") or {},
        resources=VnfResources.from_dict(d.get("resources")),
        vim_id=d.get("vim_id"),
        driver_state=d.get("driver_state") or {},
        lock_op_id=d.get("lock_op_id"),
        created_at=_dt(d.get("created_at")),
    )


def instance_to_row(i: VnfInstance) -> Row:
    return {"id": i.id, **{c: f(i) for c, f in INSTANCE_COLUMNS.items()}, "body": instance_to_dict(i)}


def instance_from_row(row: Mapping[str, Any]) -> VnfInstance:
    inst = instance_from_dict(row["body"])
    if "lock_op_id" in row:  # the column is authoritative (conditional updates)
        inst.lock_op_id = row["lock_op_id"]
    return inst


# ----------------------------------------------------------------------------- occurrences
# Each key of an occurrence's JSON body: how it is made from the occurrence's attribute of the
# same name (a checkpoint writes only the keys whose attribute changed: `op_occs.py`).
OCC_BODY: dict[str, Callable[[OpOcc], Any]] = {
    "id": lambda o: o.id,
    "vnf_instance_id": lambda o: o.vnf_instance_id,
    "operation": lambda o: o.operation.value,
    "operation_params": lambda o: _j(o.operation_params),
    "operation_state": lambda o: o.operation_state.value,
    "state_entered_time": lambda o: iso(o.state_entered_time),
    "start_time": lambda o: iso(o.start_time),
    "is_automatic_invocation": lambda o: o.is_automatic_invocation,
    "is_cancel_pending": lambda o: o.is_cancel_pending,
    "cancel_mode": lambda o: o.cancel_mode,
    "error": lambda o: _j(o.error),
    "resource_changes": lambda o: _j(o.resource_changes),
    "changed_info": lambda o: _j(o.changed_info),
    "changed_ext_connectivity": lambda o: _j(o.changed_ext_connectivity),
    "stage": lambda o: o.stage,
    "plan": lambda o: _j(o.plan),
    "owner": lambda o: o.owner,
    "epoch": lambda o: o.epoch,
    "heartbeat": lambda o: iso(o.heartbeat),
    "events": lambda o: _j(o.events),
    "warnings": lambda o: _j(o.warnings),
}


_OCC_DOCS = frozenset({"operation_params", "error", "resource_changes", "changed_info", "changed_ext_connectivity",
                       "plan", "events", "warnings"})  # as _INSTANCE_DOCS


def op_occ_to_dict(o: OpOcc, keys: Iterable[str] | None = None, *, copied: bool = True) -> Row:
    """The occurrence's JSON body (`keys`: only these keys of it; `copied`: as `instance_to_dict`)."""
    if keys is None:
        return {k: f(o) for k, f in OCC_BODY.items()}
    if copied:
        return {k: OCC_BODY[k](o) for k in keys}
    return {k: getattr(o, k) if k in _OCC_DOCS else OCC_BODY[k](o) for k in keys}


def op_occ_from_dict(d: Mapping[str, Any]) -> OpOcc:
    return OpOcc(
        id=d["id"],
        vnf_instance_id=d["vnf_instance_id"],
        operation=LcmOperation(d["operation"]),
        operation_params=d.get("operation_params") or {},
        operation_state=OpState(d.get("operation_state", OpState.STARTING.value)),
        state_entered_time=_dt(d.get("state_entered_time")),
        start_time=_dt(d.get("start_time")),
        is_automatic_invocation=bool(d.get("is_automatic_invocation", False)),
        is_cancel_pending=bool(d.get("is_cancel_pending", False)),
        cancel_mode=d.get("cancel_mode"),
        error=d.get("error"),
        resource_changes=d.get("resource_changes") or {},
        changed_info=d.get("changed_info"),
        changed_ext_connectivity=d.get("changed_ext_connectivity"),
        stage=d.get("stage") or "",
        plan=d.get("plan") or {},
        owner=d.get("owner"),
        epoch=int(d.get("epoch") or 0),
        heartbeat=parse_dt(d.get("heartbeat")),
        events=d.get("events") or [],
        warnings=list(d.get("warnings") or []),
    )


def op_occ_to_row(o: OpOcc) -> Row:
    return {
        "id": o.id,
        "vnf_instance_id": o.vnf_instance_id,
        "operation": o.operation.value,
        "operation_state": o.operation_state.value,
        "state_entered_time": as_utc(o.state_entered_time),
        "start_time": as_utc(o.start_time),
        "owner": o.owner,
        "epoch": o.epoch,
        "heartbeat": None if o.heartbeat is None else as_utc(o.heartbeat),
        "cancel_mode": o.cancel_mode if o.is_cancel_pending else None,
        "body": op_occ_to_dict(o),
    }


def op_occ_from_row(row: Mapping[str, Any]) -> OpOcc:
    occ = op_occ_from_dict(row["body"])
    if "owner" in row:  # columns are authoritative (claim / heartbeat update them)
        occ.owner = row["owner"]
    if "epoch" in row:
        occ.epoch = int(row["epoch"] or 0)
    if "heartbeat" in row:
        occ.heartbeat = row["heartbeat"]
    return occ


# ----------------------------------------------------------------------------- subscriptions
def subscription_to_dict(s: Subscription) -> Row:
    return {
        "id": s.id,
        "callback_uri": s.callback_uri,
        "filter": _j(s.filter),
        "authentication": _j(s.authentication),
        "kind": s.kind,
        **({"verbosity": s.verbosity} if s.verbosity else {}),
        "created_at": iso(s.created_at),
    }


def subscription_from_dict(d: Mapping[str, Any]) -> Subscription:
    return Subscription(
        id=d["id"],
        callback_uri=d["callback_uri"],
        filter=d.get("filter") or {},
        authentication=d.get("authentication"),
        kind=d.get("kind") or "vnflcm",
        verbosity=d.get("verbosity"),
        created_at=_dt(d.get("created_at")),
    )


def subscription_to_row(s: Subscription) -> Row:
    return {
        "id": s.id,
        "kind": s.kind,
        "callback_uri": s.callback_uri,
        "created_at": as_utc(s.created_at),
        "body": subscription_to_dict(s),
    }


def subscription_from_row(row: Mapping[str, Any]) -> Subscription:
    return subscription_from_dict(row["body"])


# ----------------------------------------------------------------------------- VIMs
def vim_to_dict(v: Vim) -> Row:
    return {
        "id": v.id,
        "vim_type": v.vim_type,
        "name": v.name,
        "access_info": _j(v.access_info),
        "interface_info": _j(v.interface_info),
        "is_default": v.is_default,
        "extra": _j(v.extra),
        "created_at": iso(v.created_at),
    }


def vim_from_dict(d: Mapping[str, Any]) -> Vim:
    return Vim(
        id=d["id"],
        vim_type=d["vim_type"],
        name=d["name"],
        access_info=d.get("access_info") or {},
        interface_info=d.get("interface_info") or {},
        is_default=bool(d.get("is_default", False)),
        extra=d.get("extra") or {},
        created_at=_dt(d.get("created_at")),
    )


def vim_to_row(v: Vim) -> Row:
    return {
        "id": v.id,
        "vim_type": v.vim_type,
        "name": v.name,
        "is_default": v.is_default,
        "created_at": as_utc(v.created_at),
        "body": vim_to_dict(v),
    }


def vim_from_row(row: Mapping[str, Any]) -> Vim:
    return vim_from_dict(row["body"])


# ----------------------------------------------------------------------------- secrets at rest
def sealing(to_row: Callable[[E], Row], box: Sealer | None) -> Callable[[E], Row]:
    """`to_row` whose JSON body has its secrets encrypted by `box` (none: unchanged)."""
    if box is None:
        return to_row

    def sealed(entity: E) -> Row:
        row = to_row(entity)
        row["body"] = box.seal(row["body"], scope=str(row["id"]))
        return row

    return sealed


def unsealing(from_row: Callable[[Mapping[str, Any]], E], box: Sealer | None) -> Callable[[Mapping[str, Any]], E]:
    """`from_row` that decrypts the secrets of the JSON body first (none: unchanged)."""
    if box is None:
        return from_row

    def unsealed(row: Mapping[str, Any]) -> E:
        return from_row({**row, "body": box.unseal(row["body"])})

    return unsealed
