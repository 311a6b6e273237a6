"""Seed 002 on the simulated cloud: the Kubespray driver through the real LCM engine, the state
view (`kubespray.inventory`, `kubespray.runs` with `limit`, `external_lb.frontends`) after each
step."""

from __future__ import annotations

from typing import Any

from vnfm.domain.model import OpState

from .conftest import ANSIBLE, ANSIBLE_PW, INVENTORY, LB_PW, NODE_PW, OVERRIDES, PARAMS, Ks


def _groups(st: dict[str, Any]) -> dict[str, list[str]]:
    return st["kubespray"]["inventory"]


def _runs(st: dict[str, Any]) -> list[tuple[str, list[str] | None]]:
    return [(r["playbook"], r["limit"]) for r in st["kubespray"]["runs"]]


def _server(ks: Ks, inst_id: str, vnfc_id: str) -> dict[str, Any]:
    vnfc = ks.app.instances.get(inst_id).resources.by_id(vnfc_id)
    assert vnfc is not None
    server = ks.app.sim.server(vnfc.server_id)
    assert server is not None
    return server


async def test_instantiate_builds_the_cluster_through_the_ansible_server(ks: Ks) -> None:
    inst_id, occ = await ks.instantiate()
    inst = ks.app.instances.get(inst_id)
    st = ks.state(inst_id)
    assert _groups(st) == {"kube_control_plane": ["masternode-0"], "etcd": ["masternode-0"],
                           "kube_node": ["workernode-0", "workernode-1"],
                           "k8s_cluster": ["masternode-0", "workernode-0", "workernode-1"], "calico_rr": []}
    assert _runs(st) == [("cluster.yml", None)]
    assert st["kubespray"]["ansible_server"] == ANSIBLE and st["kubespray"]["inventory_path"] == INVENTORY
    nics = {n["name"]: n["addresses"] for n in st["kubernetes"]["nodes"]}
    master_ip = nics["masternode-0"][0]
    lb = st["external_lb"]
    assert lb["frontends"] == {"8383": [f"{master_ip}:6443"]}
    assert sorted(lb["pools"]["nodeport"]) == sorted(a[0] for a in nics.values())
    assert lb["kubeconfig_server"].endswith(":8383")  # the LB is the kubectl jump host
    # the VIM is reached through the LB, TLS verified: the LB's address is in the API certificate
    vim_id = inst.driver_state["kubespray"]["vim_id"]
    vim = ks.app.vims.get(vim_id)
    assert vim is not None and vim.vim_type == "kubernetes" and vim.name == "kubernetes_vim"
    # on the simulated cloud the VNFM reaches the cluster's API at the simulator's listener for it
    assert vim.access_info["authUrl"].endswith(f"/clusters/{inst_id}")
    assert "BEGIN CERTIFICATE" in vim.access_info["ssl_ca_cert"]
    sans = ks.app.sim.extras(inst_id)["k8s"]["cluster"]["cert_sans"]
    assert lb["address"] in sans
    # the Ansible server was checked before any VM existed; progress names playbook, hosts, time
    msgs = ks.messages(occ)
    check = next(i for i, m in enumerate(msgs) if "inventory path" in m and "claimed for this cluster" in m)
    assert check < next(i for i, m in enumerate(msgs) if m.startswith("deploying"))
    assert any(m.startswith("kubespray: cluster.yml finished in ") and
               "(hosts: masternode-0, workernode-0, workernode-1)" in m for m in msgs)
    # no secret anywhere in what the occurrence or the state view show
    text = str(occ.events) + str(st) + str(ks.operator()) + str(inst.vim_connection_info)
    for secret in (NODE_PW, ANSIBLE_PW, LB_PW, "password1", "password2"):
        assert secret not in text
    # the run key Ansible logged in with was taken off the nodes again
    assert not any(h.get("authorized_keys") for h in ks.app.sim.extras(inst_id)["k8s"]["hosts"].values())


async def test_scale_out_and_in_with_and_without_overrides(ks: Ks) -> None:
    app = ks.app
    inst_id, _ = await ks.instantiate()
    aspect = {"aspectId": "worker_instance", "numberOfSteps": "1"}

    # ---- scale out, no additionalParams: facts.yml, then scale.yml limited to the new node
    await ks.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", **aspect}))
    st = ks.state(inst_id)
    assert _runs(st)[-2:] == [("facts.yml", None), ("scale.yml", ["workernode-2"])]
    assert _groups(st)["kube_node"] == ["workernode-0", "workernode-1", "workernode-2"]
    assert len(st["external_lb"]["pools"]["nodeport"]) == 4
    assert {n["name"] for n in st["kubernetes"]["nodes"] if n["ready"]} >= {"workernode-2"}

    # ---- scale out with seed 002's whole-dict overrides: another Ansible server gets the inventory
    await ks.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", **aspect, "additionalParams": OVERRIDES}))
    st = ks.state(inst_id)
    assert _runs(st)[-1] == ("scale.yml", ["workernode-3"])
    assert st["kubespray"]["ansible_server"] == "10.10.0.23"
    assert set(ks.operator()) == {ANSIBLE, "10.10.0.23"}
    assert len(st["external_lb"]["pools"]["nodeport"]) == 5

    # ---- scale in with overrides: the newest worker leaves, non-interactively
    occ = await ks.done(app.instances.scale(inst_id, {"type": "SCALE_IN", **aspect, "additionalParams": OVERRIDES}))
    st = ks.state(inst_id)
    assert _runs(st)[-1] == ("remove-node.yml", None)
    assert "workernode-3" not in _groups(st)["kube_node"] and "workernode-3" not in _groups(st)["k8s_cluster"]
    assert len(st["external_lb"]["pools"]["nodeport"]) == 4
    assert any("remove-node.yml -e node=workernode-3 -e skip_confirmation=yes -e delete_nodes_confirmation=yes "
               "finished" in m for m in ks.messages(occ))

    # ---- scale in without: back on the first Ansible server, whose inventory is brought up to date
    await ks.done(app.instances.scale(inst_id, {"type": "SCALE_IN", **aspect}))
    st = ks.state(inst_id)
    assert st["kubespray"]["ansible_server"] == ANSIBLE
    assert _groups(st)["kube_node"] == ["workernode-0", "workernode-1"]
    assert sorted(n["name"] for n in st["kubernetes"]["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]
    inv = ks.operator()[ANSIBLE]["inventories"][INVENTORY]
    assert inv["groups"]["kube_node"] == ["workernode-0", "workernode-1"]
    assert len(st["external_lb"]["pools"]["nodeport"]) == 3

    # ---- terminate: both inventory directories go, nothing else on the Ansible servers
    await ks.done(app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert ks.operator() == {ANSIBLE: {"inventories": {}}, "10.10.0.23": {"inventories": {}}}


async def test_heal_a_dead_worker_then_the_entire_cluster_then_terminate(ks: Ks) -> None:
    app = ks.app
    inst_id, _ = await ks.instantiate()
    other_id, _ = await ks.instantiate(_other_cluster())
    inst = app.instances.get(inst_id)
    w0 = inst.resources.of_vdu("workerNode")[0]
    old_server = w0.server_id
    app.sim.inject(unreachable=[w0.server_id])  # the old VM is dead

    occ = await ks.done(app.instances.heal(inst_id, {"vnfcInstanceId": w0.id}))
    st = ks.state(inst_id)
    runs = st["kubespray"]["runs"]
    removal = next(r for r in runs if r["playbook"] == "remove-node.yml")
    assert removal["limit"] is None
    assert _runs(st)[-2:] == [("facts.yml", None), ("scale.yml", ["workernode-0"])]
    assert any("ungraceful removal" in m for m in ks.messages(occ))
    extra = app.sim.extras(inst_id)["k8s"]["kubespray"]["runs"][1]["extra_vars"]
    assert extra == {"node": "workernode-0", "skip_confirmation": "yes", "delete_nodes_confirmation": "yes",
                     "reset_nodes": "false",
                     "allow_ungraceful_removal": "true"}
    assert _server(ks, inst_id, w0.id)["id"] != old_server
    assert _groups(st)["kube_node"] == ["workernode-0", "workernode-1"]
    assert all(n["ready"] for n in st["kubernetes"]["nodes"])

    # ---- heal entire: rebuilt, inventory replaced, the VIM updated in place
    vim_id = app.instances.get(inst_id).driver_state["kubespray"]["vim_id"]
    old_vim = app.vims.get(vim_id)
    assert old_vim is not None
    await ks.done(app.instances.heal(inst_id, {}))
    st = ks.state(inst_id)
    assert _runs(st) == [("cluster.yml", None)]
    assert _groups(st)["k8s_cluster"] == ["masternode-0", "workernode-0", "workernode-1"]
    new_vim = app.vims.get(vim_id)
    assert new_vim is not None and new_vim.access_info["bearer_token"] != old_vim.access_info["bearer_token"]
    assert len([v for v in app.vims.list() if v.vim_type == "kubernetes"]) == 2  # this one and the other's
    assert st["external_lb"]["frontends"] == {"8383": [f"{_nic(st, 'masternode-0')}:6443"]}

    # ---- terminate: this cluster's inventory directory goes, the other cluster's stays
    await ks.done(app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert list(ks.operator()[ANSIBLE]["inventories"]) == [f"{INVENTORY}-2"]
    assert app.vims.get(vim_id) is None
    assert app.instances.get(other_id).instantiation_state.value == "INSTANTIATED"


def _nic(st: dict[str, Any], node: str) -> str:
    return next(n["addresses"][0] for n in st["kubernetes"]["nodes"] if n["name"] == node)


def _other_cluster() -> dict[str, Any]:
    from .conftest import params

    return params(ansible__transferring_inventory_path=f"{INVENTORY}-2", vim_name="other_vim")


async def test_inventory_path_of_another_cluster_is_refused_before_anything_is_created(ks: Ks) -> None:
    first, _ = await ks.instantiate()
    second, occ = await ks.instantiate(ok=False)
    assert occ.operation_state == OpState.FAILED_TEMP
    detail = occ.error["detail"]
    assert INVENTORY in detail and "another cluster" in detail and first in detail
    assert "nothing was created" in detail
    assert not (ks.app.sim.snapshot(second) or {}).get("servers")
    assert ANSIBLE_PW not in detail
    # the first cluster's inventory is untouched; the failed one can be rolled back cleanly
    await ks.wait(ks.app.instances.rollback(occ.id))
    assert ks.app.instances.op_get(occ.id).operation_state == OpState.ROLLED_BACK
    assert ks.operator()[ANSIBLE]["inventories"][INVENTORY]["owner"] == first


async def test_two_clusters_given_the_same_inventory_path_at_once_one_is_refused_before_its_vms(ks: Ks) -> None:
    app = ks.app
    a = app.instances.create({"vnfdId": ks.vnfd_id})
    b = app.instances.create({"vnfdId": ks.vnfd_id})
    body = {"flavourId": "simple", "additionalParams": PARAMS}
    occs = [app.instances.instantiate(a.id, body), app.instances.instantiate(b.id, body)]
    done = [await ks.wait(o) for o in occs]
    states = sorted(o.operation_state.value for o in done)
    assert states == ["COMPLETED", "FAILED_TEMP"]
    loser = next(o for o in done if o.operation_state == OpState.FAILED_TEMP)
    assert "another cluster" in loser.error["detail"]
    assert not (app.sim.snapshot(loser.vnf_instance_id) or {}).get("servers")
