"""Seed 000's HA cluster (Tacker's `complex` flavour: three masters behind a keepalived VIP whose
address is the BaseHOT's own port `vip_CP`, not a CP of a VDU) completes on the simulated cloud:
the simulator keeps an address for the port as Heat would create it (issue 22, item 6)."""

from __future__ import annotations

import copy
from typing import Any

from .conftest import Api, tacker_sample_csar

NET = "71a3fbd1-f31e-4c2c-b0e2-26267d64a9ee"
IP_OVER_ETH = [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]
# Tacker's complex_kubernetes_param_file.json (mgmt-driver-for-ha-k8s user guide), as the seed's heal
# guide runs it: cluster_cp_name names the BaseHOT's vip_CP.
HA_BODY: dict[str, Any] = {
    "flavourId": "complex",
    "vimConnectionInfo": [{"id": "3cc2c4ff-525c-48b4-94c9-29247223322f",
                           "vimId": "05ef7ca5-7e32-4a6b-a03d-52f811f04496", "vimType": "openstack"}],
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "script_path": "Scripts/install_k8s_cluster.sh",
            "vim_name": "kubernetes_vim_complex",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "ubuntu",
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24",
                            "cluster_cp_name": "vip_CP"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "ubuntu"},
        },
        "lcm-operation-user-data": "./UserData/k8s_cluster_user_data.py",
        "lcm-operation-user-data-class": "KubernetesClusterUserData",
    },
    "extVirtualLinks": [
        {"id": "net0_master", "resourceId": NET,
         "extCps": [{"cpdId": "masterNode_CP1", "cpConfig": IP_OVER_ETH}]},
        {"id": "net0_worker", "resourceId": NET,
         "extCps": [{"cpdId": "workerNode_CP2", "cpConfig": IP_OVER_ETH}]},
    ],
}


async def _onboard(api: Api) -> str:
    pkg_id = await api.create_package()
    r = await api.upload(pkg_id, tacker_sample_csar("kubeadm"))
    assert r.status_code == 202, r.text
    return str((await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()["vnfdId"])


async def test_seed_000_ha_body_with_vip_cp_completes_on_the_simulated_cloud(api: Api) -> None:
    vnfd_id = await _onboard(api)
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.run(inst_id, "instantiate", copy.deepcopy(HA_BODY))
    events = " | ".join(e["message"] for e in api.core.instances.op_get(occ["id"]).events)
    assert "BaseHOT port vip_CP: network 'net0' is not one of the simulated cloud's" in events
    dep = api.core.sim.deployment(inst_id)
    vip = dep["reservations"]["control-plane-vip"]
    assert vip["cp_name"] == "vip_CP"
    masters = [v for v in (await api.instance(inst_id))["instantiatedVnfInfo"]["vnfcResourceInfo"]
               if v["vduId"] == "masterNode"]
    assert len(masters) == 3
    state = api.core.sim.instance_state(inst_id)
    master_nets = {p["network_id"] for p in state["ports"].values() if p.get("cpd_id") == "masterNode_CP1"}
    assert master_nets == {vip["network_id"]} == {NET}  # the VIP is on the masters' network, no port has it
    assert all(vip["address"] not in [f["ip_address"] for f in p.get("fixed_ips", [])] for p in state["ports"].values())
    await api.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})


async def test_a_vip_port_on_a_network_the_cloud_has_goes_there(api: Api) -> None:
    """A network the template names that the simulated cloud has (by name) is the one used."""
    api.core.sim.create_network("net0", "10.77.0.0/24", network_id="net0-id")
    vnfd_id = await _onboard(api)
    inst_id = await api.create_instance(vnfd_id)
    await api.run(inst_id, "instantiate", copy.deepcopy(HA_BODY))
    vip = api.core.sim.deployment(inst_id)["reservations"]["control-plane-vip"]
    assert vip["network_id"] == "net0-id" and vip["address"].startswith("10.77.0.")
