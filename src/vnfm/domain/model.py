"""Entities of the core: VNF packages, VNF instances, LCM operation occurrences, subscriptions, VIMs.

Field names follow SOL003/SOL005 v2.6.1 (in snake_case); the API adapter maps them to the wire.
Sub-structures that the standard defines as free-form or deeply nested (vimConnectionInfo,
extVirtualLinks, ProblemDetails) are kept as JSON-ready dicts with the standard's own keys.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from vnfm.domain.access import DEFAULT_TENANT
from vnfm.domain.resources import VnfResources


def new_id() -> str:
    return str(uuid.uuid4())


def utcnow() -> datetime:
    return datetime.now(UTC)


# --- SOL005 package states -------------------------------------------------------------------
class OnboardingState(StrEnum):
    CREATED = "CREATED"
    UPLOADING = "UPLOADING"
    PROCESSING = "PROCESSING"
    ONBOARDED = "ONBOARDED"


class OperationalState(StrEnum):
    ENABLED = "ENABLED"
    DISABLED = "DISABLED"


class UsageState(StrEnum):
    IN_USE = "IN_USE"
    NOT_IN_USE = "NOT_IN_USE"


# --- SOL003 instance / occurrence states -----------------------------------------------------
class InstantiationState(StrEnum):
    NOT_INSTANTIATED = "NOT_INSTANTIATED"
    INSTANTIATED = "INSTANTIATED"


class VnfState(StrEnum):
    STARTED = "STARTED"
    STOPPED = "STOPPED"


class LcmOperation(StrEnum):
    INSTANTIATE = "INSTANTIATE"
    SCALE = "SCALE"
    SCALE_TO_LEVEL = "SCALE_TO_LEVEL"
    CHANGE_FLAVOUR = "CHANGE_FLAVOUR"
    TERMINATE = "TERMINATE"
    HEAL = "HEAL"
    OPERATE = "OPERATE"
    CHANGE_EXT_CONN = "CHANGE_EXT_CONN"
    MODIFY_INFO = "MODIFY_INFO"
    CHANGE_VNFPKG = "CHANGE_VNFPKG"


class OpState(StrEnum):
    STARTING = "STARTING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED_TEMP = "FAILED_TEMP"
    FAILED = "FAILED"
    ROLLING_BACK = "ROLLING_BACK"
    ROLLED_BACK = "ROLLED_BACK"


FINAL_OP_STATES = frozenset({OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK})
# What a list of occurrences that only renders their API view leaves out (`page(..., omit=...)`):
# the engine's plan and progress log, which no VnfLcmOpOcc shows. Such occurrences are never saved.
OP_OCC_ENGINE_PRIVATE = "enginePrivate"


@dataclass
class VnfPackage:
    id: str = field(default_factory=new_id)
    onboarding_state: OnboardingState = OnboardingState.CREATED
    operational_state: OperationalState = OperationalState.DISABLED
    usage_state: UsageState = UsageState.NOT_IN_USE
    user_defined_data: dict[str, Any] = field(default_factory=dict)
    vnfd_id: str | None = None
    vnf_provider: str | None = None
    vnf_product_name: str | None = None
    vnf_software_version: str | None = None
    vnfd_version: str | None = None
    checksum: dict[str, str] | None = None  # {"algorithm": "SHA-512", "hash": "..."}
    software_images: list[dict[str, Any]] = field(default_factory=list)
    additional_artifacts: list[dict[str, Any]] = field(default_factory=list)
    onboarding_failure_details: dict[str, Any] | None = None
    created_at: datetime = field(default_factory=utcnow)
    tenant: str = DEFAULT_TENANT  # who owns it (a column, never in the API body)


@dataclass
class VnfInstance:
    id: str = field(default_factory=new_id)
    vnfd_id: str = ""
    vnf_pkg_id: str = ""
    vnf_provider: str = ""
    vnf_product_name: str = ""
    vnf_software_version: str = ""
    vnfd_version: str = ""
    vnf_instance_name: str | None = None
    vnf_instance_description: str | None = None
    instantiation_state: InstantiationState = InstantiationState.NOT_INSTANTIATED
    vim_connection_info: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    extensions: dict[str, Any] = field(default_factory=dict)
    vnf_configurable_properties: dict[str, Any] = field(default_factory=dict)
    # --- instantiated state (meaningful when INSTANTIATED) ---
    flavour_id: str | None = None
    instantiation_level_id: str | None = None
    vnf_state: VnfState = VnfState.STARTED
    scale_levels: dict[str, int] = field(default_factory=dict)
    ext_virtual_links: list[dict[str, Any]] = field(default_factory=list)
    ext_managed_virtual_links: list[dict[str, Any]] = field(default_factory=list)
    additional_params: dict[str, Any] = field(default_factory=dict)
    resources: VnfResources = field(default_factory=VnfResources)
    # Which VIM the resources live on (an id of the VIM registry); an entry of vim_connection_info names it.
    vim_id: str | None = None
    # Per management-driver private state (e.g. pinned host keys, cluster facts), keyed by driver.
    driver_state: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The occurrence that currently holds this instance (one operation at a time).
    lock_op_id: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    tenant: str = DEFAULT_TENANT  # who owns it (a column, never in the API body)


    @property
    def vim_connection_id(self) -> str | None:
        """The id of the vimConnectionInfo entry that names the instance's VIM: what every
        ResourceHandle.vimConnectionId says (an instance of an earlier release may have no such
        entry: then the VIM's id)."""
        for conn in self.vim_connection_info:
            if self.vim_id and conn.get("vimId") == self.vim_id and conn.get("id"):
                return str(conn["id"])
        return self.vim_id


@dataclass
class OpOcc:
    """A VnfLcmOpOcc. `stage` and `plan` are the engine's private checkpoint for retry/rollback."""

    vnf_instance_id: str
    operation: LcmOperation
    operation_params: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)
    operation_state: OpState = OpState.STARTING
    state_entered_time: datetime = field(default_factory=utcnow)
    start_time: datetime = field(default_factory=utcnow)
    is_automatic_invocation: bool = False
    is_cancel_pending: bool = False
    cancel_mode: str | None = None
    error: dict[str, Any] | None = None
    resource_changes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    changed_info: dict[str, Any] | None = None
    changed_ext_connectivity: list[dict[str, Any]] | None = None
    # --- engine private ---
    stage: str = ""  # last completed stage, for retry to resume from
    plan: dict[str, Any] = field(default_factory=dict)  # decisions taken once (e.g. VNFCs to remove)
    owner: str | None = None  # worker that runs it
    epoch: int = 0  # fencing token: bumped whenever the occurrence gets an owner (claim, retry, rollback)
    heartbeat: datetime | None = None
    events: list[dict[str, Any]] = field(default_factory=list)  # progress log (no secrets)
    # What the request asked that was not done as asked (e.g. an unregistered vimId not used): kept, shown
    warnings: list[str] = field(default_factory=list)
    tenant: str = DEFAULT_TENANT  # the instance's

    @property
    def is_final(self) -> bool:
        return self.operation_state in FINAL_OP_STATES


@dataclass
class Subscription:
    callback_uri: str
    filter: dict[str, Any] = field(default_factory=dict)
    authentication: dict[str, Any] | None = None  # never returned by the API
    id: str = field(default_factory=new_id)
    kind: str = "vnflcm"  # "vnflcm" (SOL003), "vnflcm2" (SOL003 v3.3.1, /vnflcm/v2) or "vnfpkgm" (SOL005)
    verbosity: str | None = None  # v2 only: FULL or SHORT notifications (SOL003 v3.3.1 LccnSubscription)
    created_at: datetime = field(default_factory=utcnow)
    tenant: str = DEFAULT_TENANT  # who owns it (a column, never in the API body)


@dataclass
class Vim:
    """A registered VIM: the simulated cloud, an OpenStack cloud, or a Kubernetes cluster."""

    vim_type: str  # "simulator", "openstack" (ETSINFV.OPENSTACK_KEYSTONE.v_2), "kubernetes"
    name: str
    id: str = field(default_factory=new_id)
    access_info: dict[str, Any] = field(default_factory=dict)  # secrets encrypted by the store
    interface_info: dict[str, Any] = field(default_factory=dict)
    is_default: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utcnow)
    tenant: str = DEFAULT_TENANT  # who owns it (a column, never in the API body)
