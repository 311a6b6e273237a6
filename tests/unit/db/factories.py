"""Entities with every field set to a non-default value (to prove round trips keep them all)."""

from __future__ import annotations

import copy
import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from vnfm.domain.errors import Conflict
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
)
from vnfm.domain.resources import CpResource, StorageResource, VirtualLinkResource, Vnfc, VnfResources

# A non-UTC zone: values must come back as the same instant (in UTC).
CEST = timezone(timedelta(hours=2))
T0 = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)


def package(**kw: Any) -> VnfPackage:
    p = VnfPackage(
        onboarding_state=OnboardingState.ONBOARDED,
        operational_state=OperationalState.ENABLED,
        usage_state=UsageState.IN_USE,
        user_defined_data={"key": "value", "nested": {"list": [1, 2.5, None, True]}},
        vnfd_id="vnfd-1",
        vnf_provider="Company",
        vnf_product_name="Sample VNF",
        vnf_software_version="1.0",
        vnfd_version="2.0",
        checksum={"algorithm": "SHA-512", "hash": "ab" * 64},
        software_images=[{"id": "VDU1", "name": "img", "diskFormat": "qcow2"}],
        additional_artifacts=[{"artifactPath": "Scripts/install.sh", "metadata": {}}],
        onboarding_failure_details={"status": 422, "detail": "bad"},
        created_at=T0.astimezone(CEST),
    )
    return dataclasses.replace(p, **kw)


def resources() -> VnfResources:
    cp = CpResource(id="cp-1", cpd_id="CP1", port_id="port-1", ip_addresses=["10.0.0.5", "fd00::5"],
                    mac_address="fa:16:3e:00:00:01", floating_ip="192.0.2.10", network_id="net-1",
                    ext_virtual_link_id="ext-vl-1", virtual_link_id=None)
    cp2 = CpResource(id="cp-2", cpd_id="CP2", port_id="port-2", virtual_link_id="internalVL1")
    st = StorageResource(id="st-1", virtual_storage_desc_id="VirtualStorage", volume_id="vol-1", size_gb=1.5)
    v1 = Vnfc(id="vnfc-1", vdu_id="VDU1", server_id="srv-1", name="master-0", cps=[cp, cp2], storages=[st],
              resource_type="OS::Nova::Server", seq=1, created_at="2024-05-01T12:00:00Z",
              metadata={"flavor": "m1.small", "k8s": {"role": "master"}})
    v2 = Vnfc(id="vnfc-2", vdu_id="VDU2", server_id="srv-2", seq=2)
    vl = VirtualLinkResource(id="vl-1", vld_id="internalVL1", network_id="net-2", subnet_id="sub-2",
                             cidr="10.10.0.0/24")
    return VnfResources(vnfcs=[v1, v2], virtual_links=[vl], stack_id="stack-1")


def instance(**kw: Any) -> VnfInstance:
    i = VnfInstance(
        vnfd_id="vnfd-1",
        vnf_pkg_id="pkg-1",
        vnf_provider="Company",
        vnf_product_name="Sample VNF",
        vnf_software_version="1.0",
        vnfd_version="2.0",
        vnf_instance_name="name",
        vnf_instance_description="desc",
        instantiation_state=InstantiationState.INSTANTIATED,
        vim_connection_info=[{"id": "vim1", "vimType": "ETSINFV.OPENSTACK_KEYSTONE.v_2",
                              "accessInfo": {"region": "RegionOne"}}],
        metadata={"m": 1, "deep": {"a": [1, 2]}},
        extensions={"e": "x"},
        vnf_configurable_properties={"isAutoscaleEnabled": False},
        flavour_id="simple",
        instantiation_level_id="instantiation_level_1",
        vnf_state=VnfState.STOPPED,
        scale_levels={"master_instance": 0, "worker_instance": 2},
        ext_virtual_links=[{"id": "ext-vl-1", "resourceId": "net-ext", "extCps": []}],
        ext_managed_virtual_links=[{"id": "mvl", "vnfVirtualLinkDescId": "internalVL1", "resourceId": "n"}],
        additional_params={"k8s_cluster_installation_param": {"master_node": {"username": "ubuntu"}}},
        resources=resources(),
        vim_id="vim-1",
        driver_state={"kubernetes": {"host_keys": {"10.0.0.5": "ssh-ed25519 AAAA"}}},
        lock_op_id=None,
        created_at=T0,
    )
    return dataclasses.replace(i, **kw)


def op_occ(instance_id: str = "inst-1", **kw: Any) -> OpOcc:
    o = OpOcc(
        vnf_instance_id=instance_id,
        operation=LcmOperation.SCALE,
        operation_params={"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1},
        operation_state=OpState.FAILED_TEMP,
        state_entered_time=T0 + timedelta(seconds=5),
        start_time=T0,
        is_automatic_invocation=True,
        is_cancel_pending=True,
        cancel_mode="GRACEFUL",
        error={"status": 500, "detail": "boom"},
        resource_changes={"affectedVnfcs": [{"id": "vnfc-3", "changeType": "ADDED"}]},
        changed_info={"vnfInstanceName": "new"},
        changed_ext_connectivity=[{"id": "ext-vl-1"}],
        stage="infra",
        plan={"remove": ["vnfc-2"], "counts": {"VDU1": 1}},
        owner="worker-a",
        heartbeat=(T0 + timedelta(seconds=7)).astimezone(CEST),
        events=[{"t": "2024-05-01T12:30:16Z", "msg": "deploying"}],
    )
    return dataclasses.replace(o, **kw)


def subscription(**kw: Any) -> Subscription:
    s = Subscription(
        callback_uri="http://127.0.0.1:9999/notify",
        filter={"notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
                "operationStates": ["COMPLETED"]},
        authentication={"authType": ["BASIC"], "paramsBasic": {"userName": "u", "password": "p"}},
        kind="vnfpkgm",
        created_at=T0,
    )
    return dataclasses.replace(s, **kw)


def vim(**kw: Any) -> Vim:
    v = Vim(
        vim_type="kubernetes",
        name="kubernetes_vim",
        access_info={"bearer_token": "enc:xyz", "ssl_ca_cert": "-----BEGIN CERTIFICATE-----"},
        interface_info={"endpoint": "https://10.0.0.5:6443"},
        is_default=True,
        extra={"created_by": "driver"},
        created_at=T0,
    )
    return dataclasses.replace(v, **kw)


def take_lock(u: Any, inst_id: str, op_id: str) -> bool:
    """Take the instance's lock for `op_id` as an LCM request does (`InstanceService._start`): read
    it, refuse a held one, then one conditional UPDATE (`save_changes`: Conflict when another
    transaction took or released the lock since the read). True when this unit of work holds it."""
    current = u.instances.get(inst_id)
    if current is None or current.lock_op_id is not None:
        return current is not None and current.lock_op_id == op_id
    inst = copy.deepcopy(current)
    inst.lock_op_id = op_id
    try:
        u.instances.save_changes(inst, current)
    except Conflict:
        return False
    return True
