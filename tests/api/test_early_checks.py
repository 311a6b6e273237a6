"""Mistakes that can be seen in the request and the VNFD are answered when the request arrives (4xx
naming the key), before any occurrence or VM exists: CP names, aspects, the storage server's CP and
volumes, files of the package."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .conftest import Api, seed_body

INSTANCES = "/vnflcm/v1/vnf_instances"
K = "additionalParams.k8s_cluster_installation_param"


def _with(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    d = out["additionalParams"]["k8s_cluster_installation_param"]
    *parents, last = path.split(".")
    for p in parents:
        d = d[p]
    d[last] = value
    return out


@pytest.mark.parametrize(("path", "value", "said"), [
    ("master_node.ssh_cp_name", "masterNode_CPX", "is neither a CP of flavour"),
    ("worker_node.nic_cp_name", "nope_CP", "is neither a CP of flavour"),
    ("master_node.cluster_cp_name", "vip_CPX", "is neither a CP of flavour"),
    ("worker_node.aspect_id", "no_such_aspect", "is not a scaling aspect of flavour"),
])
async def test_a_wrong_name_is_refused_before_anything_is_built(
        onboarded: tuple[Api, str, str], path: str, value: Any, said: str) -> None:
    api, _pkg, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"{INSTANCES}/{inst_id}/instantiate", json=_with(seed_body(), path, value))
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith(f"{K}.{path}: '{value}' ") and said in detail
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []  # no occurrence, no VM
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"


async def test_seed_floating_ip_names_are_accepted(onboarded: tuple[Api, str, str]) -> None:
    """The seeds' `<VDU>_FloatingIP` convention passes the check (it is resolved when the hook runs)."""
    api, _pkg, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    body = _with(seed_body(), "master_node.ssh_cp_name", "masterNode_FloatingIP")
    r = await api.c.post(f"{INSTANCES}/{inst_id}/instantiate", json=body)
    assert r.status_code == 202, r.text


async def test_kubespray_wrong_cp_name_is_refused_before_anything_is_built(api: Api) -> None:
    from .conftest import tacker_sample_csar

    pkg_id = await api.create_package()
    assert (await api.upload(pkg_id, tacker_sample_csar("kubespray"))).status_code == 202
    vnfd_id = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()["vnfdId"]
    inst_id = await api.create_instance(vnfd_id)
    k8s = {
        "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CPX",
                        "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "ubuntu"},
        "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                        "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "ubuntu"},
        "ansible": {"ip_address": "192.168.10.5", "username": "ubuntu", "password": "ubuntu",
                    "kubespray_root_path": "/home/ubuntu/kubespray",
                    "transferring_inventory_path": "/home/ubuntu/kubespray/inventory/mycluster"},
        "external_lb_param": {"ssh_cp_name": "externalLB_CP3", "ssh_username": "ubuntu", "ssh_password": "ubuntu",
                              "script_path": "Scripts/install_external_lb.sh"},
    }
    body = {"flavourId": "simple", "additionalParams": {"k8s_cluster_installation_param": k8s}}
    r = await api.c.post(f"{INSTANCES}/{inst_id}/instantiate", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(f"{K}.master_node.ssh_cp_name: 'masterNode_CPX' is neither a CP")
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []
