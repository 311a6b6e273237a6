"""Seed 002 (Kubespray) through the stock client: the user guide's request bodies as written
(instantiate, scale out/in with and without additionalParams, heal a worker, heal entire,
terminate) against a vnfm on the simulated cloud, with the state view checked after each step
(GET /sim/v1/state/{id}: `kubespray.inventory`, `kubespray.runs`, `external_lb.frontends`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vnfm.examples import example_csar

from .conftest import Cli

pytestmark = pytest.mark.slow

NET = "1642ac54-642c-407c-9c7d-e94c55ba5d33"
INVENTORY = "/home/ubuntu/kubespray-2.16.0/inventory/mycluster"


def _link(link_id: str, cpd: str) -> dict[str, Any]:
    return {"id": link_id, "resourceId": NET, "extCps": [{"cpdId": cpd, "cpConfig": [{"linkPortId": link_id}]}]}


# seed 002's simple_kubernetes_param_file.json, as written (its '#' comments removed)
INSTANTIATE: dict[str, Any] = {
    "flavourId": "simple",
    "vimConnectionInfo": [{"id": "daa80cf2-9b73-4806-8176-56cd6fab8cea",
                           "vimId": "c3369b54-e376-4423-bb61-afd255900fea", "vimType": "openstack"}],
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "vim_name": "kubernetes_vim",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_FloatingIP",
                            "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "ubuntu",
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_FloatingIP",
                            "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "ubuntu"},
            "proxy": {"http_proxy": "http://user1:password1@host1:3128",
                      "https_proxy": "https://user2:password2@host2:3128"},
            "ansible": {"ip_address": "10.10.0.50", "username": "ubuntu", "password": "ubuntu",
                        "kubespray_root_path": "/home/ubuntu/kubespray-2.16.0",
                        "transferring_inventory_path": INVENTORY},
            "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "ubuntu",
                                  "ssh_password": "ubuntu", "script_path": "Scripts/install_external_lb.sh"},
        },
        "lcm-operation-user-data": "./UserData/lcm_user_data.py",
        "lcm-operation-user-data-class": "SampleUserData",
    },
    "extVirtualLinks": [_link("35d69de0-bf3b-4690-8724-16e9edb68b19", "masterNode_CP1"),
                        _link("fb60ddb1-8787-49cd-8439-d379a449b6fa", "workerNode_CP2"),
                        _link("dd462031-64d6-4fed-be90-b9c366223a12", "externalLB_CP3")],
}

# the scale/heal "with additionalParams" bodies' additionalParams
OVERRIDES: dict[str, Any] = {
    "k8s_cluster_installation_param": {
        "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_FloatingIP",
                        "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "workernode1"},
        "ansible": {"ip_address": "10.10.0.23", "username": "ansible", "password": "ansible",
                    "kubespray_root_path": "/home/ubuntu/kubespray-2.16.0", "transferring_inventory_path": INVENTORY},
        "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "external_lb_user",
                              "ssh_password": "externallb", "script_path": "Scripts/install_external_lb.sh"},
    }
}


def _state(cli: Cli, inst_id: str) -> dict[str, Any]:
    r = cli.http.get(f"/sim/v1/state/{inst_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def _runs(st: dict[str, Any]) -> list[tuple[str, list[str] | None]]:
    return [(r["playbook"], r["limit"]) for r in st["kubespray"]["runs"]]


def _op(cli: Cli, inst_id: str, *args: str) -> dict[str, Any]:
    before = set(cli.ops_of(inst_id))
    out = cli.run("vnflcm", *args).stdout
    assert "accepted" in out.lower(), out
    return cli.wait_new_op(inst_id, before)


def test_seed_002_kubespray_lifecycle_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    csar = tmp_path / "kubespray_csar.zip"
    csar.write_bytes(example_csar("kubespray"))
    pkg_id = cli.json("vnf", "package", "create")["ID"]
    cli.run("vnf", "package", "upload", "--path", str(csar), pkg_id)
    vnfd_id = cli.json("vnf", "package", "show", pkg_id)["VNFD ID"]
    inst_id = cli.json("vnflcm", "create", vnfd_id)["ID"]
    inst_file = tmp_path / "simple_kubernetes_param_file.json"
    inst_file.write_text(json.dumps(INSTANTIATE, indent=4))
    extra_file = tmp_path / "scale_with_additional_params.json"
    # the client merges the file into the request body: it holds {"additionalParams": ...}
    extra_file.write_text(json.dumps({"additionalParams": OVERRIDES}, indent=4))

    # ---- instantiate
    _op(cli, inst_id, "instantiate", inst_id, str(inst_file))
    st = _state(cli, inst_id)
    assert st["kubespray"]["inventory"]["kube_node"] == ["workernode-0", "workernode-1"]
    assert st["kubespray"]["inventory"]["kube_control_plane"] == ["masternode-0"]
    assert _runs(st) == [("cluster.yml", None)]
    assert list(st["external_lb"]["frontends"]) == ["8383"] and len(st["external_lb"]["pools"]["nodeport"]) == 3
    show = cli.json("vnflcm", "show", inst_id)
    k8s_vims = [v for v in show["VIM Connection Info"] if v["vimType"] == "kubernetes"]
    assert len(k8s_vims) == 1
    assert "password2" not in json.dumps(show)

    # ---- scale out (without, then with additionalParams), scale in (with, then without)
    aspect = ["--aspect-id", "worker_instance", "--number-of-steps", "1", inst_id]
    _op(cli, inst_id, "scale", "--type", "SCALE_OUT", *aspect)
    assert _runs(_state(cli, inst_id))[-2:] == [("facts.yml", None), ("scale.yml", ["workernode-2"])]
    _op(cli, inst_id, "scale", "--type", "SCALE_OUT", "--additional-param-file", str(extra_file), *aspect)
    st = _state(cli, inst_id)
    assert _runs(st)[-1] == ("scale.yml", ["workernode-3"]) and st["kubespray"]["ansible_server"] == "10.10.0.23"
    assert len(st["external_lb"]["pools"]["nodeport"]) == 5
    _op(cli, inst_id, "scale", "--type", "SCALE_IN", "--additional-param-file", str(extra_file), *aspect)
    _op(cli, inst_id, "scale", "--type", "SCALE_IN", *aspect)
    st = _state(cli, inst_id)
    assert st["kubespray"]["inventory"]["kube_node"] == ["workernode-0", "workernode-1"]
    assert [r for r in _runs(st) if r[0] == "remove-node.yml"] == [("remove-node.yml", None)] * 2
    assert len(st["external_lb"]["pools"]["nodeport"]) == 3

    # ---- a partial dict is refused, naming what is missing
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"additionalParams": {"k8s_cluster_installation_param": {
        "ansible": {"ip_address": "10.10.0.23"}}}}))
    bad = cli.run("vnflcm", "scale", "--type", "SCALE_OUT", "--additional-param-file", str(partial), *aspect,
                  check=False)
    assert bad.returncode != 0 and "ansible.username: is required" in bad.stdout + bad.stderr, bad

    # ---- heal a worker (SOL002 vnfcInstanceId); the master is refused, saying what to do
    vnfcs = cli.json("vnflcm", "show", inst_id)["Instantiated Vnf Info"]["vnfcResourceInfo"]
    worker = next(v for v in vnfcs if v["vduId"] == "workerNode")
    master = next(v for v in vnfcs if v["vduId"] == "masterNode")
    _op(cli, inst_id, "heal", inst_id, "--vnfc-instance", worker["id"])
    assert _runs(_state(cli, inst_id))[-1] == ("scale.yml", ["workernode-0"])
    bad = cli.run("vnflcm", "heal", inst_id, "--vnfc-instance", master["id"], check=False)
    assert bad.returncode != 0 and "heal the entire VNF" in bad.stdout + bad.stderr, bad

    # ---- heal entire: rebuilt with cluster.yml, the same Kubernetes VIM
    _op(cli, inst_id, "heal", inst_id)
    assert _runs(_state(cli, inst_id)) == [("cluster.yml", None)]
    after = [v for v in cli.json("vnflcm", "show", inst_id)["VIM Connection Info"] if v["vimType"] == "kubernetes"]
    assert [v["vimId"] for v in after] == [v["vimId"] for v in k8s_vims]

    # ---- terminate: the inventories go from both Ansible servers
    _op(cli, inst_id, "terminate", inst_id)
    hosts = cli.http.get("/sim/v1/state").json()["operator_hosts"]
    assert hosts == {"10.10.0.23": {"inventories": {}}, "10.10.0.50": {"inventories": {}}}
