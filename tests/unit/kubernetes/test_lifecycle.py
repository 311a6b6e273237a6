"""The Kubernetes driver on the simulated cloud's twin, driven by the real LCM engine."""

from __future__ import annotations

from vnfm.domain.model import OpState

from .conftest import MASTER_PW, WORKER_PW, K8s


def _backends(k8s: K8s, inst_id: str) -> dict[str, list[str]]:
    return k8s.view(inst_id)["haproxy"]


async def test_ha_cluster_full_lifecycle(k8s: K8s) -> None:
    app = k8s.app
    inst_id, occ = await k8s.instantiate("ha")
    inst = app.instances.get(inst_id)
    v = k8s.view(inst_id)
    masters = ["masternode-0", "masternode-1", "masternode-2"]
    assert sorted(v["nodes"]) == [*masters, "workernode-0", "workernode-1"]
    assert all(n["ready"] for n in v["nodes"].values())
    assert [m["name"] for m in v["etcd_members"]] == masters and all(m["healthy"] for m in v["etcd_members"])
    assert len(v["haproxy"]) == 3 and all(b == masters for b in v["haproxy"].values())
    assert v["endpoint"].endswith(":8383")
    # the seeds' pod_cidr with host bits is normalised, and said so
    assert any("192.168.3.0/16" in e["message"] and "192.168.0.0/16" in e["message"] for e in occ.events)
    # registered as a Kubernetes VIM, with its vimConnectionInfo entry
    vim_id = inst.driver_state["kubeadm"]["vim_id"]
    vim = app.vims.get(vim_id)
    assert vim is not None and vim.vim_type == "kubernetes" and vim.name == "kubernetes_vim"
    # the VIM points at the simulator's API listener for this cluster (tests/unit/kubernetes/test_kube_api.py)
    assert vim.access_info["authUrl"].startswith("https://127.0.0.1:")
    assert vim.access_info["authUrl"].endswith(f"/clusters/{inst_id}")
    assert "BEGIN CERTIFICATE" in vim.access_info["ssl_ca_cert"] and vim.access_info["bearer_token"]
    assert [e["vimId"] for e in inst.vim_connection_info if e["id"] == "kubernetes-cluster"] == [vim_id]
    assert v["vim"]["id"] == vim_id
    # secrets are nowhere in the events
    text = str(occ.events) + str(inst.vim_connection_info)
    for s in (MASTER_PW, WORKER_PW, vim.access_info["bearer_token"], "password1"):
        assert s not in text
    # host keys pinned per VNFC
    assert set(inst.driver_state["kubeadm"]["host_keys"]) == inst.resources.ids()

    # ---- scale out by 2: exactly the added VNFCs join, hosts entries updated once everywhere
    before = app.instances.get(inst_id).resources.ids()
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                 "numberOfSteps": 2}))
    inst = app.instances.get(inst_id)
    added = [x for x in inst.resources.vnfcs if x.id not in before]
    v = k8s.view(inst_id)
    assert sorted(v["nodes"]) == [*masters, "workernode-0", "workernode-1", "workernode-2", "workernode-3"]
    assert all(n["ready"] for n in v["nodes"].values())
    assert v["nodes"]["workernode-3"]["labels"]["node-role.kubernetes.io/worker"] == ""
    st = k8s.state(inst_id)
    blocks = [h["etc_hosts"]["vnfm-k8s"] for h in st["hosts"].values() if "etc_hosts" in h]
    assert len(blocks) == 7 and all(len(b) == 7 for b in blocks)
    assert len(added) == 2

    # ---- scale in by 1: the newest worker is drained and deleted; a pod moves away
    twin = k8s.twin(inst_id)
    twin.add_pod("web-1", "workernode-3", labels={"app": "web"})
    twin.add_pod("ds-1", "workernode-3", daemonset=True)
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance"}))
    v = k8s.view(inst_id)
    assert "workernode-3" not in v["nodes"] and "workernode-2" in v["nodes"]
    assert v["pods"]["default/web-1"]["node"] in {"workernode-0", "workernode-1", "workernode-2"}

    # ---- heal a worker: same node name, Ready again on a new server
    inst = app.instances.get(inst_id)
    w0 = inst.resources.of_vdu("workerNode")[0]
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id]}))
    inst = app.instances.get(inst_id)
    w0_now = inst.resources.by_id(w0.id)
    assert w0_now is not None and w0_now.server_id != w0.server_id
    v = k8s.view(inst_id)
    assert v["nodes"]["workernode-0"]["ready"]
    assert k8s.state(inst_id)["nodes"]["workernode-0"]["server_id"] == w0_now.server_id
    pins = inst.driver_state["kubeadm"]["host_keys"]
    server = app.sim.server(w0_now.server_id)
    assert server is not None and pins[w0.id] == server["host_key"]["public_key"]

    # ---- heal a master: etcd 3 healthy members, every HAProxy lists 3 backends
    m1 = inst.resources.of_vdu("masterNode")[1]
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [m1.id]}))
    v = k8s.view(inst_id)
    assert [m["name"] for m in v["etcd_members"]] == masters and all(m["healthy"] for m in v["etcd_members"])
    assert len(v["haproxy"]) == 3 and all(b == masters for b in v["haproxy"].values())
    assert v["nodes"]["masternode-1"]["ready"]
    m1_now = app.instances.get(inst_id).resources.by_id(m1.id)
    assert m1_now is not None and k8s.state(inst_id)["nodes"]["masternode-1"]["server_id"] == m1_now.server_id

    # ---- heal entire: same VIM id, new credentials (a new cluster CA; the VIM carries the CA of the
    # simulator's API listener, which stays)
    old = app.vims.get(vim_id)
    old_ca = k8s.state(inst_id)["cluster"]["ca_pem"]
    assert old is not None
    await k8s.done(app.instances.heal(inst_id, {}))
    new = app.vims.get(vim_id)
    assert new is not None and new.id == vim_id
    assert new.access_info["bearer_token"] != old.access_info["bearer_token"]
    assert k8s.state(inst_id)["cluster"]["ca_pem"] != old_ca
    assert len([x for x in app.vims.list() if x.vim_type == "kubernetes"]) == 1
    v = k8s.view(inst_id)
    assert len(v["nodes"]) == 6 and all(n["ready"] for n in v["nodes"].values())
    assert v["vim"]["id"] == vim_id

    # ---- terminate: the VIM is gone
    occ = await k8s.done(app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert occ.operation_state == OpState.COMPLETED
    assert app.vims.get(vim_id) is None
    assert not [e for e in app.instances.get(inst_id).vim_connection_info if e["id"] == "kubernetes-cluster"]


async def test_simple_flavour_single_master(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    v = k8s.view(inst_id)
    assert v["haproxy"] == {}
    assert v["endpoint"].endswith(":6443")
    assert [m["name"] for m in v["etcd_members"]] == ["masternode-0"]


async def test_parallel_joins_with_join_latency(k8s: K8s) -> None:
    """Concurrent joins each fetch a bootstrap token; all of them stay valid (as with kubeadm)."""
    inst_id, _ = await k8s.instantiate("simple")
    k8s.twin_config.join_time = 0.05
    occ = await k8s.done(k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                            "numberOfSteps": 3}))
    assert len(k8s.view(inst_id)["nodes"]) == 6
    assert occ.operation_state.value == "COMPLETED"
    # joined in parallel, not one after another (observed by the twin, not timed)
    assert k8s.twin_config.observed["max_joins_in_flight"] == 3


async def test_master_heal_removes_a_member_left_unstarted_by_a_failed_join(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("ha")
    masters = ["masternode-0", "masternode-1", "masternode-2"]
    # masternode-1's etcd member as a control-plane join that failed after `member add` leaves
    # it: never started, so etcd reports no name for it (only its peer URL)
    def unstart(st: dict) -> str:
        m = st["etcd"]["members"].pop("masternode-1")
        st["etcd"]["members"][""] = {**m, "name": "", "healthy": False}
        return str(m["peer_url"])

    peer_url = k8s.twin(inst_id).tx(unstart)
    m1 = app.instances.get(inst_id).resources.of_vdu("masterNode")[1]
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [m1.id]}))
    members = k8s.view(inst_id)["etcd_members"]
    assert [m["name"] for m in members] == masters and all(m["healthy"] for m in members)
    assert [m["peer_url"] for m in members if m["name"] == "masternode-1"] == [peer_url]


async def test_ha_vips_are_reserved_through_the_cloud_and_never_shared(k8s: K8s) -> None:
    """Two HA clusters on one network: each VIP is an address the simulated cloud records as taken
    for its instance (never a port's, never the other's), released with the VNF's resources."""
    app = k8s.app
    a, _ = await k8s.instantiate("ha")
    b, _ = await k8s.instantiate("ha")
    vips = [k8s.view(i)["endpoint"].rsplit(":", 1)[0] for i in (a, b)]
    assert vips[0] != vips[1]
    for inst_id, vip in zip((a, b), vips, strict=True):
        dep = app.sim.snapshot(inst_id)["deployments"][0]
        assert vip in {r["address"] for r in dep["reservations"]}, dep["reservations"]
        ports = {ip for v in app.instances.get(inst_id).resources.vnfcs for c in v.cps for ip in c.ip_addresses}
        assert vip not in ports
    await k8s.done(app.instances.terminate(a, {"terminationType": "FORCEFUL"}))
    assert app.sim.snapshot(a) in ({}, None) or not app.sim.snapshot(a).get("deployments")
