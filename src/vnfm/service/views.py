"""SOL003/SOL005 v2.6.1 representations of the core's entities (JSON-ready dicts).

Used by the API and by notifications, so both say exactly the same thing. Secrets are dropped here:
vimConnectionInfo.accessInfo passwords and subscription authentication never leave the VNFM.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from vnfm.domain import lcm
from vnfm.domain.alarms import FM
from vnfm.domain.model import (
    InstantiationState,
    OnboardingState,
    OpOcc,
    OpState,
    Subscription,
    Vim,
    VnfInstance,
    VnfPackage,
)
from vnfm.domain.notifications import LCM, PKGM
from vnfm.domain.resources import CpResource, Vnfc
from vnfm.domain.secrets import is_secret_key, mask_url_credentials
from vnfm.service.vims import reported_type


def ts(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


# Attributes whose values are the client's own data (KeyValuePairs and the like): kept as given
# (a null inside is the client's), only their secrets masked.
USER_DATA = frozenset({"additionalParams", "userDefinedData", "extensions", "vnfConfigurableProperties",
                       "operationParams", "userMetadata", "metadata", "filter", "interfaceInfo",
                       "accessInfo", "extra"})


def prune(value: Any) -> Any:
    """`value` without null attributes, at any depth except inside USER_DATA (SOL013: an absent
    optional attribute is left out, never sent as null)."""
    if isinstance(value, dict):
        return {k: (v if k in USER_DATA else prune(v)) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def masked(value: Any) -> Any:
    """A copy of `value` fit for API output: values of secret-looking keys masked, and the
    credentials of every URL in any string (`http://user:pw@proxy:3128` -> `http://***@proxy:3128`)."""
    return _clean(value, False)


def _clean(value: Any, pruning: bool) -> Any:
    """`masked(prune(value))` (`pruning`) or `masked(value)` in one walk that copies only the
    containers: the API's lists build thousands of documents (issue 24 item 4)."""
    if isinstance(value, str):
        return mask_url_credentials(value) if "@" in value else value
    if isinstance(value, list):
        return [_clean(v, pruning) if isinstance(v, _NESTED) or (isinstance(v, str) and "@" in v) else v
                for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for k, v in value.items():
        if v is None:
            if not pruning:
                out[k] = v
        elif v != "" and is_secret_key(k if isinstance(k, str) else str(k)):
            out[k] = "***"
        elif isinstance(v, _NESTED):
            out[k] = _clean(v, pruning and k not in USER_DATA)
        elif isinstance(v, str) and "@" in v:
            out[k] = mask_url_credentials(v)
        else:
            out[k] = v
    return out


_NESTED = (dict, list)


def _output(body: dict[str, Any]) -> dict[str, Any]:
    return dict(_clean(body, True))


# ----------------------------------------------------------------------------- SOL005
def _artifact_info(art: dict[str, Any]) -> dict[str, Any]:
    """VnfPackageArtifactInfo; an artifact TOSCA.meta lists without Algorithm/Hash has no checksum."""
    checksum = art.get("checksum")
    if isinstance(checksum, dict) and not (checksum.get("algorithm") and checksum.get("hash")):
        return {k: v for k, v in art.items() if k != "checksum"}
    return art


def package_info(pkg: VnfPackage) -> dict[str, Any]:
    onboarded = pkg.onboarding_state == OnboardingState.ONBOARDED
    links: dict[str, Any] = {
        "self": {"href": f"{PKGM}/vnf_packages/{pkg.id}"},
        "packageContent": {"href": f"{PKGM}/vnf_packages/{pkg.id}/package_content"},
    }
    body: dict[str, Any] = {
        "id": pkg.id,
        "vnfdId": pkg.vnfd_id,
        "vnfProvider": pkg.vnf_provider,
        "vnfProductName": pkg.vnf_product_name,
        "vnfSoftwareVersion": pkg.vnf_software_version,
        "vnfdVersion": pkg.vnfd_version,
        "onboardingState": pkg.onboarding_state.value,
        "operationalState": pkg.operational_state.value,
        "usageState": pkg.usage_state.value,
        "userDefinedData": pkg.user_defined_data,
        "_links": links,
    }
    if onboarded:  # SOL005 9.5.2.5: these "shall not be present before the content is on-boarded"
        links["vnfd"] = {"href": f"{PKGM}/vnf_packages/{pkg.id}/vnfd"}
        body["checksum"] = pkg.checksum or None
        if pkg.software_images:
            body["softwareImages"] = pkg.software_images
        if pkg.additional_artifacts:
            body["additionalArtifacts"] = [_artifact_info(a) for a in pkg.additional_artifacts]
    if pkg.onboarding_failure_details:
        body["onboardingFailureDetails"] = pkg.onboarding_failure_details
    return _output(body)


def package_notification(pkg: VnfPackage, change_type: str | None = None) -> dict[str, Any]:
    """SOL005 9.5.2.8 VnfPackageOnboardingNotification (change_type None) or 9.5.2.9
    VnfPackageChangeNotification (OP_STATE_CHANGE / PKG_DELETE); the notifier adds id,
    subscriptionId, timeStamp and _links.subscription."""
    body: dict[str, Any] = {
        "notificationType": "VnfPackageChangeNotification" if change_type else "VnfPackageOnboardingNotification",
        "vnfPkgId": pkg.id,
        "vnfdId": pkg.vnfd_id,
        "_links": {"vnfPackage": {"href": f"{PKGM}/vnf_packages/{pkg.id}"}},
    }
    if change_type:
        body["changeType"] = change_type
    if change_type == "OP_STATE_CHANGE":
        body["operationalState"] = pkg.operational_state.value
    return body


# ----------------------------------------------------------------------------- SOL003
def vim_connection_info(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """VimConnectionInfo as reported: secrets masked, vimType in the seeds' spelling (`kubernetes`,
    `openstack`) whichever spelling was given."""
    out = []
    for e in entries:
        entry = dict(e)
        if isinstance(entry.get("vimType"), str):
            entry["vimType"] = reported_type(entry["vimType"])
        out.append(masked(entry))
    return out


def _cp_protocol_info(cp: CpResource) -> list[dict[str, Any]]:
    return [
        {
            "layerProtocol": "IP_OVER_ETHERNET",
            "ipOverEthernet": {
                "macAddress": cp.mac_address,
                "ipAddresses": [
                    {"type": "IPV6" if ":" in a else "IPV4", "addresses": [a], "isDynamic": True}
                    for a in cp.ip_addresses
                ],
            },
        }
    ]


def _ext_cp_id(cp: CpResource) -> str:
    return f"{cp.id}-ext"


def _port(cp: CpResource, vim_conn: str | None) -> dict[str, Any]:
    return {
        "id": cp.port_id,
        "resourceHandle": {"vimConnectionId": vim_conn, "resourceId": cp.port_id,
                           "vimLevelResourceType": "OS::Neutron::Port"},
        "cpInstanceId": cp.id,
    }


class _Collected:
    """What the walk over the VNFCs gathers for the other lists of InstantiatedVnfInfo."""

    def __init__(self) -> None:
        self.ext_cps: list[dict[str, Any]] = []
        self.storages: list[dict[str, Any]] = []
        self.vl_ports: dict[str, list[dict[str, Any]]] = {}
        self.ext_vl_ports: dict[str, list[dict[str, Any]]] = {}


def _vnfc_cp(cp: CpResource, vim_conn: str | None, out: _Collected) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": cp.id, "cpdId": cp.cpd_id, "vnfLinkPortId": cp.port_id,
                             "cpProtocolInfo": _cp_protocol_info(cp)}
    if cp.virtual_link_id is None:  # an external CP
        entry["vnfExtCpId"] = _ext_cp_id(cp)
        out.ext_cps.append({"id": _ext_cp_id(cp), "cpdId": cp.cpd_id, "cpProtocolInfo": _cp_protocol_info(cp),
                            "extLinkPortId": cp.port_id if cp.ext_virtual_link_id else None,
                            "associatedVnfcCpId": cp.id})
        if cp.ext_virtual_link_id:
            out.ext_vl_ports.setdefault(cp.ext_virtual_link_id, []).append(_port(cp, vim_conn))
    else:
        out.vl_ports.setdefault(str(cp.virtual_link_id), []).append(_port(cp, vim_conn))
    if cp.floating_ip:
        entry["metadata"] = {"floatingIp": cp.floating_ip}
    return entry


def _vnfc_resource(v: Vnfc, vim_conn: str | None, out: _Collected) -> dict[str, Any]:
    for s in v.storages:
        out.storages.append({
            "id": s.id,
            "virtualStorageDescId": s.virtual_storage_desc_id,
            "storageResource": {"vimConnectionId": vim_conn, "resourceId": s.volume_id,
                                "vimLevelResourceType": "OS::Cinder::Volume"},
        })
    return {
        "id": v.id,
        "vduId": v.vdu_id,
        "computeResource": {"vimConnectionId": vim_conn, "resourceId": v.server_id,
                            "vimLevelResourceType": v.resource_type},
        "storageResourceIds": [s.id for s in v.storages],
        "vnfcCpInfo": [_vnfc_cp(cp, vim_conn, out) for cp in v.cps],
        "metadata": _drop_none({"name": v.name, "createdAt": v.created_at}),
    }


def instantiated_vnf_info(inst: VnfInstance) -> dict[str, Any] | None:
    if inst.instantiation_state != InstantiationState.INSTANTIATED:
        return None
    vim_conn = inst.vim_connection_id
    out = _Collected()
    vnfcs = [_vnfc_resource(v, vim_conn, out) for v in sorted(inst.resources.vnfcs, key=lambda x: (x.vdu_id, x.seq))]
    vls = [
        {
            "id": vl.id,
            "vnfVirtualLinkDescId": vl.vld_id,
            "networkResource": {"vimConnectionId": vim_conn, "resourceId": vl.network_id,
                                "vimLevelResourceType": "OS::Neutron::Net"},
            "vnfLinkPorts": out.vl_ports.get(vl.vld_id, []),
        }
        for vl in inst.resources.virtual_links
    ]
    ext_vls = [
        {
            "id": ev.get("id"),
            # every ResourceHandle names its VIM connection: the request's, else the instance's VIM
            "resourceHandle": {"vimConnectionId": ev.get("vimConnectionId") or vim_conn,
                               "resourceId": ev.get("resourceId")},
            "extLinkPorts": out.ext_vl_ports.get(str(ev.get("id")), []),
        }
        for ev in inst.ext_virtual_links
    ]
    info: dict[str, Any] = {
        "flavourId": inst.flavour_id,
        "vnfState": inst.vnf_state.value,
        "scaleStatus": [{"aspectId": a, "scaleLevel": lvl} for a, lvl in sorted(inst.scale_levels.items())],
        "extCpInfo": out.ext_cps,
        "extVirtualLinkInfo": ext_vls,
        "extManagedVirtualLinkInfo": inst.ext_managed_virtual_links,
        "vnfcResourceInfo": vnfcs,
        "vnfVirtualLinkResourceInfo": vls,
        "virtualStorageResourceInfo": out.storages,
        "vnfcInfo": [
            {"id": f"{v['id']}-info", "vduId": v["vduId"], "vnfcResourceInfoId": v["id"], "vnfcState": "STARTED"}
            for v in vnfcs
        ],
        "additionalParams": inst.additional_params,
        "instantiationLevelId": inst.instantiation_level_id,
    }
    return info


# SOL003 5.5.2.2 VnfInstance._links: only the tasks this VNFM implements are advertised
# (scaleToLevel, changeFlavour, operate and changeExtConn answer 404 until they exist).
INSTANTIATED_TASKS = ("terminate", "scale", "heal")


def instance_info(inst: VnfInstance, omit: Collection[str] = ()) -> dict[str, Any]:
    """VnfInstance; `omit`: top-level attributes not to build (a list that shows none of them)."""
    base = f"{LCM}/vnf_instances/{inst.id}"
    links: dict[str, Any] = {"self": {"href": base}}
    if inst.instantiation_state == InstantiationState.NOT_INSTANTIATED:
        links["instantiate"] = {"href": f"{base}/instantiate"}
    else:
        for task in INSTANTIATED_TASKS:
            links[task] = {"href": f"{base}/{task}"}
    body: dict[str, Any] = {
        "id": inst.id,
        "vnfInstanceName": inst.vnf_instance_name,
        "vnfInstanceDescription": inst.vnf_instance_description,
        "vnfdId": inst.vnfd_id,
        "vnfProvider": inst.vnf_provider,
        "vnfProductName": inst.vnf_product_name,
        "vnfSoftwareVersion": inst.vnf_software_version,
        "vnfdVersion": inst.vnfd_version,
        "vnfPkgId": inst.vnf_pkg_id,
        "vnfConfigurableProperties": inst.vnf_configurable_properties or None,
        "vimConnectionInfo": None if "vimConnectionInfo" in omit else vim_connection_info(inst.vim_connection_info),
        "instantiationState": inst.instantiation_state.value,
        "instantiatedVnfInfo": None if "instantiatedVnfInfo" in omit else instantiated_vnf_info(inst),
        "metadata": inst.metadata or None,
        "extensions": inst.extensions or None,
        "_links": links,
    }
    return _output({k: v for k, v in body.items() if k not in omit} if omit else body)


def op_occ_info(occ: OpOcc, omit: Collection[str] = ()) -> dict[str, Any]:
    """VnfLcmOpOcc; `omit`: top-level attributes left out (a list that shows none of them: its
    default leaves out operationParams, error and the changes, where the secrets and bulk are)."""
    base = f"{LCM}/vnf_lcm_op_occs/{occ.id}"
    links: dict[str, Any] = {
        "self": {"href": base},
        "vnfInstance": {"href": f"{LCM}/vnf_instances/{occ.vnf_instance_id}"},
    }
    if occ.operation_state == OpState.FAILED_TEMP:
        for task in ("retry", "rollback", "fail"):
            links[task] = {"href": f"{base}/{task}"}
    if occ.operation_state in lcm.CANCELLABLE:
        links["cancel"] = {"href": f"{base}/cancel"}
    body: dict[str, Any] = {
        "id": occ.id,
        "operationState": occ.operation_state.value,
        "stateEnteredTime": ts(occ.state_entered_time),
        "startTime": ts(occ.start_time),
        "vnfInstanceId": occ.vnf_instance_id,
        "operation": occ.operation.value,
        "isAutomaticInvocation": occ.is_automatic_invocation,
        "operationParams": occ.operation_params,
        "isCancelPending": occ.is_cancel_pending,
        "cancelMode": occ.cancel_mode,
        "error": occ.error,
        "resourceChanges": occ.resource_changes or None,
        "changedInfo": occ.changed_info,
        "changedExtConnectivity": occ.changed_ext_connectivity,
        "_links": links,
    }
    return _output({k: v for k, v in body.items() if k not in omit} if omit else body)


def subscription_info(sub: Subscription) -> dict[str, Any]:
    prefix = {"vnflcm": LCM, "vnffm": FM}.get(sub.kind, PKGM)
    return _output({
        "id": sub.id,
        "filter": sub.filter or None,
        "callbackUri": sub.callback_uri,
        "_links": {"self": {"href": f"{prefix}/subscriptions/{sub.id}"}},
    })


def vim_info(vim: Vim) -> dict[str, Any]:
    return _output({
        "id": vim.id,
        "name": vim.name,
        "vimType": vim.vim_type,
        "isDefault": vim.is_default,
        "interfaceInfo": vim.interface_info,
        "accessInfo": vim.access_info,
        "extra": vim.extra,
        "createdAt": ts(vim.created_at),
    })


def lcm_notification(occ: OpOcc, notification_status: str) -> dict[str, Any]:
    base = f"{LCM}/vnf_lcm_op_occs/{occ.id}"
    body: dict[str, Any] = {
        "notificationType": "VnfLcmOperationOccurrenceNotification",
        "notificationStatus": notification_status,
        "operationState": occ.operation_state.value,
        "vnfInstanceId": occ.vnf_instance_id,
        "operation": occ.operation.value,
        "isAutomaticInvocation": occ.is_automatic_invocation,
        "vnfLcmOpOccId": occ.id,
        "_links": {"vnfInstance": {"href": f"{LCM}/vnf_instances/{occ.vnf_instance_id}"},
                   "vnfLcmOpOcc": {"href": base}},
    }
    if notification_status == "RESULT":
        for key in ("affectedVnfcs", "affectedVirtualLinks", "affectedVirtualStorages"):
            if occ.resource_changes.get(key):
                body[key] = occ.resource_changes[key]
        if occ.changed_info:
            body["changedInfo"] = occ.changed_info
        if occ.error:
            body["error"] = occ.error
    return _output(body)  # no nulls (a VNFC that never got a server), no URL credentials


def identifier_notification(kind: str, instance_id: str) -> dict[str, Any]:
    return {
        "notificationType": kind,  # VnfIdentifierCreationNotification / VnfIdentifierDeletionNotification
        "vnfInstanceId": instance_id,
        "_links": {"vnfInstance": {"href": f"{LCM}/vnf_instances/{instance_id}"}},
    }
