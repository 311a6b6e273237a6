"""What the Kubespray driver refuses, and how a failed playbook run is reported."""

from __future__ import annotations

import copy

import pytest

from vnfm.adapters.infra.simulator.twin.operator import set_operator_host
from vnfm.domain.errors import BadRequest, UnprocessableEntity
from vnfm.domain.model import OpState

from .conftest import ANSIBLE, INVENTORY, OVERRIDES, ROOT_PATH, Ks, params


async def test_a_partial_override_dict_is_refused_naming_the_missing_keys(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    partial = copy.deepcopy(OVERRIDES)
    root = partial["k8s_cluster_installation_param"]
    del root["ansible"]["password"], root["ansible"]["kubespray_root_path"]
    ops_before = len(ks.app.instances.op_list())
    with pytest.raises(BadRequest) as e:
        ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                         "additionalParams": partial})
    assert e.value.status == 400
    assert "k8s_cluster_installation_param.ansible.kubespray_root_path: is required" in e.value.detail
    w0 = ks.app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    del root["ansible"]
    root["worker_node"].pop("ssh_cp_name")
    with pytest.raises(BadRequest, match=r"worker_node\.ssh_cp_name: is required"):
        ks.app.instances.heal(inst_id, {"vnfcInstanceId": w0.id, "additionalParams": partial})
    assert len(ks.app.instances.op_list()) == ops_before  # refused before an occurrence exists


async def test_an_aspect_id_not_in_the_flavour_is_refused_naming_the_key_before_anything_exists(ks: Ks) -> None:
    inst = ks.app.instances.create({"vnfdId": ks.vnfd_id})
    ops_before = len(ks.app.instances.op_list())
    with pytest.raises(UnprocessableEntity) as e:
        ks.app.instances.instantiate(inst.id, {"flavourId": "simple",
                                               "additionalParams": params(worker_node__aspect_id="no_such_aspect")})
    assert e.value.status == 422
    assert "k8s_cluster_installation_param.worker_node.aspect_id: 'no_such_aspect'" in e.value.detail
    assert "worker_instance" in e.value.detail  # the aspects the flavour has
    assert len(ks.app.instances.op_list()) == ops_before  # no occurrence
    assert not (ks.app.sim.snapshot(inst.id) or {}).get("servers")  # no VM, no stack
    assert not ks.state(inst.id).get("servers")
    assert str(ks.app.instances.get(inst.id).instantiation_state) == "NOT_INSTANTIATED"

    # a scale override's master_node is checked the same way (after the whole-dict rule)
    inst_id, _ = await ks.instantiate()
    bad = copy.deepcopy(OVERRIDES)
    bad["k8s_cluster_installation_param"]["master_node"] = {
        **params()["k8s_cluster_installation_param"]["master_node"], "aspect_id": "masters_typo"}
    ops_before = len(ks.app.instances.op_list())
    servers_before = len(ks.state(inst_id).get("servers") or [])
    assert servers_before > 0
    with pytest.raises(UnprocessableEntity, match=r"master_node\.aspect_id: 'masters_typo'"):
        ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                         "additionalParams": bad})
    assert len(ks.app.instances.op_list()) == ops_before
    assert len(ks.state(inst_id).get("servers") or []) == servers_before


async def test_shared_model_keys_the_kubespray_driver_never_acts_on_are_refused_naming_each(ks: Ks) -> None:
    storage = {"ssh_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "pw",
               "cinder_volume_setup_params": [{"volume_resource_id": "v", "mount_to": "/mnt/v"}],
               "nfs_server_setup_params": [{"export_dir": "/mnt/v", "export_to": "10.10.0.0/24"}]}
    registry = [{"connection_type": "0", "server": "10.10.0.9:5000"}]
    inst = ks.app.instances.create({"vnfdId": ks.vnfd_id})
    ops_before = len(ks.app.instances.op_list())
    body = params(storage_server=storage, private_registry_connection_info=registry,
                  master_node__cluster_vip="10.10.0.100", proxy__k8s_node_cidr="10.10.0.0/24")
    with pytest.raises(BadRequest) as e:
        ks.app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": body})
    assert e.value.status == 400  # not in the Kubespray driver's schema: unknown keys
    for key in ("storage_server", "private_registry_connection_info", "master_node.cluster_vip",
                "proxy.k8s_node_cidr"):
        assert f"k8s_cluster_installation_param.{key}: not a known key" in e.value.detail
    assert len(ks.app.instances.op_list()) == ops_before  # no occurrence

    # seed 002's body (with lcm-operation-user-data) stays accepted; a scale override is checked too
    inst_id, _ = await ks.instantiate()
    bad = copy.deepcopy(OVERRIDES)
    bad["k8s_cluster_installation_param"]["pv_registration_params"] = [
        {"pv_manifest_file_path": "Files/pv.yaml", "nfs_server_cp": "masterNode_CP1"}]
    with pytest.raises(BadRequest, match=r"installation_param\.pv_registration_params: not a known key"):
        ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                         "additionalParams": bad})


async def test_healing_the_master_of_a_single_master_cluster_is_refused(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    m0 = ks.app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
    with pytest.raises(UnprocessableEntity) as e:
        ks.app.instances.heal(inst_id, {"vnfcInstanceId": [m0.id]})
    assert e.value.status == 422
    assert "single control plane" in e.value.detail  # why
    assert "heal the entire VNF instead" in e.value.detail  # what to do
    # the master aspect scales (test_control_plane.py), but never to an even etcd size
    with pytest.raises(UnprocessableEntity, match="1 -> 2 masters: Kubespray's etcd needs an odd number"):
        ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "master_instance"})


async def test_no_kubespray_tree_on_the_ansible_server_is_found_before_any_vm(ks: Ks) -> None:
    set_operator_host(ks.app.sim, ANSIBLE, kubespray_roots=["/opt/kubespray"])
    inst_id, occ = await ks.instantiate(ok=False)
    assert occ.operation_state == OpState.FAILED_TEMP
    assert f"no Kubespray tree at {ROOT_PATH}" in occ.error["detail"]
    assert not (ks.app.sim.snapshot(inst_id) or {}).get("servers")


async def test_a_failed_playbook_names_the_task_and_the_end_of_its_output_without_secrets(ks: Ks) -> None:
    inst_id, _ = await ks.instantiate()
    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={"scale.yml": "kubernetes/node : Install kubelet"})
    occ = await ks.wait(ks.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    detail = occ.error["detail"]
    assert "kubespray scale.yml --limit workernode-2 failed after" in detail
    assert "TASK [kubernetes/node : Install kubelet]" in detail and "timed out" in detail
    assert "password2" not in detail and "password1" not in detail
    # fixed, then retried: the run goes through and the node joins
    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={})
    occ = await ks.done(ks.app.instances.retry(occ.id))
    runs = ks.state(inst_id)["kubespray"]["runs"]
    assert [r["limit"] for r in runs if r["playbook"] == "scale.yml"] == [["workernode-2"]]


async def test_a_failed_build_rolled_back_removes_the_claimed_inventory(ks: Ks) -> None:
    set_operator_host(ks.app.sim, ANSIBLE, failing_tasks={"cluster.yml": "kubernetes/control-plane : kubeadm init"})
    inst_id, occ = await ks.instantiate(ok=False)
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "kubespray cluster.yml failed after" in occ.error["detail"]
    assert "TASK [kubernetes/control-plane : kubeadm init]" in occ.error["detail"]
    assert list(ks.operator()[ANSIBLE]["inventories"]) == [INVENTORY]
    rolled = await ks.wait(ks.app.instances.rollback(occ.id))
    assert rolled.operation_state == OpState.ROLLED_BACK, rolled.error
    assert ks.operator()[ANSIBLE]["inventories"] == {}


async def test_a_scale_in_while_another_worker_is_dead_is_refused_before_anything_changes(ks: Ks) -> None:
    """remove-node.yml gathers the facts of every host: a dead worker that stays would make it
    UNREACHABLE (exit 4) after the drain; the driver says so first. Healing the dead one works
    (ungraceful removal: no facts), and then the scale-in goes through."""
    app = ks.app
    inst_id, _ = await ks.instantiate()
    await ks.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    w0 = app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    app.sim.inject(unreachable=[w0.server_id])
    runs_before = len(ks.state(inst_id)["kubespray"]["runs"])
    occ = await ks.wait(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    detail = occ.error["detail"]
    assert "workernode-0" in detail and "do not answer" in detail and "remove-node.yml" in detail
    assert "no playbook was run" in detail
    st = ks.state(inst_id)
    assert len(st["kubespray"]["runs"]) == runs_before
    assert not any(n.get("cordoned") for n in st["kubernetes"]["nodes"])
    rolled = await ks.wait(app.instances.rollback(occ.id))
    assert rolled.operation_state == OpState.ROLLED_BACK
    occ = await ks.done(app.instances.heal(inst_id, {"vnfcInstanceId": w0.id}))
    assert any("ungraceful removal" in m for m in ks.messages(occ))
    await ks.done(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance"}))
    runs = app.sim.extras(inst_id)["k8s"]["kubespray"]["runs"]
    removal = [r for r in runs if r["playbook"] == "remove-node.yml"][-1]
    assert removal["extra_vars"]["node"] == "workernode-2"
    assert "reset_nodes" not in removal["extra_vars"]  # graceful: every host answers now


async def test_a_scale_out_while_a_worker_is_dead_names_it_before_any_playbook(ks: Ks) -> None:
    """facts.yml (before scale.yml --limit) gathers the facts of every host: a dead worker is named."""
    app = ks.app
    inst_id, _ = await ks.instantiate()
    w1 = app.instances.get(inst_id).resources.of_vdu("workerNode")[1]
    app.sim.inject(unreachable=[w1.server_id])
    runs_before = len(ks.state(inst_id)["kubespray"]["runs"])
    occ = await ks.wait(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "node(s) workernode-1 of the cluster do not answer" in occ.error["detail"]
    assert "facts.yml gathers the facts of every host" in occ.error["detail"]
    assert len(ks.state(inst_id)["kubespray"]["runs"]) == runs_before
