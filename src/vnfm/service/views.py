"""SOL003/SOL005 v2.6.1 representations of the core's entities (JSON-ready dicts).

Used by the API and by notifications, so both say exactly the same thing. Secrets are dropped here:
vimConnectionInfo.accessInfo passwords and subscription authentication never leave the VNFM.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from vnfm.domain import lcm
from vnfm.domain.model import (
    InstantiationState,
    OpOcc,
    OpState,
    Subscription,
    Vim,
    VnfInstance,
    VnfPackage,
)
from vnfm.domain.notifications import LCM, PKGM
from vnfm.domain.resources import CpResource, Vnfc
from vnfm.domain.secrets import mask_secrets


def ts(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


# ----------------------------------------------------------------------------- SOL005
def package_info(pkg: VnfPackage) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": pkg.id,
        "vnfdId": pkg.vnfd_id,
        "vnfProvider": pkg.vnf_provider,
        "vnfProductName": pkg.vnf_product_name,
        "vnfSoftwareVersion": pkg.vnf_software_version,
        "vnfdVersion": pkg.vnfd_version,
        "checksum": pkg.checksum,
        "softwareImages": pkg.software_images,
        "additionalArtifacts": pkg.additional_artifacts,
        "onboardingState": pkg.onboarding_state.value,
        "operationalState": pkg.operational_state.value,
        "usageState": pkg.usage_state.value,
        "userDefinedData": pkg.user_defined_data,
        "_links": {
            "self": {"href": f"{PKGM}/vnf_packages/{pkg.id}"},
            "vnfd": {"href": f"{PKGM}/vnf_packages/{pkg.id}/vnfd"},
            "packageContent": {"href": f"{PKGM}/vnf_packages/{pkg.id}/package_content"},
        },
    }
    if pkg.onboarding_failure_details:
        body["onboardingFailureDetails"] = pkg.onboarding_failure_details
    return _drop_none(body)


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
    return [mask_secrets(e) for e in entries]


def _cp_protocol_info(cp: CpResource) -> list[dict[str, Any]]:
    return [
        {
            "layerProtocol": "IP_OVER_ETHERNET",
            "ipOverEthernet": _drop_none(
                {
                    "macAddress": cp.mac_address,
                    "ipAddresses": [
                        {"type": "IPV6" if ":" in a else "IPV4", "addresses": [a], "isDynamic": True}
                        for a in cp.ip_addresses
                    ],
                }
            ),
        }
    ]


def _ext_cp_id(vnfc: Vnfc, cp: CpResource) -> str:
    return f"{cp.id}-ext"


def instantiated_vnf_info(inst: VnfInstance) -> dict[str, Any] | None:
    if inst.instantiation_state != InstantiationState.INSTANTIATED:
        return None
    vim_conn = inst.vim_id
    res = inst.resources
    ext_cps: list[dict[str, Any]] = []
    vnfc_infos: list[dict[str, Any]] = []
    storages: list[dict[str, Any]] = []
    vl_ports: dict[str, list[dict[str, Any]]] = {}
    ext_vl_ports: dict[str, list[dict[str, Any]]] = {}
    for v in sorted(res.vnfcs, key=lambda x: (x.vdu_id, x.seq)):
        cps = []
        for cp in v.cps:
            is_ext = cp.virtual_link_id is None
            entry: dict[str, Any] = {
                "id": cp.id,
                "cpdId": cp.cpd_id,
                "vnfLinkPortId": cp.port_id,
                "cpProtocolInfo": _cp_protocol_info(cp),
            }
            if is_ext:
                entry["vnfExtCpId"] = _ext_cp_id(v, cp)
                ext_cps.append(
                    {
                        "id": _ext_cp_id(v, cp),
                        "cpdId": cp.cpd_id,
                        "cpProtocolInfo": _cp_protocol_info(cp),
                        "extLinkPortId": cp.port_id if cp.ext_virtual_link_id else None,
                        "associatedVnfcCpId": cp.id,
                    }
                )
                if cp.ext_virtual_link_id:
                    ext_vl_ports.setdefault(cp.ext_virtual_link_id, []).append(
                        {
                            "id": cp.port_id,
                            "resourceHandle": {"resourceId": cp.port_id, "vimLevelResourceType": "OS::Neutron::Port"},
                            "cpInstanceId": cp.id,
                        }
                    )
            else:
                vl_ports.setdefault(str(cp.virtual_link_id), []).append(
                    {
                        "id": cp.port_id,
                        "resourceHandle": {"resourceId": cp.port_id, "vimLevelResourceType": "OS::Neutron::Port"},
                        "cpInstanceId": cp.id,
                    }
                )
            if cp.floating_ip:
                entry["metadata"] = {"floatingIp": cp.floating_ip}
            cps.append(_drop_none(entry))
        vnfc_infos.append(
            {
                "id": v.id,
                "vduId": v.vdu_id,
                "computeResource": {
                    "vimConnectionId": vim_conn,
                    "resourceId": v.server_id,
                    "vimLevelResourceType": v.resource_type,
                },
                "storageResourceIds": [s.id for s in v.storages],
                "vnfcCpInfo": cps,
                "metadata": {"name": v.name, "createdAt": v.created_at},
            }
        )
        for s in v.storages:
            storages.append(
                {
                    "id": s.id,
                    "virtualStorageDescId": s.virtual_storage_desc_id,
                    "storageResource": {
                        "vimConnectionId": vim_conn,
                        "resourceId": s.volume_id,
                        "vimLevelResourceType": "OS::Cinder::Volume",
                    },
                }
            )
    vls = [
        {
            "id": vl.id,
            "vnfVirtualLinkDescId": vl.vld_id,
            "networkResource": {
                "vimConnectionId": vim_conn,
                "resourceId": vl.network_id,
                "vimLevelResourceType": "OS::Neutron::Net",
            },
            "vnfLinkPorts": vl_ports.get(vl.vld_id, []),
        }
        for vl in res.virtual_links
    ]
    ext_vls = [
        {
            "id": ev.get("id"),
            "resourceHandle": _drop_none(
                {"vimConnectionId": ev.get("vimConnectionId"), "resourceId": ev.get("resourceId")}
            ),
            "extLinkPorts": ext_vl_ports.get(str(ev.get("id")), []),
        }
        for ev in inst.ext_virtual_links
    ]
    return {
        "flavourId": inst.flavour_id,
        "vnfState": inst.vnf_state.value,
        "scaleStatus": [{"aspectId": a, "scaleLevel": lvl} for a, lvl in sorted(inst.scale_levels.items())],
        "extCpInfo": ext_cps,
        "extVirtualLinkInfo": ext_vls,
        "extManagedVirtualLinkInfo": inst.ext_managed_virtual_links,
        "vnfcResourceInfo": vnfc_infos,
        "vnfVirtualLinkResourceInfo": vls,
        "virtualStorageResourceInfo": storages,
        "vnfcInfo": [
            {"id": f"{v['id']}-info", "vduId": v["vduId"], "vnfcResourceInfoId": v["id"], "vnfcState": "STARTED"}
            for v in vnfc_infos
        ],
        "additionalParams": mask_secrets(inst.additional_params),
        "instantiationLevelId": inst.instantiation_level_id,
    }


def instance_info(inst: VnfInstance) -> dict[str, Any]:
    base = f"{LCM}/vnf_instances/{inst.id}"
    links: dict[str, Any] = {"self": {"href": base}}
    if inst.instantiation_state == InstantiationState.NOT_INSTANTIATED:
        links["instantiate"] = {"href": f"{base}/instantiate"}
    else:
        for task in ("terminate", "scale", "scale_to_level", "heal", "change_ext_conn"):
            links[task if task != "scale_to_level" else "scaleToLevel"] = {"href": f"{base}/{task}"}
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
        "vimConnectionInfo": vim_connection_info(inst.vim_connection_info),
        "instantiationState": inst.instantiation_state.value,
        "instantiatedVnfInfo": instantiated_vnf_info(inst),
        "metadata": inst.metadata or None,
        "extensions": inst.extensions or None,
        "_links": links,
    }
    return _drop_none(body)


def op_occ_info(occ: OpOcc) -> dict[str, Any]:
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
        "grantId": None,
        "operation": occ.operation.value,
        "isAutomaticInvocation": occ.is_automatic_invocation,
        "operationParams": mask_secrets(occ.operation_params),
        "isCancelPending": occ.is_cancel_pending,
        "cancelMode": occ.cancel_mode,
        "error": occ.error,
        "resourceChanges": occ.resource_changes or None,
        "changedInfo": occ.changed_info,
        "changedExtConnectivity": occ.changed_ext_connectivity,
        "_links": links,
    }
    return _drop_none(body)


def subscription_info(sub: Subscription) -> dict[str, Any]:
    prefix = LCM if sub.kind == "vnflcm" else PKGM
    return {
        "id": sub.id,
        "filter": sub.filter,
        "callbackUri": sub.callback_uri,
        "_links": {"self": {"href": f"{prefix}/subscriptions/{sub.id}"}},
    }


def vim_info(vim: Vim) -> dict[str, Any]:
    return {
        "id": vim.id,
        "name": vim.name,
        "vimType": vim.vim_type,
        "isDefault": vim.is_default,
        "interfaceInfo": vim.interface_info,
        "accessInfo": mask_secrets(vim.access_info),
        "extra": mask_secrets(vim.extra),
        "createdAt": ts(vim.created_at),
    }


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
    return body


def identifier_notification(kind: str, instance_id: str) -> dict[str, Any]:
    return {
        "notificationType": kind,  # VnfIdentifierCreationNotification / VnfIdentifierDeletionNotification
        "vnfInstanceId": instance_id,
        "_links": {"vnfInstance": {"href": f"{LCM}/vnf_instances/{instance_id}"}},
    }
