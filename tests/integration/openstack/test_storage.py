"""Cinder volumes, with the example package's simple_pv flavour (masters and workers in
AutoScalingGroups, a storage server with an OS::Cinder::Volume on block_device_mapping_v2): the
volume is reported as the storage server's virtual storage; healing the storage server keeps the
volume (attached to the new server); healing with `keep_storage=False` replaces it; terminate
deletes it. The local cloud's Cinder has the fake volume driver (ci/openstack/etc/cinder.conf)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, stack_name_of
from vnfm.domain.model import Vim
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service.ports import InfraContext

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]

COUNTS = {"masterNode": 1, "workerNode": 2, "storage_server": 1}


def _storage(res: VnfResources) -> Vnfc:
    (server,) = res.of_vdu("storage_server")
    return server


def _attached(cloud: SdkCloud, volume_id: str) -> list[str]:
    vol = cloud.get_volume(volume_id)
    assert vol is not None, f"Cinder has no volume {volume_id}"
    assert vol["status"] == "in-use", f"volume {volume_id} is {vol['status']}"
    return [str(a.get("server_id")) for a in vol.get("attachments") or []]


async def test_volume_reported_kept_on_heal_replaced_on_request(
    os_vim: Vim, os_cloud: SdkCloud, k8s_package: tuple[Any, Any], network_id: str, vnfd_image: str
) -> None:
    if not [s for s in os_cloud.conn.block_storage.services() if s.binary == "cinder-volume" and s.state == "up"]:
        pytest.fail("the local OpenStack has no cinder-volume up (ci/openstack/bringup.sh starts it)")
    vnfd, files = k8s_package
    cps = ("masterNode_CP1", "workerNode_CP2", "storage_server_CP")
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()),
        op_id=str(uuid.uuid4()),
        vnfd=vnfd,
        flavour=vnfd.flavour("simple_pv"),
        package=files,
        vim=os_vim,
        ext_virtual_links=[
            {"id": "ext-1", "resourceId": network_id, "extCps": [{"cpdId": cp} for cp in cps]},
        ],
    )
    driver = HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)
    try:
        res = await driver.deploy(ctx, COUNTS)
        ctx.resources = res
        assert res.counts() == COUNTS
        storage = _storage(res)
        (vol,) = storage.storages
        assert vol.virtual_storage_desc_id == "storage_server_volume" and vol.size_gb == 1.0
        assert _attached(os_cloud, vol.volume_id) == [storage.server_id]

        # heal the storage server: new server, same volume, attached to it
        res = await driver.heal(ctx, [storage.id], keep_storage=True)
        ctx.resources = res
        healed = _storage(res)
        assert healed.id == storage.id and healed.server_id != storage.server_id
        assert [s.volume_id for s in healed.storages] == [vol.volume_id]
        assert _attached(os_cloud, vol.volume_id) == [healed.server_id]

        # heal without keeping the storage: a new volume replaces the old one
        res = await driver.heal(ctx, [storage.id], keep_storage=False)
        ctx.resources = res
        again = _storage(res)
        (new_vol,) = again.storages
        assert new_vol.volume_id != vol.volume_id
        assert _attached(os_cloud, new_vol.volume_id) == [again.server_id]
        assert os_cloud.get_volume(vol.volume_id) is None, "the replaced volume is deleted"
    finally:
        await driver.undeploy(ctx)
    assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
    assert os_cloud.get_volume(new_vol.volume_id) is None, "terminate deletes the volume"
