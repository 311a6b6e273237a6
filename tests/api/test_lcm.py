"""SOL003 v2.6.1 VNF lifecycle over HTTP: create, instantiate (seed-style body), show, scale out/in,
heal one VNFC (SOL002 body) and the entire VNF, terminate, delete."""

from __future__ import annotations

from typing import Any

from .conftest import MASTER_PW, WORKER_PW, Api, seed_body
from .test_packages import PKGS, assert_problem

INSTANCES = "/vnflcm/v1/vnf_instances"
OPS = "/vnflcm/v1/vnf_lcm_op_occs"


def vnfcs(inst: dict[str, Any], vdu: str | None = None) -> list[dict[str, Any]]:
    info = inst["instantiatedVnfInfo"]["vnfcResourceInfo"]
    return [v for v in info if vdu is None or v["vduId"] == vdu]


def scale_level(inst: dict[str, Any], aspect: str) -> int:
    return next(s["scaleLevel"] for s in inst["instantiatedVnfInfo"]["scaleStatus"] if s["aspectId"] == aspect)


async def test_full_lifecycle(onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, vnfd_id = onboarded

    # ---- create
    r = await api.c.post(INSTANCES, json={"vnfdId": vnfd_id, "vnfInstanceName": "k8s-1",
                                          "vnfInstanceDescription": "seed-style cluster"})
    assert r.status_code == 201, r.text
    inst = r.json()
    inst_id = inst["id"]
    assert r.headers["Location"].endswith(f"{INSTANCES}/{inst_id}")
    assert inst["instantiationState"] == "NOT_INSTANTIATED"
    assert inst["vnfdId"] == vnfd_id and inst["vnfPkgId"] == pkg_id
    assert inst["vnfInstanceName"] == "k8s-1"
    assert "instantiate" in inst["_links"]
    assert (await api.c.get(f"{PKGS}/{pkg_id}")).json()["usageState"] == "IN_USE"

    # ---- instantiate with the seed-002-shaped body
    r = await api.c.post(f"{INSTANCES}/{inst_id}/instantiate", json=seed_body())
    assert r.status_code == 202, r.text
    assert r.content == b""
    loc = r.headers["Location"]
    assert f"{OPS}/" in loc
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "COMPLETED", occ.get("error")
    assert occ["operation"] == "INSTANTIATE" and occ["vnfInstanceId"] == inst_id
    added = [v for v in occ["resourceChanges"]["affectedVnfcs"] if v["changeType"] == "ADDED"]
    assert sorted(v["vduId"] for v in added) == ["masterNode", "workerNode", "workerNode"]
    # The occurrence says it ran on the default (simulated) VIM.
    progress = " ".join(e["message"] for e in occ.get("vnfmProgress", []))
    assert "default" in progress.lower() or "simulat" in progress.lower(), progress
    # Secrets never come back.
    assert MASTER_PW not in str(occ) and WORKER_PW not in str(occ)

    # ---- show
    inst = await api.instance(inst_id)
    assert inst["instantiationState"] == "INSTANTIATED"
    assert {"terminate", "scale", "heal"} <= set(inst["_links"])
    info = inst["instantiatedVnfInfo"]
    assert info["flavourId"] == "simple"
    assert info["vnfState"] == "STARTED"
    assert {s["aspectId"]: s["scaleLevel"] for s in info["scaleStatus"]}["worker_instance"] == 0
    assert len(vnfcs(inst, "masterNode")) == 1 and len(vnfcs(inst, "workerNode")) == 2
    for v in vnfcs(inst):
        cr = v["computeResource"]
        assert cr["resourceId"] and cr["vimLevelResourceType"] == "OS::Nova::Server"
        (cp,) = v["vnfcCpInfo"]
        assert cp["cpdId"] == ("masterNode_CP1" if v["vduId"] == "masterNode" else "workerNode_CP2")
        addrs = cp["cpProtocolInfo"][0]["ipOverEthernet"]["ipAddresses"][0]["addresses"]
        assert addrs and addrs[0]
    ext_cpds = {c["cpdId"] for c in info["extCpInfo"]}
    assert ext_cpds == {"masterNode_CP1", "workerNode_CP2"}
    assert {e["id"] for e in info["extVirtualLinkInfo"]} == {
        "35d69de0-bf3b-4690-8724-16e9edb68b19", "fb60ddb1-8787-49cd-8439-d379a449b6fa"}
    assert isinstance(info["vnfVirtualLinkResourceInfo"], list)
    assert isinstance(info["virtualStorageResourceInfo"], list)
    assert {c["vnfcResourceInfoId"] for c in info["vnfcInfo"]} == {v["id"] for v in vnfcs(inst)}
    k8s = info["additionalParams"]["k8s_cluster_installation_param"]
    assert k8s["master_node"]["password"] == "***" and k8s["worker_node"]["password"] == "***"
    assert k8s["master_node"]["username"] == "ubuntu"
    # The seed's vimId is not registered: it ran on the simulator, whose VIM the entry now names.
    conn = inst["vimConnectionInfo"][0]
    assert conn["vimType"] == "simulator" and conn["id"] == "daa80cf2-9b73-4806-8176-56cd6fab8cea"
    conn_ids = {c["id"] for c in inst["vimConnectionInfo"]}
    handles = [v["computeResource"] for v in vnfcs(inst)] + [e["resourceHandle"] for e in info["extVirtualLinkInfo"]]
    assert handles and {h["vimConnectionId"] for h in handles} == {conn["id"]} <= conn_ids
    raw = (await api.c.get(f"{INSTANCES}/{inst_id}")).text
    assert MASTER_PW not in raw and WORKER_PW not in raw

    # The simulated cloud shows the servers.
    sim = (await api.c.get(f"/sim/v1/state/{inst_id}")).json()
    servers = {s["id"] for s in (sim["servers"].values() if isinstance(sim["servers"], dict) else sim["servers"])}
    assert {v["computeResource"]["resourceId"] for v in vnfcs(inst)} <= servers

    # ---- scale out ("numberOfSteps" as the seeds send it: a string)
    await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": "1"})
    inst = await api.instance(inst_id)
    assert len(vnfcs(inst, "workerNode")) == 3
    assert scale_level(inst, "worker_instance") == 1
    newest = max(vnfcs(inst, "workerNode"), key=lambda v: v["metadata"]["createdAt"])

    # ---- scale in: the newest worker goes
    occ = await api.run(inst_id, "scale", {"type": "SCALE_IN", "aspectId": "worker_instance", "numberOfSteps": "1"})
    removed = [v["id"] for v in occ["resourceChanges"]["affectedVnfcs"] if v["changeType"] == "REMOVED"]
    assert removed == [newest["id"]]
    inst = await api.instance(inst_id)
    assert len(vnfcs(inst, "workerNode")) == 2
    assert scale_level(inst, "worker_instance") == 0

    # ---- heal one VNFC (SOL002 body, vnfcInstanceId as a single string like the seeds)
    target = vnfcs(inst, "workerNode")[0]
    ip_before = target["vnfcCpInfo"][0]["cpProtocolInfo"][0]["ipOverEthernet"]["ipAddresses"][0]["addresses"]
    await api.run(inst_id, "heal", {"vnfcInstanceId": target["id"], "cause": "node not ready"})
    inst = await api.instance(inst_id)
    healed = next(v for v in vnfcs(inst) if v["id"] == target["id"])
    assert healed["computeResource"]["resourceId"] != target["computeResource"]["resourceId"]
    ip_after = healed["vnfcCpInfo"][0]["cpProtocolInfo"][0]["ipOverEthernet"]["ipAddresses"][0]["addresses"]
    assert ip_after == ip_before
    assert len(vnfcs(inst)) == 3

    # ---- heal entire (SOL003: empty body)
    servers_before = {v["computeResource"]["resourceId"] for v in vnfcs(inst)}
    occ = await api.run(inst_id, "heal", {})
    inst = await api.instance(inst_id)
    assert len(vnfcs(inst, "workerNode")) == 2 and len(vnfcs(inst, "masterNode")) == 1
    assert not servers_before & {v["computeResource"]["resourceId"] for v in vnfcs(inst)}

    # ---- delete while instantiated: 409
    assert_problem(await api.c.delete(f"{INSTANCES}/{inst_id}"), 409)

    # ---- terminate
    await api.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})
    inst = await api.instance(inst_id)
    assert inst["instantiationState"] == "NOT_INSTANTIATED"
    assert "instantiatedVnfInfo" not in inst
    assert (await api.c.get(f"/sim/v1/state/{inst_id}")).status_code in (200, 404)
    sim_all = (await api.c.get("/sim/v1/state")).json()
    assert not any(
        s.get("instance_id") == inst_id
        for s in (sim_all["servers"].values() if isinstance(sim_all["servers"], dict) else sim_all["servers"])
    )

    # ---- delete
    r = await api.c.delete(f"{INSTANCES}/{inst_id}")
    assert r.status_code == 204
    assert_problem(await api.c.get(f"{INSTANCES}/{inst_id}"), 404, inst_id)
    assert (await api.c.get(f"{PKGS}/{pkg_id}")).json()["usageState"] == "NOT_IN_USE"

    # ---- the occurrences stay listed
    r = await api.c.get(OPS, params={"filter": f"(eq,vnfInstanceId,{inst_id})"})
    ops = r.json()
    assert sorted(o["operation"] for o in ops) == ["HEAL", "HEAL", "INSTANTIATE", "SCALE", "SCALE", "TERMINATE"]
    assert all(o["operationState"] == "COMPLETED" for o in ops)
    assert all("operationParams" not in o for o in ops)  # excluded by default


async def test_instantiate_without_ext_virtual_links_or_vim(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    body = seed_body(ext_vls=False)
    body.pop("vimConnectionInfo")
    inst_id = await api.instantiated(vnfd_id, body)
    inst = await api.instance(inst_id)
    info = inst["instantiatedVnfInfo"]
    assert info["extVirtualLinkInfo"] == []
    assert len(info["vnfcResourceInfo"]) == 3


async def test_instantiation_level_and_storage_flavour(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id, seed_body(ext_vls=False, instantiationLevelId="instantiation_level_2"))
    inst = await api.instance(inst_id)
    assert len(vnfcs(inst, "workerNode")) > 2

    # simple_pv has a storage server VDU with a block volume.
    body = seed_body(ext_vls=False, flavourId="simple_pv")
    inst_id = await api.instantiated(vnfd_id, body)
    inst = await api.instance(inst_id)
    info = inst["instantiatedVnfInfo"]
    storage = vnfcs(inst, "storage_server")
    assert len(storage) == 1
    assert storage[0]["storageResourceIds"]
    vsr = {s["id"]: s for s in info["virtualStorageResourceInfo"]}
    assert set(storage[0]["storageResourceIds"]) <= set(vsr)
    assert all(s["storageResource"]["resourceId"] for s in vsr.values())


async def test_instance_list_and_selectors(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    a = await api.instantiated(vnfd_id, seed_body(ext_vls=False))
    b = await api.create_instance(vnfd_id, vnfInstanceName="second")
    r = await api.c.get(INSTANCES)
    docs = {d["id"]: d for d in r.json()}
    assert set(docs) == {a, b}
    assert "instantiatedVnfInfo" not in docs[a] and "vimConnectionInfo" not in docs[a]
    r = await api.c.get(INSTANCES, params={"filter": "(eq,instantiationState,INSTANTIATED)", "all_fields": ""})
    (doc,) = r.json()
    assert doc["id"] == a and doc["instantiatedVnfInfo"]["flavourId"] == "simple"
    r = await api.c.get(INSTANCES, params={"fields": "instantiatedVnfInfo/vnfState", "filter": f"(eq,id,{a})"})
    (doc,) = r.json()
    assert doc["instantiatedVnfInfo"] == {"vnfState": "STARTED"}
    r = await api.c.get(INSTANCES, params={"filter": "(eq,vnfInstanceName,second)"})
    assert [d["id"] for d in r.json()] == [b]
    r = await api.c.get(INSTANCES, params={"filter": "(eq,instantiatedVnfInfo/vnfcResourceInfo/vduId,masterNode)"})
    assert [d["id"] for d in r.json()] == [a]


async def test_modify_instance_info(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.patch(f"{INSTANCES}/{inst_id}", content=b'{"vnfInstanceName": "renamed", "metadata": {"a": 1}}',
                          headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 202, r.text
    occ = await api.wait_op(r.headers["Location"])
    assert occ["operation"] == "MODIFY_INFO" and occ["operationState"] == "COMPLETED", occ
    inst = await api.instance(inst_id)
    assert inst["vnfInstanceName"] == "renamed"
    assert inst["metadata"] == {"a": 1}
